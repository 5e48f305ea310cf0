"""Edges found by this project's probes of real Numba code, of NumPy idioms and by the
fuzzer: each gives the right number or a clear error. Every test here failed before the
fix it guards."""
import math
from collections import namedtuple

import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp


# -- complex intermediates: refused in every mode, never a silent zero tangent ----------
@numba.njit
def _through_complex(x, y):
    z = x + y * 1j
    return z.real + 2.0 * z.imag


@numba.njit
def _through_complex_arrays(x, phi):
    z = np.exp(-1j * phi) * (x + 0.5j)
    return np.sum(z.real * z.real)


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_complex_intermediates_are_refused_in_every_mode(mode):
    # jvp used to return a tangent of 0.0 here (the right one is 3.0)
    run = {"grad": lambda f, *a: adjit.grad(f, argnums=(0, 1))(*a),
           "jvp": lambda f, *a: adjit.jvp(f)(*a, *a),
           "hvp": lambda f, *a: adjit.hvp(f)(*a, a[0])}[mode]
    # named by the operator as written ('*' or '+'), not by its function's name ('mul')
    # and says what to do (grad and hvp gave no advice)
    with pytest.raises(adjit.UnsupportedError,
                       match=r"(?s)'[*+]' returning complex128.*real and imaginary parts"):
        run(_through_complex, 0.3, 0.9)
    with pytest.raises(adjit.UnsupportedError, match="complex128"):
        run(_through_complex_arrays, np.array([0.3, -0.7]), 0.25)


# -- a helper returning an item it unpacked from another helper's tuple ------------------
@numba.njit
def _slope_and_intercept(x):
    return x[0] * x[1] + np.sum(x * x), x[0]


@numba.njit
def _slope(x):
    slope, _ = _slope_and_intercept(x)  # antropy's _higuchi_fd does this
    return slope


def _through_unpacked_item(x):
    return _slope(x) * x[2]


def test_helper_returning_an_unpacked_item_of_another_call():
    # was an internal AttributeError from the returned-view analysis
    x = np.array([1.5, 2.0, 0.7])
    check_grad(_through_unpacked_item, x)
    check_jvp(_through_unpacked_item, x)
    check_hvp(_through_unpacked_item, x)


# -- atan2 and hypot at the origin: a subgradient (0), not NaN ----------------------------
def _angle_of_a_zero_vector(x):
    d = x - x  # exactly 0 for every x: the result does not depend on x through it
    return math.atan2(d, d) + math.hypot(d, d) * 3.0 + np.arctan2(d, 0.0) + x * x


def test_atan2_and_hypot_at_the_origin_do_not_give_nan():
    # found by the fuzzer (seed 70707 #144): grad and hvp were NaN, jvp was right
    assert adjit.grad(_angle_of_a_zero_vector)(0.7) == pytest.approx(1.4)
    assert adjit.jvp(_angle_of_a_zero_vector)(0.7, 1.0)[1] == pytest.approx(1.4)
    assert adjit.hvp(_angle_of_a_zero_vector)(0.7, 1.0) == pytest.approx(2.0)


def _matrix_power_sum(a):
    return np.sum(np.linalg.matrix_power(a, 3))


def test_an_optional_array_is_refused_with_its_reason():
    # Numba types np.linalg.matrix_power as returning an optional array; the refusal of
    # the np.sum reading it used to say only that np.sum had no rule, and then named
    # np.sum with matrix_power in the advice; jvp named the SSA temporary ('$78call.9')
    # and its Numba type. Every mode now names the call that made it.
    for derive in (lambda: adjit.grad(_matrix_power_sum)(np.eye(3) + 0.1),
                   lambda: adjit.hvp(_matrix_power_sum)(np.eye(3) + 0.1, np.eye(3)),
                   lambda: adjit.jvp(_matrix_power_sum)(np.eye(3) + 0.1, np.eye(3))):
        with pytest.raises(adjit.UnsupportedError, match=(
                r"'np\.linalg\.matrix_power\(\.\.\.\)', whose result may be None")):
            derive()


_Params = namedtuple("_Params", ["a", "b"])


@numba.njit
def _namedtuple_model(p, x):
    return p.a * x + p.b


