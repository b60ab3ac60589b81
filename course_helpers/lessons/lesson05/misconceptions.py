"""Typical wrong answers to lesson 05's exercises (autograd graphs)."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Misconception


def _intermediate_retain_grad_too_late():
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(-1.0, requires_grad=True)
    u = a * b
    f = u * a + u
    f.backward()
    u.retain_grad()  # after the backward pass: u.grad stays None, as without the call
    return u


def _intermediate_as_new_leaf():
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(-1.0, requires_grad=True)
    u = (a * b).detach().requires_grad_(True)
    f = u * a + u
    f.backward()
    return u


def _leaf_instead_of_intermediate():
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(-1.0, requires_grad=True)
    u = a * b
    u.retain_grad()
    f = u * a + u
    f.backward()
    return a


def _cube_vjp_sum(x, v):
    x = x.clone().requires_grad_(True)
    (x**3).sum().backward()
    return x.grad


def _cube_vjp_mean(x, v):
    x = x.clone().requires_grad_(True)
    (x**3).mean().backward()
    return x.grad


def _cube_vjp_v_twice(x, v):
    x = x.clone().requires_grad_(True)
    (x**3).backward(gradient=v)
    return v * x.grad


def _difference(kind: str):
    t = torch.tensor(2.0, dtype=torch.float64)
    h = 1e-3
    if kind == "forward":
        return ((t + h) ** 3 - t**3) / h
    if kind == "over h":
        return ((t + h) ** 3 - (t - h) ** 3) / h
    t = t.float()
    return ((t + h) ** 3 - (t - h) ** 3) / (2 * h)


def _hook(where: str):
    a = torch.tensor(2.0, requires_grad=True)
    u = a**2
    if where == "u":
        u.register_hook(lambda grad: grad / 2)
    f = u + 3 * a
    if where == "a":
        a.register_hook(lambda grad: grad / 2)
    f.backward()
    if where == "after":
        u.register_hook(lambda grad: grad / 2)
    return u if where == "u" else a


MISCONCEPTIONS = [
    # --- 05.quiz_vjp_shape ---
    Misconception(
        exercise_id="05.quiz_vjp_shape",
        label="shape of the input",
        build_answer=lambda: (3,),
        message=(
            "that is the shape of a, the input. The vector v in backward(gradient=v) holds one "
            "weight per element of the tensor you call backward on."
        ),
        hint=(
            "The vector passed to backward weighs the elements of which tensor: the input or the "
            "output?"
        ),
    ),
    Misconception(
        exercise_id="05.quiz_vjp_shape",
        label="shape of the Jacobian or matrix",
        build_answer=lambda: (4, 3),
        message=(
            "That is the shape of m (and of the Jacobian of o with respect to a). backward never "
            "takes the Jacobian: it takes the vector that multiplies it from the left."
        ),
        hint="Does backward take the whole Jacobian, or a vector that multiplies it?",
    ),
    Misconception(
        exercise_id="05.quiz_vjp_shape",
        label="a scalar",
        build_answer=lambda: (),
        message=(
            "A 0-d gradient is only right when the output itself is a scalar, and then you need no "
            "gradient= at all. Here the output is a vector."
        ),
        hint="Is the output o a scalar here, or a vector?",
    ),
    # --- 05.hand_chain_rule ---
    Misconception(
        exercise_id="05.hand_chain_rule",
        label="power rule without the factor 2",
        build_answer=lambda: torch.tensor([-3.0, 3.25]),
        message=(
            "∂f/∂b is right. In ∂f/∂a the power rule was half-applied: the derivative of a² brings "
            "down the exponent as a factor."
        ),
        hint="What is the derivative of a² with respect to a?",
    ),
    Misconception(
        exercise_id="05.hand_chain_rule",
        label="the + b term forgotten",
        build_answer=lambda: torch.tensor([-6.0, 2.25]),
        message=(
            "∂f/∂a is right. In ∂f/∂b only the first term was differentiated: the lone b at the "
            "end of f contributes to ∂f/∂b too."
        ),
        hint="Which terms of f contain b?",
    ),
    Misconception(
        exercise_id="05.hand_chain_rule",
        label="b dropped as a constant",
        build_answer=lambda: torch.tensor([3.0, 3.25]),
        message=(
            "When differentiating with respect to a, b is a constant factor: it stays in the "
            "product instead of disappearing."
        ),
        hint="When you differentiate with respect to a, what happens to a constant factor b?",
    ),
    Misconception(
        exercise_id="05.hand_chain_rule",
        label="partials in the wrong order",
        build_answer=lambda: torch.tensor([3.25, -6.0]),
        message=(
            "Both partials are right, but in the wrong order: the tensor lists ∂f/∂a first, then "
            "∂f/∂b."
        ),
        hint="Which partial derivative does the task list first?",
    ),
    # --- 05.keep_intermediate_grad ---
    Misconception(
        exercise_id="05.keep_intermediate_grad",
        label="no retain_grad (or after backward)",
        build_answer=_intermediate_retain_grad_too_late,
        message=(
            "u's gradient was not kept: after the backward pass only leaves keep a gradient. u is "
            "an intermediate result, so autograd passes its gradient on and forgets it unless you "
            "ask it to keep it, and you must ask before the backward pass runs: asking afterwards "
            "is too late."
        ),
        hint=(
            "How do you ask autograd to keep the gradient of a tensor that is not a leaf, and when?"
        ),
        cause=(
            "by the time retain_grad() runs, the backward pass is over and u's gradient is gone; "
            "called before backward(), it keeps the gradient that pass computes."
        ),
        evidence=("order:backward<retain_grad",),
    ),
    Misconception(
        exercise_id="05.keep_intermediate_grad",
        label="u made a new leaf",
        build_answer=_intermediate_as_new_leaf,
        message=(
            "Your u is a leaf: it got a gradient, but it is cut off from a and b, so their "
            "gradients lose the path through u. Keep u in the graph and ask autograd to keep its "
            "gradient."
        ),
        hint="Is your u still the result of a and b in the graph?",
        cause=(
            "Detaching u (or building it with torch.tensor) makes it a new leaf, cut off from a "
            "and b."
        ),
        evidence=("call:detach|tensor",),
    ),
    Misconception(
        exercise_id="05.keep_intermediate_grad",
        label="answered with the leaf a",
        build_answer=_leaf_instead_of_intermediate,
        message=(
            "This is the leaf a (its values and its gradient ∂f/∂a). The exercise asks for the "
            "intermediate u itself, with its own gradient ∂f/∂u."
        ),
        hint="Which tensor does the task ask you to hand in?",
    ),
    # --- 05.cube_vjp ---
    Misconception(
        exercise_id="05.cube_vjp",
        label="sum() instead of gradient=v",
        build_answer=lambda: _cube_vjp_sum,
        message=(
            "Your gradient is the product with a vector of ones: v had no effect on it. Pass v to "
            "the backward pass as the gradient of y."
        ),
        hint="Where does v enter your computation of the gradient?",
        cause=(
            "y.sum().backward() is the vector-Jacobian product with a vector of ones: it ignores "
            "v. Pass v to backward as the gradient of y."
        ),
        evidence=("call:sum",),
    ),
    Misconception(
        exercise_id="05.cube_vjp",
        label="mean() instead of gradient=v",
        build_answer=lambda: _cube_vjp_mean,
        message=(
            "Your gradient is the product with a constant vector, 1/n in every element: v had no "
            "effect on it. The backward pass can take v itself as the gradient of y."
        ),
        hint="Where does v enter your computation of the gradient?",
        cause=(
            "y.mean().backward() weighs every element with 1/n: it is the product with a constant "
            "vector, not with v."
        ),
        evidence=("call:mean",),
    ),
    Misconception(
        exercise_id="05.cube_vjp",
        label="v applied twice",
        build_answer=lambda: _cube_vjp_v_twice,
        message=(
            "Your gradient holds v twice: every element is the expected one times v once more. The "
            "vector-Jacobian product multiplies by v once."
        ),
        hint="After the backward pass with v, is x's gradient already the finished product?",
        cause=(
            "backward(gradient=v) already multiplies by v: x.grad is the finished product. "
            "Multiplying by v again counts it twice."
        ),
        evidence=("kw:gradient",),
    ),
    # --- 05.central_difference ---
    Misconception(
        exercise_id="05.central_difference",
        label="forward difference",
        build_answer=lambda: _difference("forward"),
        message=(
            "That is the forward difference, which steps only to the right of t. A central "
            "difference takes one step to each side of t, and its error is much smaller."
        ),
        hint="A central difference: at which two points do you evaluate the function?",
    ),
    Misconception(
        exercise_id="05.central_difference",
        label="divided by h instead of 2h",
        build_answer=lambda: _difference("over h"),
        message=(
            "The two points t - h and t + h are 2h apart: the difference of the values is divided "
            "by the distance between the points."
        ),
        hint="How far apart are t - h and t + h?",
    ),
    Misconception(
        exercise_id="05.central_difference",
        label="computed in float32",
        build_answer=lambda: _difference("float32"),
        message=(
            "Your estimate is float32: finite differences subtract two nearly equal numbers, which "
            "loses digits, and float32 keeps only about 7 significant digits, so the estimate is "
            "much noisier. Make t a float64 tensor, as the task says."
        ),
        hint=(
            "Which dtype does the task ask t to have, and why does it matter for a difference of "
            "nearly equal numbers?"
        ),
    ),
    # --- 05.hook_halve ---
    Misconception(
        exercise_id="05.hook_halve",
        label="hook after backward or returning None",
        build_answer=lambda: _hook("after"),
        message=(
            "a's gradient is unchanged, as if nothing halved the gradient through u. Whatever "
            "changes that gradient must be set up before the backward pass runs through u, and "
            "must hand back the new gradient."
        ),
        hint="When does the backward pass go through u, and what must be ready by then?",
        cause=(
            "A tensor hook runs while backward() passes through u, so it must be registered before "
            "backward(); and it changes the gradient only by returning the new one (a hook that "
            "returns None leaves it as it was)."
        ),
        evidence=("call:register_hook",),
    ),
    Misconception(
        exercise_id="05.hook_halve",
        label="hook on the leaf a",
        build_answer=lambda: _hook("a"),
        message=(
            "a's whole gradient was halved, including the part that comes through 3 * a. Only the "
            "gradient flowing back through u should be halved."
        ),
        hint="Which part of a's gradient comes through u, and which through 3 * a?",
        cause=(
            "A hook on a (or on f) halves a's whole gradient, including the part that comes "
            "through 3 * a: hook u."
        ),
        evidence=("call:register_hook",),
    ),
    Misconception(
        exercise_id="05.hook_halve",
        label="answered with u",
        build_answer=lambda: _hook("u"),
        message=(
            "Your answer is u, an intermediate: its gradient is not kept. The answer is a, the "
            "leaf whose gradient shows the effect of halving the gradient through u."
        ),
        hint="Which tensor's gradient shows the effect: the intermediate's, or the leaf's?",
    ),
]

# more typical wrong answers (issue 12: at least three per exercise)
MISCONCEPTIONS += [
    Misconception(
        exercise_id="05.integer_requires_grad",
        label="no error: requires_grad is only a flag",
        build_answer=lambda: None,
        message=(
            "requires_grad is checked when the tensor is made, not later: torch.arange(3) holds "
            "integers, and a gradient of an integer tensor makes no sense, so PyTorch refuses "
            "right away. Run the line and read the last line of the error."
        ),
        hint="Can an integer tensor have a gradient at all?",
    ),
]
