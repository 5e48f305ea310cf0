"""Numba idioms as people write them: ``out=`` arrays, stencil sweeps into ``unew``, slice
writes, helpers that return new arrays, loop-carried arrays (ODE integrators, power
iteration), ``.copy()``, ``.T``, ``reshape``, ``np.cross``, ``math.lgamma``, ``@vectorize``
ufuncs, in-place array operators, ``X.dot(w)``, keyword and default arguments,
``dtype=`` and ``type(x)(...)``, ``np.array`` of literals, array comprehensions, ``@stencil`` kernels and ``@jitclass``
methods."""
import math

import numba
import numpy as np
from numba.experimental import jitclass

from . import Case

RNG = np.random.default_rng(3)
X6 = RNG.uniform(0.2, 1.2, 6)
P4 = RNG.uniform(-1.0, 1.0, (4, 3))
A3 = np.array([[2.0, 0.3, 0.1], [0.2, 1.0, 0.4], [0.1, 0.5, 1.5]])
V3 = np.array([0.5, 0.8, 1.1])


@numba.njit
def _jacobi_sweep(u, unew):
    """Writes the interior of ``unew`` from ``u`` (the stencil-into-unew pattern)."""
    n = u.shape[0]
    for i in range(1, n - 1):
        unew[i] = 0.5 * (u[i - 1] + u[i + 1]) + 0.1 * u[i] * u[i]


def jacobi_out_argument(u, unew):
    _jacobi_sweep(u, unew)
    s = 0.0
    for i in range(unew.shape[0]):
        s += unew[i] ** 2
    return s


def fill_out_argument(x, out):
    for i in range(x.shape[0]):
        out[i] = math.sin(x[i]) * x[i]
    return np.sum(out * out)


def jacobi_local_copy(u0):
    u = u0.copy()
    unew = np.zeros_like(u)
    for _ in range(3):
        _jacobi_sweep(u, unew)
        u[1:-1] = unew[1:-1]
    return np.sum(u * u)


def shifted_products(x):
    y = np.zeros(x.shape[0])
    y[1:] = x[:-1] * x[1:]
    y[0] = x[0]
    return np.sum(np.sin(y))


def column_writes(x, v):
    out = np.zeros((v.shape[0], 2))
    for j in range(2):
        out[:, j] = v * x[j]
    return np.sum(out ** 2)


def masked_zero(x):
    y = x * x
    y[x > 0.7] = 0.0
    return np.sum(y * x)


@numba.njit
def _rhs(y, k):
    """A right-hand side that returns a new array."""
    return -k * y * y + np.sin(y)


def euler_loop_carried(y0, k):
    y = y0
    for _ in range(5):
        y = y + 0.1 * _rhs(y, k)
    return np.sum(y * y)


@numba.njit
def _rk4_step(y, h, k):
    k1 = _rhs(y, k)
    k2 = _rhs(y + 0.5 * h * k1, k)
    k3 = _rhs(y + 0.5 * h * k2, k)
    k4 = _rhs(y + h * k3, k)
    return y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def rk4_trajectory(y0, k):
    y = y0
    traj = np.zeros((4, y0.shape[0]))
    for i in range(4):
        y = _rk4_step(y, 0.1, k)
        traj[i, :] = y
    return np.sum(traj[-1] ** 2) + np.sum(traj[0])


def power_iteration(A, x):
    for _ in range(3):
        x = A @ x
        x = x / np.sqrt(np.sum(x * x))
    return x[0]


def helper_in_loop(x):
    s = 0.0
    for i in range(3):
        y = _rhs(x, 0.5 * i)
        s += np.sum(y * y)
    return s


def angular_momentum(pos, vel):
    total = 0.0
    for i in range(pos.shape[0]):
        L = np.cross(pos[i], vel[i])
        total += L[0] ** 2 + L[1] ** 2 + L[2] ** 2
    return total


def rotate_transpose(R, v):
    w = R.T @ v
    return np.sum(w * w)


def reshape_blocks(x):
    m = x.reshape(2, 3)
    return np.sum(np.sin(m[1]) * m[0])


@numba.vectorize
def _softplus(x, beta):
    return math.log1p(math.exp(beta * x)) / beta


@numba.vectorize(["float64(float64)"])
def _bump(x):
    return x * math.exp(-x * x)


def vectorize_ufuncs(x, beta):
    return np.sum(_softplus(x, beta) * _bump(x)) + _softplus(beta, 2.0)


