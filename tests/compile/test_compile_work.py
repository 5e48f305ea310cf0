"""Work a first derivative no longer does: Numba's search for scalar call signatures is
remembered inside adjit's pipelines (``compile/typing_memo.py``), and typing a captured
function types its generated callees from their captured IR instead of compiling them
(``GeneratedDispatcher.get_call_template``)."""
import contextlib
import math
import operator

import numba
import numpy as np
import pytest
from numba.core import types
from numba.core.registry import cpu_target

import adjit
from adjit.compile import typing_memo
from adjit.testing import check_hvp
from adjit.transform.reverse.program import derive


def test_scalar_resolutions_are_remembered_only_inside_adjit_pipelines():
    ctx = cpu_target.typing_context
    ctx.refresh()
    fnty = ctx.resolve_value_type(operator.add)
    args = (types.float64, types.float64)
    with typing_memo.memoised_scalar_typing():
        first = ctx.resolve_function_type(fnty, args, {})
        assert ctx.resolve_function_type(fnty, args, {}) is first
        assert first.return_type == types.float64
        # literal arguments go through Numba's own search, every time
        literal = (types.IntegerLiteral(3), types.int64)
        assert ctx.resolve_function_type(fnty, literal, {}).return_type == types.int64
    assert all(type(a) in typing_memo.SCALAR_TYPES for _, _, key_args in typing_memo._memo
               for a in key_args)
    # the user's own compile of a scalar function does not add to the memo
    before = typing_memo.memo_size()

    @numba.njit
    def user_code(a, b):
        return a * b - a // b

    assert user_code(numba.uint16(7), numba.int8(3)) == 7 * 3 - 2
    assert typing_memo.memo_size() == before


def damped(x, y):
    s = 0.0
    for i in range(4):
        s += math.sin(x * y + i) * x - 0.5 * y * y
    return s


def test_hvp_does_not_compile_the_passes_of_grad_it_transforms():
    """hvp = jvp(grad(f)): typing grad(f)'s body for the transform used to compile grad's
    forward and reverse passes, which nothing calls."""
    v = (0.3, -0.8)
    check_hvp(damped, 0.7, 1.1)
    hv = adjit.hvp(damped, (0, 1))(0.7, 1.1, *v)
    # closed form of the Hessian-vector product, term by term
    x, y = 0.7, 1.1
    hxx = hxy = hyy = 0.0
    for i in range(4):
        u = x * y + i
        hxx += -math.sin(u) * y * y * x + 2 * math.cos(u) * y
        hxy += -math.sin(u) * x * y * x + 2 * math.cos(u) * x
        hyy += -math.sin(u) * x ** 3 - 1.0
    assert hv[0] == pytest.approx(hxx * v[0] + hxy * v[1], rel=1e-12)
    assert hv[1] == pytest.approx(hxy * v[0] + hyy * v[1], rel=1e-12)
    program = derive(damped, (types.float64, types.float64), (0, 1))
    assert not program.fwd_tape.overloads and not program.rev.overloads
    # nor does grad: it holds them in its own IR (ir.inlining)
    g = adjit.grad(damped, (0, 1))(x, y)
    assert not program.fwd_tape.overloads and not program.rev.overloads
    assert g[0] == pytest.approx(sum(math.cos(x * y + i) * x * y + math.sin(x * y + i)
                                     for i in range(4)), rel=1e-12)


def chain(x, y):
    a = x * y
    b = a * x
    c = b * y
    return c * a


def _loads(blocks, name):
    from numba.core import ir
    return [stmt for block in blocks.values() for stmt in block.body
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Global)
            and stmt.value.name == name]


def test_each_callee_is_loaded_once_in_compiled_code():
    """share_call_globals hoists the repeated loads of a callee (one per guarded product)
    into the entry block, leaving the builder's blocks as they were."""
    from adjit.compile.shared_globals import share_call_globals
    program = derive(chain, (types.float64, types.float64), (0, 1))
    _, rev = program.analysis()
    before = len(_loads(rev.blocks, "adjoint_product_pair"))
    assert before >= 4  # a pair of products per multiply, one load each
    shared = share_call_globals(rev.blocks)
    assert len(_loads(shared, "adjoint_product_pair")) == 1
    assert _loads(shared, "adjoint_product_pair")[0] in shared[min(shared)].body
    assert len(_loads(rev.blocks, "adjoint_product_pair")) == before
    # and the compiled gradient (built through it) is right: d/dx x^3 y^3 = 3 x^2 y^3
    gx, gy = adjit.grad(chain, (0, 1))(0.7, 1.3)
    assert gx == pytest.approx(3 * 0.7 ** 2 * 1.3 ** 3, rel=1e-14)
    assert gy == pytest.approx(3 * 0.7 ** 3 * 1.3 ** 2, rel=1e-14)


def _trace_of_float32(a):
    return np.sum(np.diag(a) * np.float32(3.0))


@contextlib.contextmanager
def _numba_compiles(package="numba"):
    """Yield a list that collects ``(qualname, argument types)`` of each function of
    ``package`` (by default Numba's own: its NumPy overloads) compiled within the
    block."""
    from numba.core import event

    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            func = ev.data["dispatcher"].py_func
            if func.__module__.startswith(package):
                compiled.append((func.__qualname__, ev.data["args"], func.__module__))

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", Listener()):
        yield compiled


