"""Checked exercises for lesson 05: autograd graphs."""

from __future__ import annotations

import torch

from course_helpers.lessons.model import Exercise

LESSON = "05_autograd_graphs"


def _hand_chain_rule():
    # f = a**2 * b + b at a = 1.5, b = -2: df/da = 2ab, df/db = a**2 + 1
    a, b = 1.5, -2.0
    return torch.tensor([2 * a * b, a**2 + 1])


def _kept_intermediate():
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(-1.0, requires_grad=True)
    u = a * b
    u.retain_grad()
    f = u * a + u
    f.backward()
    return u


def _cube_vjp(x, v):
    return 3 * x**2 * v


def _cube_vjp_cases(g):
    return [
        (torch.randn(5, generator=g), torch.randn(5, generator=g)),
        (torch.randn(2, 3, generator=g), torch.randn(2, 3, generator=g)),
        (torch.randn(1, generator=g), torch.randn(1, generator=g)),
        (torch.randn(0, generator=g), torch.randn(0, generator=g)),
    ]


def _central_difference():
    t = torch.tensor(2.0, dtype=torch.float64)
    h = 1e-3
    return ((t + h) ** 3 - (t - h) ** 3) / (2 * h)


def _hook_halved():
    a = torch.tensor(2.0, requires_grad=True)
    u = a**2
    u.register_hook(lambda grad: grad / 2)
    f = u + 3 * a
    f.backward()
    return a