def vectorize_2d(X):
    return np.sum(_bump(X) ** 2)


@numba.vectorize
def _rbf(a, b, lengthscale):
    d = a - b
    return math.exp(-0.5 * d * d / (lengthscale * lengthscale))


def vectorize_broadcast_kernel(lengthscale, x, z):
    # the usual RBF kernel matrix: a column against a row, broadcast by the ufunc
    K = _rbf(x[:, None], z[None, :], lengthscale)
    return np.sum(K * np.arange(1.0, 1.0 + K.size).reshape(K.shape))


@numba.njit
def _diffuse_row(src, dst, c):
    for i in range(1, src.shape[0] - 1):
        dst[i] = src[i] + c * (src[i + 1] - 2.0 * src[i] + src[i - 1])
    dst[0] = src[0]
    dst[-1] = src[-1]


def time_history_rows(u0, c):
    # a history array stepped row to row: two rows of one array, one written
    H = np.zeros((6, u0.shape[0]))
    H[0] = u0
    for t in range(5):
        _diffuse_row(H[t], H[t + 1], c)
    return np.sum(H[-1] ** 2) + np.sum(H[2] * H[3])


def vectorize_3d(T):
    # a ufunc over a 3-D field, as a volume's voxels
    return np.sum(_bump(T) * T)


def vectorize_into_out(x, beta):
    # a @vectorize ufunc given its output buffer positionally, as NumPy ufuncs take it
    buf = np.empty_like(x)
    _softplus(x, beta, buf)
    grid = np.empty((2, x.shape[0]))
    _bump(np.outer(x[:2], x), grid)
    return np.sum(buf * x) + np.sum(grid ** 2)


@numba.vectorize(["float64(float64, float64, float64, float64, float64, int64)"])
def _newton_vol(forward, strike, maturity, price, guess, max_iter):
    # Black (1976) call prices inverted for the volatility by Newton's method
    sigma = guess
    for _ in range(max_iter):
        sd = sigma * math.sqrt(maturity)
        d1 = (math.log(forward / strike) + 0.5 * sd * sd) / sd
        d2 = d1 - sd
        model = (forward * 0.5 * math.erfc(-d1 / math.sqrt(2.0))
                 - strike * 0.5 * math.erfc(-d2 / math.sqrt(2.0)))
        vega = forward * math.exp(-0.5 * d1 * d1) / math.sqrt(2.0 * math.pi) * math.sqrt(maturity)
        sigma -= (model - price) / vega
    return sigma


def vectorize_six_operands(forward, price):
    return np.sum(_newton_vol(forward, 100.0, 0.5, price, 0.3, 8) ** 2)


@numba.njit
def _logistic_regression(Y, X, w, iterations):
    # DSE512's example: updates its argument in place and returns it
    for i in range(iterations):
        w -= np.dot(((1.0 / (1.0 + np.exp(-Y * np.dot(X, w))) - 1.0) * Y), X)
    return w


def fitted_in_place(Y, X, w0):
    w = _logistic_regression(Y, X, w0.copy(), 3)
    return np.sum(w * w)


def gradient_descent_inplace(w0, g):
    w = w0.copy()
    for _ in range(3):
        w -= 0.1 * g * w
        w *= 1.01
    return np.sum(w * w)


def method_dot(X, w):
    z = X.dot(w)
    return np.sum(np.tanh(z))


@numba.njit
def _normal_logpdf(x, mu=0.0, sigma=1.0):
    z = (x - mu) / sigma
    return -0.5 * z * z - math.log(sigma)


def keyword_helper(x, s):
    total = 0.0
    for i in range(x.shape[0]):
        total += _normal_logpdf(x[i], sigma=s) + _normal_logpdf(x[i])
    out = np.zeros(x.shape[0], dtype=np.float64)
    out[:] = x * s
    T = type(s)
    return total + np.sum(out) * T(2)


def flat_iteration(a):
    s = 0.0
    for v in a.flat:
        s += v * v * v
    return s


def gamma_log_likelihood(shape, data):
    s = 0.0
    for x in data:
        s += (shape - 1.0) * math.log(x) - x - math.lgamma(shape)
    return -s


@numba.njit
def fill_then_overwrite(x):
    # a buffer filled with a differentiated value, then partly overwritten
    y = np.empty_like(x)
    y.fill(x[0] * x[1])
    y[1] = x[2]
    return np.sum(y * x)


