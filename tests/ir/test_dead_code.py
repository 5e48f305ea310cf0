"""Dead-code removal for the tape-only forward pass that ``grad`` calls."""
import math

import numpy as np
import pytest
from numba.core import ir, types

import adjit
from adjit.capture.normalise import normalise
from adjit.capture.typed_ir import capture
from adjit.ir.dead_code import discard_result
from adjit.transform.reverse.program import derive
from corpus.for_range import rosenbrock_terms

VEC = (types.float64[::1],)


def _exprs(blocks, op):
    return [s.value for b in blocks.values() for s in b.body
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr) and s.value.op == op]


def sin_sum_and_store(x, out):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sin(x[i])
        out[i] = x[i] * 2.0
        half = i // 2  # noqa: F841  (unused, but floor division may raise: it stays)
    return s


def _callees(blocks):
    """The Python objects called, through their global variables."""
    glob = {s.target.name: s.value.value for b in blocks.values() for s in b.body
            if isinstance(s, ir.Assign) and isinstance(s.value, (ir.Global, ir.FreeVar))}
    return [glob.get(c.func.name) for c in _exprs(blocks, "call")]


def test_value_only_statements_go_effects_stay():
    """The accumulated value (its sin calls, additions) goes; the store into ``out`` and
    everything it reads stay, and so does a floor division that may raise."""
    blocks = normalise(capture(sin_sum_and_store, VEC + VEC)).func_ir.blocks
    assert math.sin in _callees(blocks)
    discard_result(blocks)
    assert math.sin not in _callees(blocks)
    setitems = [s for b in blocks.values() for s in b.body if isinstance(s, ir.SetItem)]
    assert len(setitems) == 1
    assert any(e.fn.__name__ == "floordiv" for e in _exprs(blocks, "binop"))
    assert not any(e.fn.__name__ == "add" and isinstance(e.lhs, ir.Var) and "s" == e.lhs.name
                   for e in _exprs(blocks, "binop"))
    assert all(isinstance(b.terminator.value, ir.Var) for b in blocks.values()
               if isinstance(b.terminator, ir.Return))


def test_tape_only_forward_pass_of_a_recomputed_loop_is_a_counter():
    """rosenbrock's reverse pass recomputes everything: its tape-only forward pass keeps
    no float arithmetic at all, only the trip count it pushes."""
    program = derive(rosenbrock_terms, VEC, (0,))
    ctx, rev = program.analyse()
    from adjit.transform.reverse.forward_pass import build_forward
    blocks = discard_result(build_forward(ctx, rev))
    floats = [e for e in _exprs(blocks, "binop")
              if isinstance(ctx.typeof(e.lhs.name), types.Float)]
    assert floats == []
    assert _exprs(blocks, "getitem") == []


@pytest.mark.parametrize("n", [2, 7])
def test_grad_with_tape_only_forward_pass(n):
    x = np.linspace(-1.0, 1.3, n)
    g = adjit.grad(rosenbrock_terms)(x)
    expected = np.zeros(n)
    for i in range(n - 1):
        a = x[i + 1] - x[i] ** 2
        expected[i] += -400.0 * a * x[i] - 2.0 * (1.0 - x[i])
        expected[i + 1] += 200.0 * a
    assert np.allclose(g, expected, rtol=1e-13, atol=1e-13)


def sum_of_sines(x, out):
    # the usual vectorised reduction, plus a ufunc writing into out= and a random draw:
    # those two have effects and stay
    np.sin(x, out)
    noise = np.random.random() * 0.0
    return np.sum(np.sin(2.0 * x)) + noise


def test_numpy_calls_that_only_compute_their_result_go():
    """``grad``'s forward pass needs neither ``np.sin(2x)`` nor its sum: the reverse
    pass reads ``x`` and the shape it saves is ``x``'s, so both calls go. The ufunc that
    writes into ``out`` and the random draw stay."""
    program = derive(sum_of_sines, VEC + VEC, (0,))
    ctx, rev = program.analyse()
    from adjit.transform.reverse.forward_pass import build_forward
    blocks = discard_result(build_forward(ctx, rev))
    callees = _callees(blocks)
    assert np.sum not in callees
    assert callees.count(np.sin) == 1
    assert np.random.random in callees
    x = np.linspace(-1.0, 1.0, 5)
    grad = adjit.grad(sum_of_sines)(x, np.zeros(5))
    assert np.allclose(grad, 2.0 * np.cos(2.0 * x), rtol=1e-14, atol=1e-14)


def test_a_callee_that_is_not_a_global_is_never_a_pure_kernel():
    """A method call (``res.append(v)``) has no global callee: looked up as None, it was
    taken for a pure kernel, and dead-code removal dropped the appends of every list."""
    from adjit.ir.purity import is_pure_kernel
    assert not is_pure_kernel(None)


def squares_through_a_temporary(x):
    """The reverse pass reads the shadow of ``t``, which it writes element by element:
    hvp needs those values (the tangent of ``x * t[i]``'s adjoint reads them)."""
    t = np.empty_like(x)
    for i in range(x.shape[0]):
        t[i] = x[i] * x[i]
    s = 0.0
    for i in range(x.shape[0]):
        s += t[i] * math.sin(x[i])
    return s


def _shadow_writes(text):
    """The element writes of a shown program, split by tangent or not."""
    writes = [line.split("=")[0].strip() for line in text.splitlines()
              if "shadow" in line.split("=")[0] and "[" in line.split("=")[0]]
    return [w for w in writes if "%dot[" not in w], [w for w in writes if "%dot[" in w]