EXERCISES = [
    # --- "Check yourself" questions of the lesson notebook ---
    Exercise(
        id="05.quiz_two_paths",
        title="How many paths lead back to x?",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={"a": "1", "b": "2", "c": "3"},
        explanations={
            "a": "x is used twice: once inside x * y and once directly in '+ x'. Both edges count.",
            "c": "Count the edges that leave x in the formula: x * y and + x, so two paths.",
        },
        hints=(
            "Count how many times x appears in w = x * y + x.",
            "One path goes through the product x * y, another goes straight into the sum.",
            "Two paths: through z = x * y and directly. The answer is 'b'.",
        ),
        solution='check("05.quiz_two_paths", "b")',
    ),
    Exercise(
        id="05.quiz_nonleaf_grad",
        title=".grad of a non-leaf",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={"a": "tensor(1.)", "b": "None", "c": "an error is raised"},
        explanations={
            "a": "1 is indeed d(z + x)/dz, but autograd does not store it on a non-leaf "
            "unless you call z.retain_grad() before backward().",
            "c": "Reading .grad of a non-leaf does not raise: it gives None (with a warning).",
        },
        hints=(
            "Is z a leaf? Which tensors does backward() fill .grad on?",
            "Only leaves get .grad, unless retain_grad() was called on the intermediate.",
            "z.grad stays None: answer 'b'.",
        ),
        solution='check("05.quiz_nonleaf_grad", "b")',
    ),
    Exercise(
        id="05.quiz_vjp_shape",
        title="The shape of the backward vector",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: (4,),
        options=None,
        hints=(
            "The vector in backward(gradient=v) pairs up with the elements of the output.",
            "What is the shape of m @ a when m is (4, 3) and a is (3,)?",
            "v has the shape of the output o, which is (4,).",
        ),
        solution='check("05.quiz_vjp_shape", (4,))',
    ),
    # --- exercises of the solution notebook ---
    Exercise(
        id="05.which_get_grad",
        title="Which tensors get a .grad?",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "a",
        options={"a": "p only", "b": "p and q", "c": "p, q and s", "d": "p, q, r and s"},
        explanations={
            "b": "q is the result of p * 2: an intermediate, not a leaf, so its .grad stays None.",
            "c": "q is an intermediate, and s does not require gradients at all.",
            "d": "r and s never required gradients, and q is an intermediate.",
        },
        hints=(
            "Which of the four tensors are leaves, and which of those require gradients?",
            "r and s are built without requires_grad=True; q is the result of an operation on p.",
            "Only the leaf that requires gradients, p, gets a .grad: answer 'a'.",
        ),
        solution='answer = "a"',
    ),
    Exercise(
        id="05.hand_chain_rule",
        forbid=("call:backward|grad|jacobian|hessian|vjp|jvp", "attr:grad"),
        task_says={
            "by hand": "check:call:backward|grad|jacobian|hessian|vjp|jvp",
        },
        title="A gradient by hand",
        lesson=LESSON,
        kind="value",
        reveal_values=False,
        any_float_dtype=True,  # the task asks for two numbers: float64 is right too
        build_reference=_hand_chain_rule,
        hints=(
            "Write f = a**2 * b + b and differentiate with respect to a, then with respect to b.",
            "df/da = 2 * a * b and df/db = a**2 + 1; now put in a = 1.5 and b = -2.",
            "Put a = 1.5 and b = -2.0 into both partials yourself, then answer with a"
            " float tensor of the two numbers, ∂f/∂a first.",
        ),
        solution="answer = torch.tensor([-6.0, 3.25])",
    ),
    Exercise(
        id="05.keep_intermediate_grad",
        task_says={
            "Keep the gradient of an intermediate": "check:attributes:grad",
            "By hand": "advice: a worked value the task gives, not an instruction",
        },
        title="Keep the gradient of an intermediate",
        lesson=LESSON,
        kind="autograd",
        build_reference=_kept_intermediate,
        attributes=("grad", "is_leaf", "grad_fn"),
        check_leaf_grads=True,  # f must reach a through both paths, not only u.grad
        hints=(
            "u is not a leaf, so backward() does not store its gradient unless you ask first.",
            "Call u.retain_grad() after computing u and before f.backward().",
            "Keep the order: make u from a and b, ask u to keep its gradient, only "
            "then build f from u and a and run backward on f; answer with u itself.",
        ),
        solution=(
            "u = a * b\nu.retain_grad()\nf = u * a + u\nf.backward()\nanswer = u  # u.grad == 3.0"
        ),
    ),
    Exercise(
        id="05.cube_vjp",
        min_calls={"backward": (lambda x, v: 1 if x.numel() else 0, "backward() to do the work")},
        task_says={
            "computed by autograd": "check:min_calls:backward",
            "keep using backward": "check:min_calls:backward",
        },
        title="Fix the backward of a non-scalar",
        lesson=LESSON,
        kind="function",
        build_reference=lambda: _cube_vjp,
        cases=_cube_vjp_cases,
        hints=(
            "y = x**3 has as many elements as x: backward() needs to know how to weigh them.",
            "Pass the weights as the gradient argument: y.backward(gradient=v).",
            "Work on a copy of x that requires grad, cube it, and hand v to "
            "backward() through its gradient= argument; return the copy's .grad.",
        ),
        solution=(
            "def cube_vjp(x, v):\n"
            "    x = x.clone().requires_grad_(True)\n"
            "    y = x**3\n"
            "    y.backward(gradient=v)\n"
            "    return x.grad"
        ),
    ),
    Exercise(
        id="05.central_difference",
        task_says={
            "central": "check:value (a forward difference gives another number)",
        },
        title="A derivative from finite differences",
        lesson=LESSON,
        kind="value",
        reveal_values=False,
        build_reference=_central_difference,
        # the estimate is 12 + h**2 = 12.000001: tight enough to tell it from the exact 12
        # (float64 rounding in any arrangement of the formula stays far below 1e-9)
        rtol=0.0,
        atol=1e-9,
        hints=(
            "A central difference looks at f a little to the right and a little to the left of t.",
            "(f(t + h) - f(t - h)) / (2 * h) with f(t) = t**3, t a float64 tensor and h = 1e-3.",
            "Evaluate t**3 once at t + h and once at t - h (t a float64 tensor), "
            "subtract, and divide by the distance between the two points.",
        ),
        solution=(
            "t = torch.tensor(2.0, dtype=torch.float64)\nh = 1e-3\n"
            "answer = ((t + h) ** 3 - (t - h) ** 3) / (2 * h)"
        ),
    ),
    Exercise(
        id="05.round_times_s",
        title="A gradient through round",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "tensor([0., 0., 0.])",
            "b": "tensor([0., 2., 2.])",
            "c": "tensor([0., 2., 3.])",
            "d": "tensor([0.3000, 1.7000, 2.5000])",
        },
        explanations={
            "a": "round alone sends back zeros, but here s also appears as the second factor.",
            "c": "Close: torch.round rounds halves to the nearest even number, so 2.5 becomes 2.",
            "d": "That would be the gradient with respect to round(s), not with respect to s.",
        },
        hints=(
            "Use the product rule: d/ds (round(s) * s) = round'(s) * s + round(s) * 1.",
            "round'(s) is 0 in autograd, so the gradient is round(s). What is round(2.5)?",
            "torch.round rounds halves to even: round(2.5) = 2. The answer is 'b'.",
        ),
        solution='answer = "b"',
    ),
    Exercise(
        id="05.integer_requires_grad",
        title="An integer that wants a gradient",
        lesson=LESSON,
        kind="error",
        build_reference=lambda: RuntimeError,
        explanations={
            "TypeError": "The arguments themselves are fine: torch.arange accepts requires_grad. "
            "What PyTorch rejects is the integer dtype: run the cell and read the class at "
            "the start of the last line.",
            "ValueError": "Not a ValueError: PyTorch reports a dtype that cannot require "
            "gradients with the class it uses for most errors raised inside its C++ core.",
        },
        hints=(
            "What dtype does torch.arange(3) have?",
            "arange of integers gives int64, and only floating point (or complex) tensors "
            "can require gradients.",
            "PyTorch refuses with a RuntimeError.",
        ),
        solution="answer = RuntimeError",
    ),
    Exercise(
        id="05.max_dim_tie",
        title="A gradient through a tie",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={
            "a": "tensor([0.0, 0.5, 0.5, 0.0])",
            "b": "tensor([0., 1., 0., 0.])",
            "c": "tensor([0., 1., 1., 0.])",
            "d": "tensor([0., 0., 1., 0.])",
        },
        explanations={
            "a": "That is what s.max() without dim (or s.amax()) gives: the full reduction shares "
            "the gradient. max(dim=0) also returns an index, and the gradient follows it.",
            "c": "The gradient of one value is never copied to two places: it would count the "
            "maximum twice.",
            "d": "The tie is broken by the index max(dim=0) returns, and PyTorch documents it as "
            "the first maximal value, not the last.",
        },
        hints=(
            "max(dim=0) returns two things: the values and the indices. Which element does its "
            "backward send the gradient to?",
            "The gradient goes only to the element named by the returned index; the lesson's "
            "optional part compared this with max() and amax() on a tie.",
            "Find which of the two 5.0 entries the index points at: the documentation says the "
            "first maximal value.",
        ),
        solution='answer = "b"',
    ),
    Exercise(
        id="05.mul_saves",
        title="What does the product save?",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={"a": "both w and x", "b": "only x", "c": "only w", "d": "neither"},
        explanations={
            "a": "w would be needed only to compute a gradient for x, and x does not require "
            "gradients: the node has no reason to keep w.",
            "c": "The gradient for w is grad * x, so the node needs x, not w.",
            "d": "The gradient for w is grad * x: without x, backward could not compute it.",
        },
        hints=(
            "Write the two local derivatives of w * x: with respect to w, and with respect to x.",
            "d(w*x)/dw = x and d(w*x)/dx = w. Which of the two gradients does autograd have to "
            "compute here?",
            "Only w needs a gradient, and its gradient needs the other factor; check "
            "_saved_self and _saved_other.",
        ),
        solution='answer = "b"',
    ),
    Exercise(
        id="05.hook_halve",
        task_says={
            "before": "check:call:register_hook",
            "By hand": "advice: a worked value the task gives, not an instruction",
        },
        title="Halve a gradient with a hook",
        lesson=LESSON,
        kind="autograd",
        require=("call:register_hook",),  # the task names the hook
        build_reference=_hook_halved,
        attributes=("grad",),
        hints=(
            "A hook on u sees the gradient of f with respect to u during backward(), and what it "
            "returns replaces that gradient.",
            "u.register_hook(fn) with fn a function of the gradient that returns half of it; "
            "register it before f.backward().",
            "u = a**2; then register on u a function (a lambda works) returning grad / 2; then "
            "f = u + 3 * a; f.backward(); answer = a  # a.grad == 5",
        ),
        solution=(
            "u = a**2\nu.register_hook(lambda grad: grad / 2)\nf = u + 3 * a\nf.backward()\n"
            "answer = a  # a.grad == 5.0"
        ),
    ),
    Exercise(
        id="05.retain_grad_with_hook",
        title="retain_grad and a hook on one tensor",
        lesson=LESSON,
        kind="choice",
        build_reference=lambda: "b",
        options={"a": "tensor(2.)", "b": "tensor(6.)", "c": "None"},
        explanations={
            "a": "2 is the gradient that arrives at z. The gradient retain_grad() keeps is "
            "taken after the tensor's hooks have run.",
            "c": "retain_grad() was called before backward(), so z.grad is filled; it would "
            "stay None only if retain_grad() came after backward().",
        },
        hints=(
            "Which comes first on z's gradient: the hook, or the storing that retain_grad() "
            "asked for?",
            "The hook runs first, whatever the order of the two calls.",
            "z.grad holds the gradient after the hook multiplied it by 3.",
        ),
        solution='check("05.retain_grad_with_hook", "b")',
    ),
]
