"""Elementwise maps of Fortran-ordered operands (``f(X.T)``): Numba's ufuncs and
``np.where``/``np.clip``/``np.sinc`` give a Fortran-ordered result there, and the
statements reading it are typed for that layout. adjit's map helpers made a C-ordered
one, so these calls were refused (as having no rule) for the most common view there is."""
import math

import numba
import numpy as np
import pytest

import adjit
from adjit.testing import check_grad, check_hvp, check_jvp


@numba.vectorize
def _softplus(z):
    return math.log1p(math.exp(z))


_W = np.arange(4.0)  # weights of the transposed rows: a transpose error would show


def _vectorized(X):
    return np.sum(_softplus(X.T) * _W)


def _where(X):
    return np.sum(np.where(X.T > 0, X.T, 0.1 * X.T) ** 2 * _W)


def _clip(X):
    return np.sum(np.clip(X.T, -0.5, 0.5) ** 2 * _W)


def _sinc(X):
    return np.sum(np.sinc(X.T) * _W)


@pytest.mark.parametrize("f", [_vectorized, _where, _clip, _sinc])
def test_maps_of_a_transposed_operand_in_every_mode(f):
    X = np.random.default_rng(0).standard_normal((4, 5))
    check_grad(f, X)
    check_jvp(f, X)
    check_hvp(f, X)


@numba.stencil
def _smooth(u):
    return 0.25 * (u[0, -1] + 2 * u[0, 0] + u[0, 1])


def _stencil_of_transpose(X):
    return np.sum(_smooth(X.T) ** 2)


def test_a_stencil_of_a_transpose_is_refused_with_the_copy_as_advice():
    with pytest.raises(adjit.UnsupportedError, match=r"Fortran-ordered.*ascontiguousarray"):
        adjit.grad(_stencil_of_transpose)(np.ones((4, 5)))
