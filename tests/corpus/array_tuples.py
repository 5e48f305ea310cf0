"""Helpers that return or take tuples holding arrays, as Numba code writes them: option
prices ``call, put = black_scholes(...)``, indicator bands, a leapfrog step
``a, b = step(a, b)`` in a loop, a state tuple ``state = step(state, h)`` carried
through loops (of arrays, of floats), passed from step to step or picked in a branch,
an unused item ``call, _ = ...``, ``t[1]``, a mixed ``(array, float, out)`` result, an ``out=`` argument handed back as an item, a tuple
argument passed on to another helper, ``*arrays`` parameters and ``for a in arrays``
over them or over a tuple built in the function, and a parameter tuple spread into a
call (``RS(X, t, *args)``)."""
import math

import numba
import numpy as np

from . import Case


@numba.njit
def _cnd(d):
    # the cumulative normal distribution of the numba-examples Black-Scholes code
    A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
    RSQRT2PI = 0.39894228040143267794
    K = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    ret_val = (RSQRT2PI * np.exp(-0.5 * d * d)
               * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    return np.where(d > 0, 1.0 - ret_val, ret_val)


@numba.njit
def _black_scholes(stock_price, option_strike, option_years, riskfree, volatility):
    S, X, T = stock_price, option_strike, option_years
    R, V = riskfree, volatility
    sqrtT = np.sqrt(T)
    d1 = (np.log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    cndd1 = _cnd(d1)
    cndd2 = _cnd(d2)
    expRT = np.exp(- R * T)
    call_result = S * cndd1 - X * expRT * cndd2
    put_result = X * expRT * (1.0 - cndd2) - S * (1.0 - cndd1)
    return call_result, put_result


def option_book_value(S, X, vol):
    call, put = _black_scholes(S, X, np.full(S.shape, 0.75), 0.02, vol)
    return np.sum(call) - 0.5 * np.sum(put * put)


@numba.njit
def _bollinger(close, period, k):
    n = close.shape[0]
    mid = np.full(n, np.nan)
    upper = np.full(n, np.nan)
    lower = np.full(n, np.nan)
    for i in range(period - 1, n):
        window = close[i - period + 1:i + 1]
        m = window.mean()
        sd = math.sqrt(np.sum((window - m) ** 2) / period)
        mid[i] = m
        upper[i] = m + k * sd
        lower[i] = m - k * sd
    return mid, upper, lower


def band_width(close, k):
    mid, upper, lower = _bollinger(close, 3, k)
    return np.sum((upper[2:] - lower[2:]) / mid[2:])


@numba.njit
def _forward_and_discount(S, X, vol):
    # a cheaper pair of arrays (the Black-Scholes one takes minutes to compile under hvp)
    d = np.log(S / X) / vol
    return S * np.exp(-0.5 * d * d), X * np.exp(-vol * d)


def unused_item(S, X, vol):
    call, _ = _forward_and_discount(S, X, vol)
    return np.sum(call * call)


def indexed_item(S, X, vol):
    prices = _forward_and_discount(S, X, vol)
    return np.sum(prices[1] ** 2)


@numba.njit
def _features(x, out):
    energy = 0.0
    y = np.empty_like(x)
    for i in range(x.shape[0]):
        y[i] = math.sin(x[i])
        out[i] = x[i] * 2.0
        energy += x[i] ** 2
    return y, energy, out


def mixed_items(x):
    out = np.zeros_like(x)
    y, energy, o = _features(x, out)
    return np.sum(y * o) + 3.0 * energy + np.sum(out)


@numba.njit
def _leapfrog(q, p, h):
    return q + h * p, p - h * np.sin(q)


def pendulum_loop(q0, h):
    q = q0.copy()
    p = np.zeros_like(q0)
    for _ in range(4):
        q, p = _leapfrog(q, p, h)
    return np.sum(q * q) + np.sum(p)


@numba.njit
def _accel_potential(pos, mass, accel, potential):
    # fills the out= arrays it is given and hands them back, as N-body codes do
    n = pos.shape[0]
    for i in range(n):
        accel[i] = 0.0
        potential[i] = 0.0
        for j in range(n):
            if i != j:
                d = pos[j] - pos[i]
                r = math.sqrt(d * d + 0.1)
                accel[i] += mass[j] * d / (r * r * r)
                potential[i] -= mass[j] / r
    return accel, potential


def returned_out_arguments(pos, mass, accel, potential):
    a, p = _accel_potential(pos, mass, accel, potential)
    return np.sum(a * a) + np.sum(p)


@numba.njit
def _weighted_energy(t, c):
    a, b = t[0], t[1]
    return np.sum(a * b) * c + t[0][1] * t[2]


@numba.njit
def _relay_energy(t, c):
    # a tuple argument passed on to another helper
    return _weighted_energy(t, 2.0 * c)


def tuple_argument(x, c):
    return _relay_energy((x, np.sin(x), c), c) + _weighted_energy((np.cos(x), x, 1.0), c)


@numba.njit
def _sum_of_products(scale, *arrays):
    # *args helpers take their trailing arguments as one tuple
    return scale * (np.sum(arrays[0] * arrays[1]) + np.sum(arrays[2] ** 2))


def star_arguments(x, y):
    return _sum_of_products(0.5, x, y * y, x) + _sum_of_products(2.0, y, x, np.ones(3))


@numba.njit
def _decay(x, t, a, b):
    return -a * x + b * np.sin(t)


@numba.njit
def _euler_step(RS, X, t, h, args):
    # rotary_states' integrators: the right-hand side and its parameters are arguments,
    # spread with *args into the call
    return h * RS(X, t, *args)


def integrate_with_parameter_tuple(x0, a):
    X = x0.copy()
    for i in range(3):
        X = X + _euler_step(_decay, X, 0.1 * i, 0.1, (a, 0.5))
    return np.sum(X * X)


@numba.njit
def _cubic_damping(y, a, b):
    return -a * y - b * y ** 3


@numba.njit
def _euler_forwarding(y0, n, *args):
    # scipy's convention: the helper takes *args and forwards them to the right-hand side
    y = y0
    for _ in range(n):
        y = y + 0.05 * _cubic_damping(y, *args)
    return y


def forwards_star_arguments(y0, a):
    return _euler_forwarding(y0, 10, a, 1.0) ** 2 + _euler_forwarding(a, 3, y0, a)


@numba.njit
def _oscillator(t, y, k, c):
    return np.array([y[1], -k * y[0] - c * y[1] + 0.1 * np.sin(t)])


@numba.njit
def _rk2(f, y0, dt, n, *args):
    # the right-hand side is an argument too, called with the forwarded *args
    y = y0.copy()
    t = 0.0
    for _ in range(n):
        k1 = f(t, y, *args)
        k2 = f(t + dt, y + dt * k1, *args)
        y = y + 0.5 * dt * (k1 + k2)
        t += dt
    return y


def forwards_star_arguments_to_an_argument(y0, k):
    y = _rk2(_oscillator, y0, 0.1, 5, k, 0.3)
    return np.sum(y * y)


@numba.njit
def _nearest(P, q, k):
    # a k-nearest query returning (indices, distances): an integer array beside a float one
    d = np.sum((P - q) ** 2, axis=1)
    order = np.argsort(d)[:k]
    return order, np.sqrt(d[order])


def nearest_neighbour_energy(P, q):
    idx, dist = _nearest(P, q, 3)
    return np.sum(dist) + np.sum(P[idx, 1] * dist)


@numba.njit
def _bins(centres):
    # bin edges and widths of a grid of centres, returned as a pair of arrays
    n = centres.shape[0]
    edges = np.zeros(n + 1)
    edges[1:-1] = 0.5 * (centres[1:] + centres[:-1])
    edges[0] = centres[0] - 0.5 * (centres[1] - centres[0])
    edges[-1] = centres[-1] + 0.5 * (centres[-1] - centres[-2])
    return edges, edges[1:] - edges[:-1]


def flux_conserving_resample(new_wavs, old_wavs, fluxes, errs):
    # the SpectRes idiom: the end widths are scaled in place for one new bin, read, and
    # scaled back (the reverse pass must see them as they were at each read)
    old_edges, old_widths = _bins(old_wavs)
    new_edges, _ = _bins(new_wavs)
    total = 0.0
    start = 0
    stop = 0
    for j in range(new_wavs.shape[0]):
        while old_edges[start + 1] <= new_edges[j]:
            start += 1
        while old_edges[stop + 1] < new_edges[j + 1]:
            stop += 1
        f = (old_edges[start + 1] - new_edges[j]) / (old_edges[start + 1] - old_edges[start])
        g = (new_edges[j + 1] - old_edges[stop]) / (old_edges[stop + 1] - old_edges[stop])
        old_widths[start] *= f
        old_widths[stop] *= g
        w = old_widths[start:stop + 1]
        flux = np.sum(w * fluxes[start:stop + 1]) / np.sum(w)
        err = np.sqrt(np.sum((w * errs[start:stop + 1]) ** 2)) / np.sum(w)
        total += flux * (j + 1.0) + err
        old_widths[start] /= f
        old_widths[stop] /= g
    return total


@numba.njit
def _norms(scale, *arrays):
    s = 0.0
    for a in arrays:  # a homogeneous tuple, iterated: a = arrays[k]
        s += scale * np.sqrt(np.sum(a * a)) * a[0]
    return s


def iterates_star_arrays(x, y):
    return _norms(2.0, x, y * y, np.ones(3))


def iterates_built_tuple(X, Y):
    s = 0.0
    for M in (X, np.sin(Y), X * Y):
        for i in range(M.shape[0]):
            s += np.sum(M[i] * M[i]) * M[i, 0]
    return s


@numba.njit
def _verlet(state, h):
    pos, vel = state
    acc = -np.sin(pos)
    return (pos + h * vel + 0.5 * h * h * acc, vel + h * acc)


def state_tuple_loop(q0, h):
    """A Verlet integrator carrying ``state = (pos, vel)`` through its loop, its energy
    read off each new state."""
    state = (q0.copy(), np.zeros_like(q0))
    e = 0.0
    for _ in range(3):
        state = _verlet(state, h)
        e += np.sum(state[1] * state[1])
    return e + np.sum(state[0] ** 2) + np.sum(np.cos(state[1]))


def state_passed_on(q0, h):
    """Two steps: the state one call returned is passed straight on to the next."""
    first = _verlet((q0, np.sin(q0)), h)
    second = _verlet(first, 2.0 * h)
    return np.sum(second[0] * first[1]) + np.sum(second[1] ** 2)


@numba.njit
def _welford(acc, v):
    n, mean, m2 = acc
    n += 1.0
    d = v - mean
    mean += d / n
    return n, mean, m2 + d * (v - mean)


def float_state_in_nested_loops(X):
    """Running moments ``acc = (n, mean, m2)`` carried through two nested loops."""
    acc = (0.0, 0.0, 0.0)
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            acc = _welford(acc, X[i, j] * X[i, 0])
    n, mean, m2 = acc
    return mean * m2 / n


@numba.njit
def _pair_of_arrays(x):
    return x * 2.0, np.sin(x)


def tuple_from_branches(x, c):
    """A tuple of arrays made by a call on one branch and built on the other."""
    if c > 0:
        t = _pair_of_arrays(x)
    else:
        t = (x, x * c)
    a, b = t
    return np.sum(a * b)


CASES = [
    Case(option_book_value, (np.linspace(9.0, 11.0, 4), np.linspace(9.5, 10.5, 4),
                             np.linspace(0.2, 0.3, 4)), (0, 1, 2)),
    Case(band_width, (np.array([1.0, 1.3, 0.9, 1.6, 1.2, 1.8]), 2.0), (0, 1)),
    Case(unused_item, (np.linspace(9.0, 11.0, 3), np.full(3, 10.0), np.full(3, 0.25)),
         (0, 2)),
    Case(indexed_item, (np.linspace(9.0, 11.0, 3), np.full(3, 10.0), np.full(3, 0.25)),
         (0, 1)),
    Case(mixed_items, (np.linspace(0.2, 1.4, 5),)),
    Case(pendulum_loop, (np.linspace(0.1, 0.9, 4), 0.1), (0, 1)),
    Case(tuple_argument, (np.linspace(0.1, 0.9, 3), 1.3), (0, 1)),
    Case(star_arguments, (np.linspace(0.1, 0.9, 3), np.array([1.5, -0.5, 0.7])), (0, 1)),
    Case(integrate_with_parameter_tuple, (np.linspace(0.2, 1.0, 3), 0.7), (0, 1)),
    Case(forwards_star_arguments, (0.5, 0.3), (0, 1)),
    Case(nearest_neighbour_energy, (np.array([[0.1, 0.3], [1.2, -0.4], [-0.7, 0.9], [0.5, 0.5],
                                              [2.0, 1.0]]), np.array([0.2, 0.1])), (0, 1)),
    Case(forwards_star_arguments_to_an_argument, (np.array([0.8, -0.2]), 1.7), (0, 1)),
    Case(flux_conserving_resample, (np.array([1.13, 1.36, 1.62, 1.83]), np.linspace(1.0, 2.0, 11),
                                    1.0 + 0.3 * np.sin(np.linspace(3.0, 6.0, 11)),
                                    0.05 + 0.01 * np.arange(11.0)), (2, 3)),
    Case(iterates_star_arrays, (np.linspace(0.1, 0.9, 3), np.array([1.5, -0.5, 0.7])), (0, 1)),
    Case(iterates_built_tuple, (np.arange(6.0).reshape(2, 3) / 7.0,
                                np.cos(np.arange(6.0)).reshape(2, 3)), (0, 1)),
    Case(state_tuple_loop, (np.linspace(0.1, 0.9, 3), 0.2), (0, 1)),
    Case(state_passed_on, (np.linspace(0.1, 0.9, 3), 0.2), (0, 1)),
    Case(float_state_in_nested_loops, (np.array([[0.4, 1.1, -0.3], [0.9, 0.2, 1.5]]),)),
    Case(tuple_from_branches, (np.linspace(0.1, 0.9, 3), 1.0), id="tuple_from_branches_call"),
    Case(tuple_from_branches, (np.linspace(0.1, 0.9, 3), -1.5), (0, 1),
         id="tuple_from_branches_built"),
    Case(returned_out_arguments, (np.array([0.0, 0.7, 1.9, 3.2]), np.array([1.0, 2.0, 0.5, 1.5]),
                                  np.zeros(4), np.zeros(4)), (0, 1)),
]