def relu_clip_axis(X):
    # np.where / np.clip / a row sum with axis=, as data code writes them
    h = np.where(X > 0.0, X, 0.01 * X)
    s = h.sum(axis=1)
    return np.sum(np.clip(s, -1.0, a_max=1.0) ** 2)


def vector_literals(r, q):
    # orbital-mechanics style 3-vectors built with np.array from scalars, a matrix from
    # nested lists, and a Frobenius norm
    v = np.array([r[1] * q, r[2], 1.0])
    w = np.array((r[0], r[1] * r[2], 2))
    m = np.array([[r[0], q], [r[2], r[1]]])
    return np.dot(np.cross(v, w), v) + np.linalg.norm(m) * q


def comprehension_array(x):
    # an array comprehension, then a reduction over it
    a = np.array([math.sin(v) * v for v in x])
    return np.sum(a * a)


@numba.stencil
def _smooth2d(a):
    return 0.25 * (a[-1, 0] + a[1, 0] + a[0, -1] + a[0, 1])


@numba.stencil(cval=1.0)
def _gradient_energy(u, c):
    return c * (u[1] - u[-1]) ** 2 + math.sin(u[0])


@numba.stencil
def _wedge(a, b):
    return a[0] * b[1] - a[1] * b[0]


def stencil_smoothing(u):
    # a 2-D @stencil applied twice (its border is zero), then an energy
    for _ in range(2):
        u = _smooth2d(u)
    return np.sum(u * u)


def stencil_into_full_view(u, w):
    # out= a view of the whole buffer, and the call's own result left unused
    out = np.zeros_like(u)
    _smooth2d(u * w, out=out[:, :])
    return np.sum(out ** 2)


@numba.njit
def _blur_steps(u, iterations):
    # numba's gaussian-blur example: a stencil applied again and again, swapping arrays
    s = _gradient_energy(u, 0.5)
    for _ in range(iterations - 1):
        out = _gradient_energy(s, 0.5)
        s, out = out, s
    return s


def stencil_in_a_helper(u):
    # the helper returns a new array: it only reads u through the stencil calls
    return np.sum(_blur_steps(u, 3) ** 2)


@numba.njit
def _garch_recursion(parameters, fresids, sresids, sigma2, nobs, backcast):
    # arch's GARCH recursion: fills sigma2 (an argument) and returns it
    for t in range(nobs):
        sigma2[t] = parameters[0]
        if t == 0:
            sigma2[t] += (parameters[1] + 0.5 * parameters[2] + parameters[3]) * backcast
        else:
            sigma2[t] += parameters[1] * fresids[t - 1]
            sigma2[t] += parameters[2] * fresids[t - 1] * (sresids[t - 1] < 0)
            sigma2[t] += parameters[3] * sigma2[t - 1]
    return sigma2


def garch_loglikelihood(parameters, resids):
    # np.sign has no derivative; the helper's result is the array it was given
    fresids = np.abs(resids) ** 2.0
    sresids = np.sign(resids)
    sigma2 = np.empty_like(resids)
    out = _garch_recursion(parameters, fresids, sresids, sigma2, resids.shape[0], 0.8)
    return -0.5 * np.sum(np.log(out) + resids ** 2.0 / sigma2)


def ufuncs_into_out(x, y):
    # NumPy ufuncs given their output array positionally (dpbench style)
    d = np.empty_like(x)
    np.multiply(x, y, d)
    np.add(d, x, d)
    np.sqrt(d, d)
    return np.sum(d * y)


def dot_into_out(A, B):
    D = np.empty((A.shape[0], B.shape[1]))
    np.dot(A, B, D)
    D *= -2.0
    return np.sum(D * D)


def stencil_cval_scalar(u, c):
    # a stencil with a cval border and a scalar parameter
    return np.sum(_gradient_energy(u, c))


@numba.njit
def _jacobi_into(u, c, unew):
    # the kernel fills the interior of unew in place (out=) and leaves its border alone
    _wedge(u, c * u, out=unew)
    _gradient_energy(u, c, out=unew[1:])
    return unew


def stencil_into_out(u, c):
    unew = np.full_like(u, 0.5)
    r = _jacobi_into(u, c, unew)
    return np.sum(unew ** 2) + np.sum(np.sin(r))


@numba.njit
def _softened_energy(x, softening=None):
    # pytreegrav's optional array argument (Numba prunes the branch per type)
    if softening is None:
        softening = np.zeros_like(x)
    return np.sum(x * x * softening + np.sqrt(x * x + softening ** 2))