@numba.njit
def _namedtuple_loss(a, b, x):
    return np.sum(_namedtuple_model(_Params(a, b), x) ** 2)


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_a_namedtuple_of_differentiated_values_is_refused_with_advice(mode):
    # the refusal said only "no differentiation rule is registered for it"
    x = np.linspace(0.0, 1.0, 5)
    calls = {"grad": lambda: adjit.grad(_namedtuple_loss, (0, 1))(0.5, 0.2, x),
             "jvp": lambda: adjit.jvp(_namedtuple_loss)(0.5, 0.2, x, 1.0, 0.0, 0 * x),
             "hvp": lambda: adjit.hvp(_namedtuple_loss)(0.5, 0.2, x, 1.0)}
    with pytest.raises(adjit.UnsupportedError,
                       match=r"(?s)'_Params'.*namedtuple.*plain tuple"):
        calls[mode]()


_Workspace = namedtuple("_Workspace", ["buf", "tmp"])


@numba.njit
def _fill_workspace(x, ws):
    for i in range(x.shape[0]):
        ws.buf[i] = x[i] * x[i]
    return np.sum(ws.buf)


def _workspace_loss(x, ws):
    return _fill_workspace(x, ws) + np.sum(ws.buf * x)


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_a_namedtuple_workspace_argument_is_refused_with_advice_that_fits(mode):
    """A workspace argument the helper writes into: jvp's advice was to return a tuple
    from the helper, which does not apply to an argument."""
    x, ws = np.array([1.0, 2.0, 3.0]), _Workspace(np.zeros(3), np.zeros(3))
    calls = {"grad": lambda: adjit.grad(_workspace_loss)(x, ws),
             "jvp": lambda: adjit.jvp(_workspace_loss)(x, ws, x),
             "hvp": lambda: adjit.hvp(_workspace_loss)(x, ws, x)}
    with pytest.raises(adjit.UnsupportedError,
                       match=r"(?s)in function '_workspace_loss'.*"
                       r"pass (its|the) arrays as separate arguments"):
        calls[mode]()


@numba.njit
def _squares(x):
    for v in x:
        yield v * v


@numba.njit
def _through_a_generator(x):
    s = 0.0
    for v in _squares(x):
        s += math.sqrt(v + 1.0)
    return s


@numba.njit
def _evens(n):
    for i in range(0, n, 2):
        yield i


@numba.njit
def _indices_from_a_generator(x):
    s = 0.0
    for i in _evens(x.shape[0]):
        s += x[i] ** 2
    return s


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_a_generator_of_differentiated_values_is_refused_by_name(mode):
    # jvp was an internal error at the helper's 'yield' line
    x = np.array([0.3, -1.2, 0.5])
    calls = {"grad": lambda: adjit.grad(_through_a_generator)(x),
             "jvp": lambda: adjit.jvp(_through_a_generator)(x, np.ones(3)),
             "hvp": lambda: adjit.hvp(_through_a_generator)(x, np.ones(3))}
    with pytest.raises(adjit.UnsupportedError,
                       match=r"(?s)'_squares'.*generator.*return an array"):
        calls[mode]()


def test_a_generator_of_indices_still_works():
    x = np.array([0.3, -1.2, 0.5, 2.0])
    np.testing.assert_allclose(adjit.grad(_indices_from_a_generator)(x), [0.6, 0, 1.0, 0])
    assert adjit.jvp(_indices_from_a_generator)(x, np.ones(4))[1] == pytest.approx(1.6)
    np.testing.assert_allclose(adjit.hvp(_indices_from_a_generator)(x, np.ones(4)),
                               [2.0, 0, 2.0, 0])


@numba.njit
def _trajectory_in_a_list(y0, k):
    traj = numba.typed.List()
    y = y0.copy()
    for _ in range(3):
        y = y - k * y
        traj.append(y.copy())
    s = 0.0
    for t in traj:
        s += np.sum(t * t)
    return s


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_list_of_differentiated_arrays_is_refused_with_the_fix(mode):
    # the advice was to register an array rule (defview, deflinear_array)
    y0 = np.array([1.0, 2.0])
    calls = {"grad": lambda: adjit.grad(_trajectory_in_a_list, (0, 1))(y0, 0.1),
             "jvp": lambda: adjit.jvp(_trajectory_in_a_list)(y0, 0.1, y0, 1.0)}
    with pytest.raises(adjit.UnsupportedError,
                       match=r"(?s)'traj\.append'.*list of arrays.*preallocated"):
        calls[mode]()


