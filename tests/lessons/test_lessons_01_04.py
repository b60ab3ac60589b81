"""Lessons 01-04: what the exercises' texts claim agrees with what torch really does."""

from __future__ import annotations

import re

import torch
import torch.nn.functional as F

from course_helpers.lessons import get


# ----------------------------------------------------------------------------------- lesson 01
def test_01_float_compare_matches_torch():
    x = torch.tensor(0.3) - torch.tensor(0.1)
    y = torch.tensor(0.2)
    truths = (bool(x == y), torch.allclose(x, y))
    key = {(True, False): "a", (False, True): "b", (True, True): "c", (False, False): "d"}
    assert get("01.float_compare").reference == key[truths] == "b"


# ----------------------------------------------------------------------------------- lesson 02
def test_02_label_dtype_hint_does_not_claim_int64_is_the_only_dtype():
    # cross_entropy takes uint8 class indices as well as int64 ones (the lesson shows both).
    logits = torch.zeros(4, 3)
    for dtype in (torch.int64, torch.uint8):
        F.cross_entropy(logits, torch.tensor([0, 2, 1, 0], dtype=dtype))
    first_hint = get("02.quiz_label_dtype").hints[0]
    assert not re.search(r"must be int64", first_hint, re.IGNORECASE), first_hint
    assert "uint8" in first_hint, first_hint