def optional_array_argument(x, s):
    return _softened_energy(x, s) + _softened_energy(x)


def written_for_nd_inputs(x, w):
    # np.shape and axis=-1 of a 1-D array, as code written for N-D inputs has them
    out = np.zeros(np.shape(x))
    out[:] = x * w
    return np.sum(np.square(out), axis=-1) + (x * w).sum(axis=0) * np.size(x)


def integrate_until(q0, h):
    # rotary_states' last_state: an in-place update in a value-dependent while loop
    X = q0.copy()
    t = 0.0
    while t + h < 0.35:
        X += h * np.sin(X)
        t += h
    return np.sum(X * X)


def stencil_two_inputs(a, b):
    # a stencil reading two arrays relatively
    return np.sum(_wedge(a, b) ** 2)


@jitclass([("k", numba.float64), ("w", numba.float64[:])])
class _Springs:
    """A @jitclass of parameters with a method, as simulation code writes them."""

    def __init__(self, k, w):
        self.k = k
        self.w = w

    def energy(self, x, scale=1.0):
        return 0.5 * self.k * scale * np.sum(self.w * x * x * x)


SPRINGS = _Springs(1.7, np.linspace(0.5, 1.5, 6))


def jitclass_parameters(x, springs):
    # a method of a @jitclass argument called with a keyword; its fields are constants
    return springs.energy(x, scale=0.5) + springs.k * math.sin(x[0])


def augmented_slice_updates(x, s):
    # ``op=`` into slices and columns: Python updates the view in place, then stores it
    # back into the same slice (a no-op store); a mask reads a copy and stores it back
    buf = np.empty(x.shape[0])
    buf.fill(s)
    buf[1:] *= x[1:]
    buf[::2] += x[1::2] * x[::2][: x[1::2].shape[0]].sum()
    buf[buf > 0.0] += 0.5 * s
    Y = np.outer(x, x)
    Y[:, 0] += buf
    Y[1] -= s * x
    buf += x
    return np.sum(buf * buf) + np.sum(np.sin(Y))


def repeated_index_writes(x, idx):
    # NumPy semantics: a position idx repeats is written once (the last write wins), and
    # y[idx] += v reads each position once
    y = x.copy()
    y[idx] += 1.0
    y[idx] *= x[idx]
    z = np.zeros_like(x)
    z[idx] = x[0] * x[1]
    z[idx] += x[idx] * x[idx]
    return np.sum(y * x) + np.sum(z * np.sin(x))


def swapped_buffers(x):
    # arrays exchanged between loop variables, both updated in place and both read after
    # the loop: the loop edge passes their adjoints on in parallel
    a = x.copy()
    b = x * 2.0
    for k in range(3):
        a += 0.5 * b * b
        for i in range(b.shape[0]):
            b[i] = b[i] * x[i]
        a, b = b, a
    return np.sum(a * x) + np.sum(b)


def overlapping_assignments(x):
    # a view of the same memory written into it (Numba copies first, as NumPy does)
    y = x * x
    y[:] = y[::-1]
    y[1:] = y[:-1] * 2.0
    y[:-1] = y[1:]
    Y = y.reshape((2, 3))
    Y[0] *= Y[1]  # rows of one array: disjoint (or the same), so no overlap question
    return np.sum(y * x)


@numba.njit
def _euler_step(w, dt):
    w += dt * w * w
    return w


@numba.njit
def _midpoint_step(w, dt):
    w += dt * np.sin(w + 0.5 * dt * np.sin(w))
    return w


def integrator_chosen_per_step(w0, dt):
    # orbital-mechanics code: one of two in-place steppers, chosen by a branch; both
    # return the array they update, so the branch merge is one array's memory
    w = np.copy(w0)
    for j in range(4):
        if j % 2 == 0:
            w = _euler_step(w, dt)
        else:
            w = _midpoint_step(w, dt)
    return np.sum(w * w)


def node_vector(r, v):
    # poliastro's rv2coe: the node vector is k x h, with k written as a list literal
    h = np.cross(r, v)
    n = np.cross([0, 0, 1], h) / np.linalg.norm(h)
    return np.sum(n * n) + np.dot(np.cross((1.0, 0.0, 0.0), v), r)