def test_hvp_computes_no_gradient_it_discards():
    """hvp's jvp of grad returns the tangent alone (``derive_jvp(tangent_only=True)``):
    the gradient's shadow of ``x``, which only the discarded value reads, is neither
    written nor allocated; jvp of grad keeps it. The Hessian against its closed form:
    d2/dx_i dx_j of rosenbrock."""
    from adjit.transform.forward import derive_jvp
    g = adjit.grad(rosenbrock_terms)
    full = derive_jvp(g, VEC, (0,)).show()
    hv = derive_jvp(g, VEC, (0,), tangent_only=True).show()
    assert [len(w) for w in _shadow_writes(full)] == [2, 2]
    primal_writes, tangent_writes = _shadow_writes(hv)
    assert primal_writes == [] and len(tangent_writes) == 2
    assert hv.count("= call $zeros_shadow") == 1  # the tangent's: H v
    x, v = np.array([0.3, -1.2, 0.8, 1.1]), np.array([1.0, -0.5, 2.0, 0.25])
    n = x.shape[0]
    H = np.zeros((n, n))
    for i in range(n - 1):
        H[i, i] += 1200.0 * x[i] ** 2 - 400.0 * x[i + 1] + 2.0
        H[i, i + 1] += -400.0 * x[i]
        H[i + 1, i] += -400.0 * x[i]
        H[i + 1, i + 1] += 200.0
    assert np.allclose(adjit.hvp(rosenbrock_terms)(x, v), H @ v, rtol=1e-13, atol=1e-12)
    assert np.array_equal(adjit.hvp(rosenbrock_terms)(x, v),
                          adjit.jvp(adjit.grad(rosenbrock_terms))(x, v)[1])


def test_hvp_keeps_the_shadow_writes_its_tangent_reads():
    """The shadow of the temporary ``t`` is read back by the reverse pass: its writes
    stay in the tangent-only program, and the hvp matches finite differences of the
    gradient and the closed form."""
    from adjit.testing import check_hvp
    from adjit.transform.forward import derive_jvp
    hv = derive_jvp(adjit.grad(squares_through_a_temporary), VEC, (0,),
                    tangent_only=True).show()
    primal_writes, _ = _shadow_writes(hv)
    assert sum(w.startswith("t%shadow") for w in primal_writes) == 2, primal_writes
    assert not any(w.startswith("x_adjit_shadow") for w in primal_writes)
    x, v = np.array([0.4, -0.7, 1.3]), np.array([0.5, 1.0, -2.0])
    # f = sum x^2 sin x: f'' = 2 sin x + 4 x cos x - x^2 sin x, a diagonal Hessian
    h = 2 * np.sin(x) + 4 * x * np.cos(x) - x * x * np.sin(x)
    assert np.allclose(adjit.hvp(squares_through_a_temporary)(x, v), h * v,
                       rtol=1e-13, atol=1e-13)
    check_hvp(squares_through_a_temporary, x)


def frobenius_of_product(W, X):
    return np.sum((W @ X) ** 2)


def test_hvp_drops_the_matrix_updates_of_a_discarded_gradient():
    """The reverse pass adds ``2 (W X) X^T`` into W's shadow with a matrix update
    (``ir.purity.accumulating_kernel``); hvp's tangent-only program keeps only the
    update of the tangent. H v = 2 V X X^T for f = ||W X||^2."""
    import numba
    from adjit.transform.forward import derive_jvp
    rng = np.random.default_rng(3)
    W, X, V = rng.standard_normal((3, 4)), rng.standard_normal((4, 5)), rng.standard_normal((3, 4))
    types_ = (numba.typeof(W), numba.typeof(X))
    g = adjit.grad(frobenius_of_product)

    def written_shadows(text):
        """The last argument (the array written) of each update of W's shadows."""
        calls = [line.split("= call $", 1)[1].split(", func=")[0] for line in
                 text.splitlines() if "= call $" in line and "W_adjit_shadow" in line]
        return [call.split("(", 1)[1].split(", ")[-1] for call in calls]
    tangent_only = written_shadows(derive_jvp(g, types_, (0,), tangent_only=True).show())
    full = written_shadows(derive_jvp(g, types_, (0,)).show())
    # one update of the tangent's shadow (X is held fixed); jvp of grad adds the gradient's
    assert len(tangent_only) == 1 and tangent_only[0].endswith("%dot"), tangent_only
    assert sorted(full) == sorted([tangent_only[0][:-len("%dot")], tangent_only[0]]), full
    assert np.allclose(adjit.hvp(frobenius_of_product)(W, X, V), 2 * V @ X @ X.T,
                       rtol=1e-13, atol=1e-12)


def scaled_in_place(x):
    """Writes into the differentiated argument: the reverse pass reads the cotangent
    of each overwritten element back out of x's shadow, so hvp keeps those writes."""
    for i in range(x.shape[0]):
        x[i] = x[i] * x[i] + 0.5 * x[i]
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sin(x[i])
    return s


def test_hvp_keeps_the_gradient_shadow_its_reverse_pass_reads_back():
    """f = sum sin(x^2 + x/2): a diagonal Hessian, against its closed form and finite
    differences of the gradient."""
    from adjit.testing import check_hvp
    x, v = np.array([0.4, -0.7, 1.3]), np.array([0.5, 1.0, -2.0])
    u = x * x + 0.5 * x
    du = 2 * x + 0.5
    h = -np.sin(u) * du * du + 2 * np.cos(u)
    assert np.allclose(adjit.hvp(scaled_in_place)(x.copy(), v), h * v, rtol=1e-13,
                       atol=1e-13)
    check_hvp(scaled_in_place, x.copy())
