"""min, max and abs, away from ties and from zero."""
import numpy as np

from . import Case


def relu(x):
    return max(x, 0.0)


def min_two(x, y):
    return min(x, y) * (x + y)


def max_two_computed(x, y):
    return max(x * x, y + 1.0) + x


def abs_diff(x, y):
    return abs(x - y) * x


def l1_norm(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += abs(x[i])
    return s


def clamp(x):
    return min(max(x, -1.0), 1.0) * x


def max_three(x, y, z):
    return max(x, y, z) * 2.0


def running_min(x):
    m = 1e300
    for i in range(x.shape[0]):
        m = min(m, x[i] * x[i] + 0.1 * i)
    return m


X5 = np.array([0.9, -0.45, 1.3, -0.8, 0.65])

CASES = [
    Case(relu, (0.7,), id="relu_pos"),
    Case(relu, (-0.7,), id="relu_neg"),
    Case(min_two, (0.3, 0.8), (0, 1), id="min_two_first"),
    Case(min_two, (0.9, 0.2), (0, 1), id="min_two_second"),
    Case(max_two_computed, (1.3, 0.2), (0, 1), id="max_two_computed_first"),
    Case(max_two_computed, (0.5, 0.9), (0, 1), id="max_two_computed_second"),
    Case(abs_diff, (0.3, 1.1), (0, 1), id="abs_diff_neg"),
    Case(abs_diff, (1.3, 0.1), (0, 1), id="abs_diff_pos"),
    Case(l1_norm, (X5,)),
    Case(clamp, (0.4,), id="clamp_inside"),
    Case(clamp, (1.6,), id="clamp_above"),
    Case(clamp, (-2.1,), id="clamp_below"),
    Case(max_three, (0.2, 1.4, 0.6), (0, 1, 2)),
    Case(running_min, (X5,)),
]


def builtin_max_min_of_array(x):
    """``max(x)`` and ``min(x)`` of a 1-D array: its first maximal (minimal) element."""
    return 2.0 * max(x) - min(x) + np.sum(x * x)


CASES += [Case(builtin_max_min_of_array, (X5,))]
