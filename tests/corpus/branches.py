"""if / elif / else, nested branches and the ternary operator."""
import math

import numpy as np

from . import Case


def if_else(x):
    if x > 0.0:
        y = x * x
    else:
        y = -x * 3.0
    return y + x


def if_no_else(x):
    y = 2.0 * x
    if x < 1.0:
        y = y * x
    return y


def if_elif_else(x):
    if x < -1.0:
        y = x * x
    elif x < 1.0:
        y = math.sin(x) * 2.0
    else:
        y = x ** 3
    return y - x


def nested_if(x, y):
    if x > 0.0:
        if y > 0.0:
            r = x * y
        else:
            r = x - y
    else:
        if y > 1.0:
            r = x * x * y
        else:
            r = y / (1.0 + x * x)
    return r


def ternary(x):
    y = x * x if x > 0.5 else x * 3.0
    return y * x


def ternary_in_expr(x, y):
    return (x if x > y else y) * 2.0 + x * y


def condition_on_product(x, y):
    # condition depends on a computed float
    p = x * y
    if p > 1.0:
        return p * p
    return p + 1.0


def bool_and_or(x, y):
    if x > 0.0 and y > 0.0:
        r = x * y
    elif x > 0.0 or y > 0.0:
        r = x + y
    else:
        r = -x - y
    return r * r


def branch_merges_two_values(x):
    a = x
    b = 2.0 * x
    if x > 1.0:
        a = x * x
    else:
        b = b * x
    return a * b


CASES = [
    Case(if_else, (1.3,), id="if_else_pos"),
    Case(if_else, (-0.8,), id="if_else_neg"),
    Case(if_no_else, (0.5,), id="if_no_else_taken"),
    Case(if_no_else, (2.5,), id="if_no_else_skipped"),
    Case(if_elif_else, (-2.0,), id="if_elif_else_first"),
    Case(if_elif_else, (0.3,), id="if_elif_else_mid"),
    Case(if_elif_else, (1.7,), id="if_elif_else_last"),
    Case(nested_if, (0.7, 1.2), (0, 1), id="nested_if_pp"),
    Case(nested_if, (0.7, -1.2), (0, 1), id="nested_if_pn"),
    Case(nested_if, (-0.7, 1.5), (0, 1), id="nested_if_np"),
    Case(nested_if, (-0.7, 0.2), (0, 1), id="nested_if_nn"),
    Case(ternary, (0.9,), id="ternary_true"),
    Case(ternary, (0.2,), id="ternary_false"),
    Case(ternary_in_expr, (1.5, 0.5), (0, 1)),
    Case(condition_on_product, (1.5, 1.2), (0, 1)),
    Case(bool_and_or, (0.5, -0.4), (0, 1)),
    Case(branch_merges_two_values, (1.4,)),
]


def stacked_in_one_branch(a, b):
    """One branch picks a stacked array, the other a local one; the reverse pass reads the
    stacked result (its rule's ``ans``), which no primal statement of its block reads."""
    c = a * 2.0
    if a[0, 0] > 0.0:
        d = np.hstack((a, b))
    else:
        d = c
    return np.sum(c * np.arange(6).reshape(2, 3)) + np.sum(d * d)


_A23 = np.array([[0.5, -1.0, 2.0], [0.3, 0.7, -0.2]])

CASES += [
    Case(stacked_in_one_branch, (_A23, _A23[::-1].copy()), (0, 1), id="stacked_taken"),
    Case(stacked_in_one_branch, (-_A23, _A23), (0, 1), id="stacked_not_taken"),
]