def method_and_asarray_forms(x, t):
    # x.take / x.repeat / x.conj as np.take / np.repeat / np.conj; np.asarray of a tuple
    idx = np.array([0, 2, 5, 2])
    m = np.asarray((t, t * t, 1.0))
    return (np.sum(x.take(idx) ** 2) + np.sum(x.repeat(2) * np.sin(x.repeat(2)))
            + np.sum(m ** 3) + np.sum(x.conj() * x.conjugate() * x) + np.sum(x.real ** 3))


CASES = [
    Case(method_and_asarray_forms, (X6, 0.4), (0, 1)),
    Case(swapped_buffers, (X6,)),
    Case(overlapping_assignments, (X6,)),
    Case(repeated_index_writes, (X6, np.array([0, 2, 0, 5, 2, -1]))),
    Case(augmented_slice_updates, (X6, 0.8), (0, 1)),
    Case(jacobi_out_argument, (X6, np.zeros(6)), 0),
    Case(fill_out_argument, (X6, np.zeros(6)), 0),
    Case(jacobi_local_copy, (X6,), 0),
    Case(shifted_products, (X6,), 0),
    Case(column_writes, (X6[:2].copy(), V3), (0, 1)),
    Case(masked_zero, (X6,), 0),
    Case(euler_loop_carried, (V3, 0.7), (0, 1)),
    Case(rk4_trajectory, (V3, 0.7), (0, 1)),
    Case(power_iteration, (A3, V3), (0, 1)),
    Case(helper_in_loop, (V3,), 0),
    Case(angular_momentum, (P4, P4[::-1].copy()), (0, 1)),
    Case(rotate_transpose, (A3, V3), (0, 1)),
    Case(reshape_blocks, (X6,), 0),
    Case(gamma_log_likelihood, (2.3, X6), 0),
    Case(vectorize_ufuncs, (X6, 0.8), (0, 1)),
    Case(vectorize_2d, (P4,), 0),
    Case(vectorize_broadcast_kernel, (0.7, np.linspace(0.0, 1.0, 5), np.linspace(0.1, 0.9, 3)),
         (0, 1, 2)),
    Case(vectorize_3d, (P4.reshape(2, 2, 3),), 0),
    Case(time_history_rows, (X6, 0.25), (0, 1)),
    Case(vectorize_into_out, (X6, 0.8), (0, 1)),
    Case(fitted_in_place, (np.array([1.0, -1.0, 1.0, 1.0]), P4[:, :3].copy(),
                           np.array([0.1, -0.2, 0.3])), (1, 2)),
    Case(vectorize_six_operands, (np.array([101.0, 99.0, 100.5]), np.array([7.5, 6.0, 7.0])),
         (0, 1)),
    Case(gradient_descent_inplace, (X6, X6[::-1].copy()), (0, 1)),
    Case(method_dot, (P4, V3), (0, 1)),
    Case(keyword_helper, (X6, 1.3), (0, 1)),
    Case(flat_iteration, (P4,), 0),
    Case(fill_then_overwrite, (X6,), 0),
    Case(relu_clip_axis, (P4,), 0),
    Case(vector_literals, (V3, 0.6), (0, 1)),
    Case(comprehension_array, (X6,), 0),
    Case(stencil_smoothing, (P4,), 0),
    Case(stencil_into_full_view, (P4, 0.7), (0, 1)),
    Case(stencil_cval_scalar, (X6, 0.7), (0, 1)),
    Case(stencil_in_a_helper, (X6,), 0),
    Case(ufuncs_into_out, (np.array([0.5, 1.2, 2.0]), np.array([1.1, 0.4, 0.9])), (0, 1)),
    Case(dot_into_out, (P4[:2, :2].copy(), P4[1:3, :].copy()), (0, 1)),
    Case(garch_loglikelihood, (np.array([0.1, 0.1, 0.05, 0.8]),
                               np.array([0.3, -0.5, 1.2, -0.1, 0.7, -0.9])), (0, 1)),
    Case(stencil_two_inputs, (X6, X6[::-1].copy()), (0, 1)),
    Case(stencil_into_out, (X6, 0.7), (0, 1)),
    Case(optional_array_argument, (X6, X6[::-1].copy()), (0, 1)),
    Case(written_for_nd_inputs, (X6, X6[::-1].copy()), (0, 1)),
    Case(integrate_until, (X6, 0.1), (0, 1)),
    Case(jitclass_parameters, (X6, SPRINGS), 0),
    Case(integrator_chosen_per_step, (X6, 0.1), (0, 1)),
    Case(node_vector, (np.array([1.1, 0.3, -0.4]), np.array([0.2, 0.9, 0.5])), (0, 1)),
]
