"""``capture/normalise.UnknownStaticIndexToGetitem``: a comprehension inside a loop reads
``X[i]`` with the loop's ``i``, which Numba's IR names as a ``static_getitem`` with an
index it could not know (``None``). Forward mode took that ``None`` for ``np.newaxis``
(an internal ``IndexError`` or ``TypingError``). Every mode against finite differences."""
import numpy as np

from adjit.testing import check_grad, check_hvp, check_jvp

RNG = np.random.default_rng(3)
P4 = RNG.uniform(-1.0, 1.0, (4, 3))


def comprehension_in_a_loop(c, X):
    s = 0.0
    for i in range(X.shape[0]):
        d = np.array([np.sum((X[i] - c[k]) ** 2) for k in range(c.shape[0])])
        s += np.sum(d * X[i, 0])
    return s


ARGS = (P4[:2].copy(), P4[::-1].copy())


def test_grad():
    check_grad(comprehension_in_a_loop, *ARGS, argnums=(0, 1))


def test_jvp():
    check_jvp(comprehension_in_a_loop, *ARGS)


def test_hvp():
    check_hvp(comprehension_in_a_loop, *ARGS, argnums=(0, 1))