def test_numpy_overloads_compile_once_for_capture_and_derivative():
    """Capturing the primal types ``np.diag``, which compiles Numba's implementation; the
    derivative's forward pass calls it again. Both pipelines push the same canonical
    flags (``compile/shared_overloads.py``), so it is compiled once, not twice. The
    shadow of the array ``np.diag`` makes is allocated in place (``zeros_shaped``), with
    no compile of ``np.zeros``. (float32: signatures no other test compiles first.)"""
    a = np.arange(1.0, 10.0, dtype=np.float32).reshape(3, 3)
    with _numba_compiles() as compiled:
        g = adjit.grad(_trace_of_float32)(a)
    np.testing.assert_allclose(g, 3.0 * np.eye(3, dtype=np.float32))
    # at most once (an earlier test in this process may have compiled it already)
    assert len([c for c in compiled if "diag" in c[0]]) <= 1, compiled
    assert not [c for c in compiled if "zeros" in c[0]], compiled


def _squared_differences(a):
    return np.sum(np.diff(a) ** 2)


def test_numpy_overloads_of_the_users_njit_primal_are_not_compiled_again():
    """A user (and ``check_grad``) usually compiles the ``@njit`` primal before its
    gradient. adjit's pipelines push the flags a plain ``@njit`` function pushes, so the
    gradient reuses the NumPy overloads the primal compiled: before, every one of them
    was compiled a second time under adjit's own flags. (2-D float32 ``diff``: a
    signature no other test compiles first.)"""
    a = np.array([[1.0, 3.0, 2.0], [0.5, -1.0, 4.0]], dtype=np.float32)
    primal = numba.njit(_squared_differences)
    with _numba_compiles() as compiled:
        primal(a)
    assert [c for c in compiled if "diff" in c[0]], compiled  # the primal compiled it
    with _numba_compiles() as compiled:
        g = adjit.grad(_squared_differences)(a)
    d = np.diff(a)  # the gradient of sum(d ** 2): 2 d[j-1] - 2 d[j] at column j
    expected = 2.0 * (np.pad(d, ((0, 0), (1, 0))) - np.pad(d, ((0, 0), (0, 1))))
    np.testing.assert_allclose(g, expected, rtol=1e-6)
    assert not [c for c in compiled if "diff" in c[0]], compiled


def _trig_exp(x, y):
    return math.sin(x) * y + math.cos(x * y) + math.exp(0.5 * x)


def test_partials_that_are_the_result_or_a_math_call_compile_no_kernel():
    """``sin``'s partial is ``cos(x)``, ``cos``'s ``-sin(x)``, ``exp``'s its result: the
    derivative code calls ``math.cos`` (or reads the result) instead of compiling a
    kernel per partial, and in an hvp forward mode derives those calls, not kernels. A
    float item of a tape record takes its tangent by ``np.float32(t)``, not by a
    compiled conversion (``forward_tape.record_form``). (float32: signatures no other
    test in this file compiles first.)"""
    x, y = np.float32(0.7), np.float32(1.3)
    v = (np.float32(0.4), np.float32(-0.9))
    with _numba_compiles("adjit") as compiled:
        hv = adjit.hvp(_trig_exp, (0, 1))(x, y, *v)
    kernels = [c for c in compiled
               if c[2] in ("adjit.rules.scalar_math", "adjit.transform.forward_tape")]
    assert not kernels, kernels
    xf, yf = float(x), float(y)
    u = xf * yf
    hxx = -math.sin(xf) * yf - yf * yf * math.cos(u) + 0.25 * math.exp(0.5 * xf)
    hxy = math.cos(xf) - math.sin(u) - u * math.cos(u)
    hyy = -xf * xf * math.cos(u)
    assert hv[0] == pytest.approx(hxx * v[0] + hxy * v[1], rel=1e-5)
    assert hv[1] == pytest.approx(hxy * v[0] + hyy * v[1], rel=1e-5)
    g = adjit.grad(_trig_exp, (0, 1))(x, y)
    assert g[0] == pytest.approx(math.cos(xf) * yf - yf * math.sin(u)
                                 + 0.5 * math.exp(0.5 * xf), rel=1e-5)
    assert g[1] == pytest.approx(math.sin(xf) - xf * math.sin(u), rel=1e-5)


def _sin_times(x):
    return np.sum(np.sin(x) * x)


def test_hvp_does_not_compile_the_rule_kernels_of_grad_it_transforms():
    """hvp types grad(f)'s body, whose reverse pass calls elementwise kernels
    (``internal_jit``), then calls only their JVPs: the kernels themselves are typed from
    their captured IR and never compiled (``compile/capture_typing.py``). (3-D float32:
    a signature no other test in this file compiles first.)"""
    from numba.core import event

    kernels = []

    class Listener(event.Listener):
        def on_start(self, ev):
            if ev.data["dispatcher"].py_func.__qualname__ == "elementwise_update.<locals>.update":
                kernels.append(ev.data["args"])

        def on_end(self, ev):
            pass

    x = np.linspace(0.1, 1.2, 12).astype(np.float32).reshape(2, 3, 2)
    v = np.linspace(-1.0, 1.0, 12).astype(np.float32).reshape(2, 3, 2)
    with event.install_listener("numba:compile", Listener()):
        hv = adjit.hvp(_sin_times)(x, v)
    x64, v64 = x.astype(np.float64), v.astype(np.float64)
    np.testing.assert_allclose(hv, (2.0 * np.cos(x64) - np.sin(x64) * x64) * v64, rtol=1e-5)
    assert not kernels, kernels
