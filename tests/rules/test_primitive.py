"""The one primitive registry: every rule is a ``Primitive`` that answers the same four
questions, both modes reach it through ``classify_call``, and every registered primitive
has a test case somewhere under ``tests/rules``."""
import operator
import pathlib
import re

import numba
import numpy as np
import pytest
from numba.core import types

import adjit
from adjit.rules.core import NONDIFF, defderiv, lookup, nondiff
from adjit.rules.primitive import PRIMITIVES, Effects, Primitive
from adjit.testing import check_grad, check_hvp, check_jvp
from adjit.rules.classify import CALL_KINDS

FAMILIES = ("scalar", "linear", "reduction", "allocation", "array_op", "kernel",
            "composite", "matmul")


def _all_primitives():
    return [p for family in FAMILIES for p in PRIMITIVES.primitives(family)]


def test_every_family_has_primitives():
    for family in FAMILIES:
        assert PRIMITIVES.primitives(family), family


@pytest.mark.parametrize("family", FAMILIES)
def test_every_primitive_answers_the_four_questions(family):
    """matches, effects, reverse and forward: the same answers serve both modes, and
    ``kind`` names the handler each mode has for it."""
    f64 = types.float64
    for p in PRIMITIVES.primitives(family):
        assert isinstance(p, Primitive) and p.family == family
        assert p.kind in CALL_KINDS, (p.name, p.kind)
        assert isinstance(p.effects(), Effects)
        assert isinstance(p.matches((f64,), f64), bool)
        p.reverse, p.forward  # noqa: B018 (both answer without raising)


def test_effects_of_each_shape():
    assert PRIMITIVES.get(np.zeros, "allocation").effects().allocates
    assert PRIMITIVES.get(np.cumsum, "array_op").effects().allocates
    assert PRIMITIVES.get(np.transpose, "array_op").effects().pure
    assert PRIMITIVES.get(np.transpose, "array_op").effects().allocates is False
    assert lookup(np.sin).effects().pure
    assert PRIMITIVES.get(operator.matmul, "matmul").effects().allocates


def test_one_slot_per_family_and_redefinition():
    """``nondiff`` after ``defderiv`` replaces the rule (one scalar slot per key); other
    families of the same key are untouched."""
    @numba.njit
    def twice(x):
        return 2.0 * x

    defderiv(twice, lambda x: 2.0)
    assert lookup(twice).kind == "scalar"
    nondiff(twice)
    assert lookup(twice) is NONDIFF and NONDIFF.kind == "nondiff"
    PRIMITIVES.remove(twice, "scalar")
    assert lookup(twice) is None
    assert PRIMITIVES.get(np.sum, "reduction") is not None
    assert PRIMITIVES.get(np.sum, "array_op") is not None  # np.sum(x, axis)


# -- both modes reach a call through the same answer ------------------------------------

@numba.njit
def _mixed(x, A):
    y = np.zeros(3)                      # allocation
    z = np.cumsum(x)                     # array op (linear)
    w = A @ z                            # matrix product
    for i in range(3):
        y[i] = np.sin(w[i]) * np.sum(z)  # scalar rule, reduction
    return np.sum(y * y) + np.linalg.det(A)


X3 = np.array([0.3, -0.7, 1.1])
A33 = np.array([[1.0, 0.2, 0.1], [0.3, 1.4, -0.2], [0.0, 0.5, 0.9]])


def test_classify_call_hands_both_modes_the_registered_primitive():
    from adjit.capture.typed_ir import capture
    from adjit.rules.classify import classify_call
    from numba.core import ir
    fn = capture(_mixed, (numba.typeof(X3), numba.typeof(A33)))
    found = {}
    for block in fn.func_ir.blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) and (
                    stmt.value.op == "call"):
                cls = classify_call(fn, stmt.value)
                if cls.primitive is not None:
                    found.setdefault(cls.kind, set()).add(cls.primitive.family)
    assert {"allocation", "array_op", "scalar", "reduction"} <= set(found)


def test_mixed_primitives_in_every_mode():
    check_grad(_mixed, X3, A33, argnums=(0, 1))
    check_jvp(_mixed, X3, A33)
    check_hvp(_mixed, X3, A33, argnums=(0, 1))


# -- every registered primitive has a test case -----------------------------------------

def _spellings(key):
    """How a test would call ``key``: ``np.cumsum(``, ``.cumsum(`` for a method, ``.T``."""
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], str):
        return [f".{key[1]}(", f".{key[1]}"]
    name = getattr(key, "__name__", None)
    if name is None:
        return []
    module = getattr(key, "__module__", "") or ""
    sub = module.split(".")[1] if module.startswith("numpy.") else ""
    spelled = [f"np.{sub}.{name}(" if sub in ("linalg", "fft", "random") else f"np.{name}(",
               f"{name}("]
    return spelled


def test_every_registered_numpy_primitive_has_a_test_case():
    """A NumPy function or array method registered in any family must be called by some
    test (the rule tests check grad, jvp and hvp of each case)."""
    here = pathlib.Path(__file__)
    text = "\n".join(p.read_text() for p in here.parent.parent.rglob("*.py") if p != here)
    missing = []
    for key in PRIMITIVES.keys():
        module = getattr(key, "__module__", "") or ""
        numpy_key = module.startswith("numpy") or type(key).__name__ == "ufunc" or (
            isinstance(key, tuple))
        if not numpy_key:
            continue
        if not any(re.search(re.escape(s), text) for s in _spellings(key)):
            missing.append(_spellings(key)[:1])
    assert not missing, f"registered primitives without a test case: {missing}"


def test_unregistered_array_function_is_refused_by_name_in_every_mode():
    def f(x):
        return np.sum(np.unwrap(x))

    for run in (lambda: adjit.grad(f)(X3), lambda: adjit.jvp(f)(X3, X3),
                lambda: adjit.hvp(f)(X3, X3)):
        with pytest.raises(adjit.UnsupportedError, match="np.unwrap"):
            run()
