"""Refusal messages (``adjit/errors.py``) name the function and the source line."""
import numba
import numpy as np
import pytest

import adjit


@numba.njit(inline="always")
def _first_eigenvalue(x):
    return np.linalg.eigvals(np.outer(x, x) + np.eye(3))[0]


def _feature_loss(x):
    return _first_eigenvalue(x) + 1.0


def test_a_refusal_inside_an_inlined_helper_names_the_helper():
    """Numba inlines ``inline='always'`` helpers before adjit sees the code: the line is
    the helper's, so the message says which function holds it."""
    with pytest.raises(adjit.UnsupportedError) as info:
        adjit.grad(_feature_loss)(np.array([0.5, 1.0, -0.3]))
    message = str(info.value)
    assert "in function '_feature_loss' (in '_first_eigenvalue', inlined into it)" \
        in message
    assert "np.linalg.eigvals(np.outer(x, x) + np.eye(3))" in message


def _own_refusal(x):
    return np.linalg.eigvals(np.outer(x, x) + np.eye(3))[0]


def test_a_refusal_in_the_function_itself_names_only_it():
    with pytest.raises(adjit.UnsupportedError) as info:
        adjit.grad(_own_refusal)(np.array([0.5, 1.0, -0.3]))
    assert "in function '_own_refusal' at" in str(info.value)
    assert "inlined" not in str(info.value)


def _method_on_an_expression(A):
    c = A[:, 1].copy().view(np.float64)  # (.repeat, the example before, has a rule now)
    return np.sum(c * c)


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_a_refused_method_names_its_receiver_as_written(mode):
    """The receiver of ``A[:, 1].copy().view(...)`` is an SSA temporary: the message
    quotes the source's text for it, not ``x.view``."""
    A = np.arange(6.0).reshape(3, 2) + 1.0
    call = {"grad": lambda: adjit.grad(_method_on_an_expression)(A),
            "jvp": lambda: adjit.jvp(_method_on_an_expression)(A, A),
            "hvp": lambda: adjit.hvp(_method_on_an_expression)(A, A)}[mode]
    with pytest.raises(adjit.UnsupportedError, match=r"'A\[:, 1\]\.copy\(\)\.view'"):
        call()


def test_receiver_text_reads_balanced_brackets():
    from types import SimpleNamespace
    from adjit.rules.classify import receiver_text
    import linecache
    linecache.cache["<receiver-test>"] = (
        0, None, ["y = np.sin(x[a, (b + 1)]).view(np.float64) + 1\n", "z = f(q.view(1))\n",
                  "w = q.repeat(2)\n"], "<receiver-test>")
    at = lambda line: SimpleNamespace(filename="<receiver-test>", line=line)  # noqa: E731
    assert receiver_text(at(1), "view") == "np.sin(x[a, (b + 1)])"
    assert receiver_text(at(2), "view") == "q"
    assert receiver_text(at(3), "view") is None