@numba.njit
def _ufunc_out_keyword(x, buf):
    np.exp(x, out=buf)
    return buf.sum()


@numba.njit
def _generator_expression(x):
    return sum(v * v for v in x)


@numba.vectorize(["float64(float64, float64)"])
def _squared_difference(a, b):
    return (a - b) ** 2


@numba.njit
def _vectorize_out_keyword(x, y, buf):
    _squared_difference(x, y, out=buf)
    return buf.sum()


def _masked_transpose(X):
    return np.sum(X.T[X.T > 0] ** 2)


def test_code_numba_cannot_lower_is_the_users_error_not_an_internal_one():
    # Numba types these, then fails to lower them: adjit called each its own bug
    # ("internal error, please report it") under its generated function's name, or
    # advised removing a defderiv rule the user never registered
    x = np.array([0.1, 0.5, 0.9])
    with pytest.raises(adjit.UnsupportedError, match=r"(?s)out=.*np\.exp\(x, out\)"):
        adjit.grad(_ufunc_out_keyword)(x, np.zeros(3))
    with pytest.raises(adjit.ArgumentError,
                       match="Numba cannot compile '_generator_expression'.*yield"):
        adjit.grad(_generator_expression)(x)
    with pytest.raises(adjit.ArgumentError,
                       match="Numba cannot compile '_generator_expression'"):
        adjit.hvp(_generator_expression)(x, x)
    with pytest.raises(adjit.ArgumentError,
                       match="Numba cannot compile '_vectorize_out_keyword'"):
        adjit.grad(_vectorize_out_keyword)(x, x, np.zeros(3))
    # through jvp's *args stub too (Numba's lowering asserts on a 2-D mask of X.T)
    X = np.array([[1.0, -2.0, 3.0], [-0.5, 0.7, 0.2]])
    with pytest.raises(adjit.ArgumentError, match="Numba cannot compile '_masked_transpose'"):
        adjit.jvp(_masked_transpose)(X, np.ones_like(X))


@numba.guvectorize(["(float64[:], float64[:], float64[:])"], "(n),(n)->()")
def _row_dot(a, b, out):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    out[0] = s


@numba.njit
def _through_a_gufunc(X, w):
    r = np.empty(X.shape[0])
    _row_dot(X, w, r)
    return np.sum(r ** 2)


def test_a_guvectorize_call_is_refused_with_the_loop_as_advice():
    with pytest.raises(adjit.UnsupportedError, match=r"(?s)'_row_dot'.*@guvectorize.*@njit"):
        adjit.grad(_through_a_gufunc, 1)(np.ones((3, 2)), np.array([0.5, 0.1]))


def _shape_options_by_keyword(x):
    c = np.expand_dims(x, axis=1)
    return np.sum(np.cos(c * np.expand_dims(x, 0))) + np.sum(np.tril(np.outer(x, x), k=-1) ** 2)


def test_shape_options_passed_by_keyword():
    # np.expand_dims(x, axis=1) and np.tril(a, k=-1) were refused: only positional
    # options matched their rules
    x = np.array([0.3, -0.5, 1.2, 0.8])
    check_grad(_shape_options_by_keyword, x)
    check_jvp(_shape_options_by_keyword, x)


@numba.njit
def _trapezoid_of_squares(y):
    return np.trapezoid(y ** 2, dx=0.1) + np.average(y * y)


def test_composite_helpers_get_their_omitted_defaults_in_forward_mode():
    # jvp built first gave an internal error: the helper was called without its
    # trailing default (axis), which the derived JVP program takes
    y = np.array([0.3, -1.2, 0.7, 1.9, -0.4])
    check_jvp(_trapezoid_of_squares, y)
    check_grad(_trapezoid_of_squares, y)


def test_module_level_index_arrays_in_hvp():
    """``x[IDX]`` / ``x[KEEP]`` with module-level index arrays (Numba's static_getitem of
    a constant array) are gathers in forward-over-reverse too (grad and jvp: corpus)."""
    from tests.corpus.array_reads import X5, module_level_selections
    check_hvp(module_level_selections, X5)


