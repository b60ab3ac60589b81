"""Reports that say who wrote them: an HMAC-SHA256 of every ``--json`` and ``--per-student``
report, with a key the instructor holds, so that ``grade merge`` accepts only what a grader
with that key wrote.

The key is a file (``--key-file``, or ``COURSE_GRADING_KEY_FILE``): at least 16 bytes,
made with 32 random bytes (mode 0600) by the first ``grade`` that names a file that does not
exist yet. Every shard of a class and their merge must name the same file. The grader reads
it before any submission runs and keeps it in memory; kernels never see the file inside the
sandbox (it is refused where the sandbox would show it). Without a key file, a run signs
with a key of its own that it forgets when it ends: its reports can then be read but never
merged.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

from course_helpers.errors import CourseError

KEY_ENV = "COURSE_GRADING_KEY_FILE"
ALGORITHM = "hmac-sha256"
MIN_KEY_BYTES = 16


class Key:
    """A signing key and a short public id for it (the first 16 hex digits of its hash)."""

    def __init__(self, secret: bytes, source: str):
        self._secret = secret
        self.source = source  # the file it came from, or "" for a key of this run only
        self.id = hashlib.sha256(b"course-grading-key\0" + secret).hexdigest()[:16]

    def sign(self, body: dict) -> dict:
        """``body`` with a ``signature`` entry over everything else in it."""
        value = hmac.new(self._secret, canonical(body), hashlib.sha256).hexdigest()
        return {**body, "signature": {"alg": ALGORITHM, "key": self.id, "value": value}}

    def problem(self, data: dict) -> str:
        """Why ``data`` was not signed with this key ("" when it was)."""
        signature = data.get("signature")
        if not isinstance(signature, dict) or signature.get("alg") != ALGORITHM:
            return "it carries no signature (it was not written by the grader)"
        if signature.get("key") != self.id:
            return (
                "it was signed with another key (every shard and the merge must name the "
                "same --key-file)"
            )
        body = {k: v for k, v in data.items() if k != "signature"}
        wanted = hmac.new(self._secret, canonical(body), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(wanted, str(signature.get("value"))):
            return "its signature does not match its content (it was edited after grading)"
        return ""


def read_file(path, what: str, limit_mb: int) -> bytes:
    """The bytes of the regular file ``path`` (links followed), at most ``limit_mb`` MiB;
    a ``CourseError`` naming ``what`` otherwise. Never blocks: a FIFO is refused."""
    import stat

    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as err:
        raise CourseError(f"{what} {path}: cannot be read ({err.strerror}).") from None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise CourseError(f"{what} {path}: not a regular file; name a file.")
        data = bytearray()
        while len(data) <= limit_mb * 2**20:
            chunk = os.read(handle, 1 << 20)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(handle)
    if len(data) > limit_mb * 2**20:
        raise CourseError(f"{what} {path}: larger than {limit_mb} MiB, not one of ours.")
    return bytes(data)


def canonical(body: dict) -> bytes:
    """The bytes that are signed: ``body`` as sorted, compact, ASCII JSON."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def run_key() -> Key:
    """A key of this run only (no key file given)."""
    return Key(secrets.token_bytes(32), "")


def load_key(path: str | os.PathLike, create: bool = True) -> Key:
    """The key in ``path``; with ``create``, a new random one is written there first when
    the file does not exist (safe when shards start at once: only one of them makes it)."""
    target = Path(path)
    if create and not target.exists():
        partial = target.with_name(f".{target.name}.{secrets.token_hex(4)}")
        try:
            handle = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(handle, "wb") as file:
                file.write(secrets.token_bytes(32))
            try:
                os.link(partial, target)  # fails if another shard made it first: use theirs
            except FileExistsError:
                pass
        except OSError as err:
            raise CourseError(f"--key-file {path}: cannot create it ({err.strerror}).") from None
        finally:
            partial.unlink(missing_ok=True)
    secret = read_file(target, "--key-file", 1)
    if len(secret) < MIN_KEY_BYTES:
        raise CourseError(
            f"--key-file {path}: holds {len(secret)} bytes, fewer than {MIN_KEY_BYTES}: not a "
            "grading key (name a new file and the grader makes one)."
        )
    return Key(secret, str(target))
