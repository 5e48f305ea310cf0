"""Invalidation (``capture/freshness.py``): a transform built or held across a rebound
helper sees the new helper, and redefined functions and their derivatives are freed.
Closed forms and finite differences are the references. (From tests/test_edges.py.)"""
import sys
import textwrap

import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad


def test_rebound_helper_is_seen_by_a_new_transform(tmp_path, monkeypatch):
    source = textwrap.dedent("""
        import numba

        @numba.njit
        def helper(x):
            return x * x

        @numba.njit
        def f(x):
            return helper(x) * x
    """)
    (tmp_path / "adjit_rebind_mod.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    import adjit_rebind_mod as mod
    assert adjit.value_and_grad(mod.f)(1.5) == pytest.approx((1.5 ** 3, 3 * 1.5 ** 2))
    old = adjit.grad(mod.f)
    mod.helper = numba.njit(lambda x: x * x * x)  # the notebook pattern: re-run the cell
    assert adjit.value_and_grad(mod.f)(1.5) == pytest.approx((1.5 ** 4, 4 * 1.5 ** 3))
    assert old(1.5) == pytest.approx(4 * 1.5 ** 3)  # the held transform recompiled too
    check_grad(mod.f, 1.5)
    sys.modules.pop("adjit_rebind_mod")


def test_a_held_derivative_recompiles_on_its_next_call_after_a_rebind(tmp_path, monkeypatch):
    """No new transform is requested: the next call of the existing ``grad``, ``jvp`` and
    ``hvp`` sees the rebound helper (Numba's own dispatchers keep the old one)."""
    source = textwrap.dedent("""
        import numba

        @numba.njit
        def inner(x):
            return x * x

        @numba.njit
        def helper(x):
            return inner(x) + 1.0

        @numba.njit
        def f(x):
            return helper(x) * x
    """)
    (tmp_path / "adjit_rebind_held.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    import adjit_rebind_held as mod
    g, j, h = adjit.grad(mod.f), adjit.jvp(mod.f), adjit.hvp(mod.f)
    x = 1.5  # f = x^3 + x
    assert (g(x), *j(x, 1.0), h(x, 1.0)) == pytest.approx((3 * x**2 + 1, x**3 + x,
                                                           3 * x**2 + 1, 6 * x))
    mod.inner = numba.njit(lambda x: x * x * x)  # a callee of a callee: f = x^4 + x
    assert (g(x), *j(x, 1.0), h(x, 1.0)) == pytest.approx((4 * x**3 + 1, x**4 + x,
                                                           4 * x**3 + 1, 12 * x**2))
    # helper, compiled by Numba before the rebind, was recompiled: finite differences
    # through it agree
    assert mod.helper(x) == pytest.approx(x**3 + 1.0)
    check_grad(mod.f, x)
    sys.modules.pop("adjit_rebind_held")


def _module(tmp_path, monkeypatch, name, source):
    """Import ``source`` as the module ``name`` from ``tmp_path``, forgotten again when
    the test ends."""
    import importlib
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    # teardown undoes these last-first: the placeholder comes back, then goes, as the
    # name was absent before setitem; so the imported module is forgotten
    monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, name)
    return importlib.import_module(name)


_FILLING_HELPERS = """
    import numba
    import numpy as np
    import adjit_stale_parts as parts

    K = 2.0

    @numba.njit
    def square(v):
        return v * v

    @numba.njit
    def fill(x):
        y = np.empty_like(x)
        for i in range(x.shape[0]):
            y[i] = square(x[i]) * K * parts.SCALE + parts.shift(x[i])
        return y

    @numba.njit
    def outer(x):
        return fill(x) + 1.0

    def f(x):
        y = outer(x)
        return np.sum(y * y)
"""


def _stale_module(tmp_path, monkeypatch, name):
    _module(tmp_path, monkeypatch, "adjit_stale_parts", """
        import numba

        SCALE = 1.0

        @numba.njit
        def shift(v):
            return 0.0 * v
    """)
    return _module(tmp_path, monkeypatch, name, _FILLING_HELPERS)


def _expected(x, power, k, shift):
    """f's value and gradient for y = k x^power + shift x + 1."""
    y = k * x**power + shift * x + 1.0
    return np.sum(y * y), 2 * y * (k * power * x**(power - 1) + shift)


def _check_all_modes(mod, x, power, k, shift):
    value, grad = _expected(x, power, k, shift)
    np.testing.assert_allclose(adjit.value_and_grad(mod.f)(x)[0], value, rtol=1e-12)
    np.testing.assert_allclose(adjit.grad(mod.f)(x), grad, rtol=1e-12)
    v = np.linspace(0.5, -0.5, x.size)
    np.testing.assert_allclose(adjit.jvp(mod.f)(x, v)[1], grad @ v, rtol=1e-12)
    step = 1e-6
    hv = (_expected(x + step * v, power, k, shift)[1] -
          _expected(x - step * v, power, k, shift)[1]) / (2 * step)
    np.testing.assert_allclose(adjit.hvp(mod.f)(x, v), hv, rtol=1e-6)
    check_grad(mod.f, x)  # through Numba's compiled helpers: they run the current code


@pytest.mark.parametrize("rebind", ["callee", "constant", "module attribute"])
def test_helpers_compiled_before_a_rebind_are_recompiled(tmp_path, monkeypatch, rebind):
    """``fill`` and its caller ``outer`` were compiled by Numba before a name ``fill``
    reads was rebound, and nothing was differentiated yet. Their compiled code still
    runs the old name, while adjit derives ``fill`` from its source: reverse mode, which
    calls ``fill`` to recompute its result, gave a gradient of neither version. Both are
    recompiled, so every mode (and the primal) runs the new code."""
    mod = _stale_module(tmp_path, monkeypatch, f"adjit_stale_{rebind.split()[0]}")
    x = np.array([0.5, 1.5, -2.0])
    np.testing.assert_allclose(mod.outer(x), 2.0 * x * x + 1.0)  # compiled now
    power, k, shift = 2, 2.0, 0.0
    if rebind == "callee":
        mod.square, power = numba.njit(lambda v: v * v * v), 3
    elif rebind == "constant":
        mod.K, k = 3.0, 3.0
    else:
        sys.modules["adjit_stale_parts"].shift, shift = numba.njit(lambda v: 0.5 * v), 0.5
    _check_all_modes(mod, x, power, k, shift)
    np.testing.assert_allclose(mod.outer(x), k * x**power + shift * x + 1.0)


def test_a_held_gradient_recompiles_helpers_after_a_module_constant_is_rebound(
        tmp_path, monkeypatch):
    """``parts.SCALE``, a constant read as a module attribute, is rebound after a
    gradient was taken: Numba's typed IR keeps no value for it, so the rebind itself
    (seen by the held gradient's next call) marks ``fill`` for recompiling."""
    mod = _stale_module(tmp_path, monkeypatch, "adjit_stale_scale")
    x = np.array([0.5, 1.5, -2.0])
    grad = adjit.grad(mod.f)
    np.testing.assert_allclose(grad(x), _expected(x, 2, 2.0, 0.0)[1], rtol=1e-12)
    mod.outer(x)
    sys.modules["adjit_stale_parts"].SCALE = 1.5
    np.testing.assert_allclose(grad(x), _expected(x, 2, 3.0, 0.0)[1], rtol=1e-12)
    _check_all_modes(mod, x, 2, 3.0, 0.0)


def test_current_helpers_are_not_recompiled(tmp_path, monkeypatch):
    """Without a rebind, Numba's compiled helpers are kept as they are (a constant
    rebound to an equal number is no rebind)."""
    mod = _stale_module(tmp_path, monkeypatch, "adjit_stale_none")
    x = np.array([0.5, 1.5, -2.0])
    mod.outer(x)
    compiled = (list(mod.fill.overloads.values()), list(mod.outer.overloads.values()))
    mod.K = float("2.0")
    _check_all_modes(mod, x, 2, 2.0, 0.0)
    assert compiled == (list(mod.fill.overloads.values()), list(mod.outer.overloads.values()))


def test_redefined_functions_and_their_derivatives_are_freed():
    """The notebook pattern: define f, differentiate it, redefine it. Nothing adjit
    built keeps the old function alive (transform caches live on the function; compile
    results drop their typed IR), so Python memory stays flat as Numba's does."""
    import gc
    import weakref
    x = np.linspace(0.0, 1.0, 5)
    alive = []
    for k in (1.0, 2.0):
        namespace = {"np": np}
        exec(textwrap.dedent("""
            def f(x):
                s = 0.0
                for v in x:
                    s += np.sin(v) * K
                return s
        """), namespace)
        namespace["K"] = k
        f = numba.njit(namespace["f"])
        np.testing.assert_allclose(adjit.grad(f)(x), k * np.cos(x), rtol=1e-14)
        np.testing.assert_allclose(adjit.hvp(f)(x, x), -k * np.sin(x) * x, rtol=1e-14)
        np.testing.assert_allclose(adjit.jvp(f)(x, x)[1], k * np.cos(x) @ x, rtol=1e-14)
        alive.append(weakref.ref(namespace["f"]))
        del f, namespace
    gc.collect()
    assert [ref() is None for ref in alive] == [True, True]


def _doubled(x):
    return 2.0 * x


@numba.extending.overload(_doubled)
def _doubled_overload(x):
    return lambda x: 2.0 * x


def _tripled_overload(x):
    return lambda x: 3.0 * x


def _uses_doubled(x):
    return _doubled(x) * x


def test_an_edited_user_overload_changes_the_fingerprint():
    """A call of a user's ``@overload`` runs (and adjit derives) the implementation the
    overload returns, not the plain function's body: the disk cache's fingerprint reads
    the overload's code too, so a cached derivative of the old implementation is never
    loaded after an edit."""
    from adjit.capture.fingerprint import fingerprint
    before = fingerprint(_uses_doubled, "grad")
    saved = _doubled_overload.__code__
    try:
        _doubled_overload.__code__ = _tripled_overload.__code__
        assert fingerprint(_uses_doubled, "grad") != before
    finally:
        _doubled_overload.__code__ = saved
    assert fingerprint(_uses_doubled, "grad") == before
    assert adjit.grad(_uses_doubled)(1.5) == pytest.approx(4 * 1.5)


def test_a_helper_that_no_longer_compiles_after_a_rebind_is_reported_by_adjit(
        tmp_path, monkeypatch):
    """Recompiling ``fill`` fails once ``square`` returns a tuple: the gradient says so
    with adjit's ``ArgumentError``, naming the line, not with Numba's ``TypingError``."""
    mod = _stale_module(tmp_path, monkeypatch, "adjit_stale_broken")
    x = np.array([0.5, 1.5, -2.0])
    mod.outer(x)
    mod.square = numba.njit(lambda v: (v, v))
    with pytest.raises(adjit.ArgumentError, match="Numba cannot compile"):
        adjit.grad(mod.f)(x)