@numba.njit
def _appended(x):
    y = np.unique(x)
    z = y * 2.0
    return np.sum(z)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_refused_call_is_named_at_its_own_line(mode):
    """Reverse mode used to cite the line that first used the refused array
    (``z = y * 2.0``); both modes name the call's line."""
    x = np.array([1.0, 2.0, 3.0])
    run = adjit.grad(_appended) if mode == "grad" else lambda v: adjit.jvp(_appended)(v, v)
    with pytest.raises(adjit.UnsupportedError) as err:
        run(x)
    assert "'np.unique'" in str(err.value)
    assert "y = np.unique(x)" in str(err.value)
    assert "z = y * 2.0" not in str(err.value)


@numba.njit
def _eigenvectors_of_eig(a):
    w, v = np.linalg.eig(a)
    return np.sum(v ** 2)


def _eigenvalues_real_part(a):
    w, v = np.linalg.eig(a)
    return np.sum(w.real ** 2)


def _nuclear_norm(a):
    # (ord=2 is differentiated now, float64 and float32: rules/axis_reductions)
    return np.linalg.norm(a, "nuc")


@pytest.mark.parametrize("mode", ["grad", "jvp"])
@pytest.mark.parametrize("f, a, words", [
    # an item of an unpacked tuple (this was u, s, vt = np.linalg.svd(a), for which
    # reverse mode named 's', before svd had rules)
    (_eigenvectors_of_eig, np.array([[2.0, 0.3], [0.1, 1.0]]),
     ["'np.linalg.eig'", "w, v = np.linalg.eig(a)"]),
    # w.real of w, v = np.linalg.eig(a): reverse mode named "an intermediate array" at
    # the w.real line
    (_eigenvalues_real_part, np.array([[2.0, 0.3], [0.1, 1.0]]),
     ["'np.linalg.eig'", "w, v = np.linalg.eig(a)"]),
    # np.linalg.norm(A, 2) of a float32 matrix was refused as 'norm' on arrays
    (_nuclear_norm, np.array([[2.0, 0.3], [0.1, 1.0]]),
     ["'np.linalg.norm' with these arguments"]),
], ids=["eig_item", "eig_item_attribute", "norm_ord"])
def test_a_refused_call_is_named_as_written_on_its_own_line(f, a, words, mode):
    """Both modes name the call no rule covers, not a value made from its result."""
    run = adjit.grad(f) if mode == "grad" else (lambda v: adjit.jvp(f)(v, v))
    with pytest.raises(adjit.UnsupportedError) as err:
        run(a)
    for w in words:
        assert w in str(err.value)


def _recomputed_method_copy(a, x, out):
    out[0] = math.tanh(x)
    arr2 = a.copy()
    w4 = 0.3 * arr2[0] * x
    k3 = 0
    while w4 < 1.5 and k3 < 7:
        if x > arr2[1]:
            out[2] = x * arr2[0]
        x = 0.8 * x + 0.2 * math.tanh(w4)
        w4 = w4 + 0.3 + 0.2 * math.sin(x * arr2[1])
        k3 += 1
    return 0.5 * x + 0.3 * w4 + 0.2 * np.sum(out)


def test_hvp_of_an_array_method_the_reverse_pass_recomputes():
    """Fuzzer seed 80808 #231 and #253: the reverse pass recomputes ``arr2 = a.copy()``
    (or ``.cumsum()``) in each block that reads it, so the method's getattr is assigned
    several times; forward mode over that reverse pass refused the call as an unknown
    'BoundFunction(array.copy ...)'. The same method assigned again is one definition."""
    a = np.array([-1.391, -0.634, -1.218])
    out = np.array([-0.992, 1.261, -0.807])
    check_hvp(_recomputed_method_copy, a, -1.309, out, argnums=(0, 1))


@numba.experimental.jitclass([("k", numba.float64), ("c", numba.float64)])
class _Spring:
    def __init__(self, k, c):
        self.k = k
        self.c = c

    def force(self, x):
        return -self.k * x - self.c * x * x


def _spring_energy(k, x):
    s = _Spring(k, 0.1)
    return s.force(x) * x


@pytest.mark.parametrize("mode,words", [
    ("grad", r"(?s)passing 's', a @jitclass _Spring instance holding differentiated "
             r"values, to a call.*_spring_energy.*return s.force\(x\) \* x.*pass those"),
    ("jvp", r"(?s)'_Spring'.*_spring_energy.*s = _Spring\(k, 0.1\).*@jitclass instance "
            r"holding differentiated values.*instead of storing them in its fields"),
    ("hvp", r"(?s)a @jitclass _Spring instance holding differentiated values.*"
            r"_spring_energy")], ids=["grad", "jvp", "hvp"])
