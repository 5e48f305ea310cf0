"""Several return statements: returns inside branches and loops."""
import math

from . import Case


def return_in_branch(x):
    if x > 2.0:
        return x * x
    return math.sin(x)


def return_in_both_branches(x, y):
    if x > y:
        return x - y * y
    else:
        return y - x * x


def return_from_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + x * (i + 1)
        if s > 10.0:
            return s * x
    return s


def return_from_while(x):
    y = x
    k = 0
    while True:
        y = y * 1.5 + 0.1
        k += 1
        if k >= 4:
            return y * x


def guard_clause(x, y):
    if y < 0.0:
        return 0.0
    if x < 0.0:
        return y
    return x * y + math.exp(-x)


CASES = [
    Case(return_in_branch, (2.5,), id="return_in_branch_taken"),
    Case(return_in_branch, (1.5,), id="return_in_branch_fallthrough"),
    Case(return_in_both_branches, (1.2, 0.3), (0, 1)),
    Case(return_from_loop, (1.3, 10), id="return_from_loop_early"),
    Case(return_from_loop, (0.1, 5), id="return_from_loop_late"),
    Case(return_from_while, (0.7,)),
    Case(guard_clause, (0.6, 1.1), (0, 1), id="guard_clause_last"),
    Case(guard_clause, (-0.6, 1.1), (0, 1), id="guard_clause_second"),
    Case(guard_clause, (0.6, -1.1), (0, 1), id="guard_clause_first"),
]