def test_a_jitclass_made_from_differentiated_values_is_refused_in_the_users_words(mode,
                                                                                   words):
    # grad named Numba's type (with an address), jvp and hvp said only "no
    # differentiation rule is registered for it", which reads as a missing math rule
    calls = {"grad": lambda: adjit.grad(_spring_energy)(1.5, 0.3),
             "jvp": lambda: adjit.jvp(_spring_energy)(1.5, 0.3, 1.0, 0.0),
             "hvp": lambda: adjit.hvp(_spring_energy)(1.5, 0.3, 1.0)}
    with pytest.raises(adjit.UnsupportedError, match=words) as info:
        calls[mode]()
    assert "#" not in str(info.value)  # no type name with an address


@numba.njit
def _range_and_mean(x):
    return (np.min(x), np.max(x)), np.sum(x) / x.shape[0]


def _spread_times_mean(x):
    (lo, hi), m = _range_and_mean(x)
    return (hi - lo) * m


@numba.njit
def _two_pairs(v):
    return (v[0] * v[1], v[2]), (v[1], v[0])


def _pairs_product(x):
    a, b = _two_pairs(x)
    return a[0] * b[1] + a[1] * b[0]


@pytest.mark.parametrize("f, read, value, tangent", [
    (_spread_times_mean, "a float64",  # it printed Tuple(UniTuple(float64 x 2), float64)
     lambda x: (x[1] - x[2]) * np.mean(x),
     lambda x, v: (v[1] - v[2]) * np.mean(x) + (x[1] - x[2]) * np.mean(v)),
    (_pairs_product, "a tuple",  # it printed "reading a UniTuple(float64 x 2) out of ..."
     lambda x: x[0] * x[1] * x[0] + x[2] * x[1],
     lambda x, v: 2 * x[0] * x[1] * v[0] + x[0] ** 2 * v[1] + v[2] * x[1] + x[2] * v[1]),
], ids=["float", "tuple"])
def test_a_value_read_out_of_a_nested_tuple_is_refused_in_the_users_words(f, read, value,
                                                                          tangent):
    """Reverse mode refuses a value read out of a nested tuple in words, not Numba's
    types, with the flat-tuple fix; forward mode differentiates it (closed forms)."""
    x = np.array([0.3, 1.2, -0.5])
    with pytest.raises(adjit.UnsupportedError,
                       match=rf"(?s)reading {read} out of a nested tuple.*{f.__name__}"
                             r".*return a flat tuple") as info:
        adjit.grad(f)(x)
    assert "UniTuple" not in str(info.value)
    v = np.array([0.5, -1.0, 2.0])
    got_value, got_tangent = adjit.jvp(f)(x, v)
    assert got_value == pytest.approx(value(x), rel=1e-14)
    assert got_tangent == pytest.approx(tangent(x, v), rel=1e-14)
    check_jvp(f, x)


@numba.njit
def _first_times_inner(t):
    return t[0] * t[1][0]


def _nested_tuple_argument(x):
    return _first_times_inner((x, (x * x, 1.0)))


def test_a_nested_tuple_passed_to_a_helper_is_refused_in_the_users_words():
    # it printed Numba's type, Tuple(float64, Tuple(float64, float64)); a tuple built in
    # the call has no name of its own, so none is shown
    with pytest.raises(adjit.UnsupportedError,
                       match=r"(?s)passing a nested tuple holding differentiated values to "
                             r"a call.*_nested_tuple_argument.*flat tuples") as info:
        adjit.grad(_nested_tuple_argument)(0.7)
    assert "Tuple(" not in str(info.value)
    assert adjit.jvp(_nested_tuple_argument)(0.7, 1.0)[1] == pytest.approx(3 * 0.7 ** 2)


def _flat_item(x):
    return x.flat[2] * x[0]


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_an_element_of_flat_is_refused_with_what_to_write(mode):
    """``x.flat[k]`` has no rule (``for v in x.flat`` has): reverse mode named Numba's
    iterator type and spoke of tuples; both modes now say to index the array."""
    x = np.linspace(0.5, 2.0, 4)
    with pytest.raises(adjit.UnsupportedError, match=r"\.flat.*\n.*\n.*index the array"):
        if mode == "grad":
            adjit.grad(_flat_item)(x)
        else:
            adjit.jvp(_flat_item)(x, x)
