"""Counted range loops: what the forward pass saves per iteration (nothing, when the
reverse pass can rebuild it from the trip counter and the unmodified inputs)."""
import numpy as np
import pytest
from numba.core import types

import adjit

from adjit.testing import check_grad
from adjit.transform.reverse.program import derive
from corpus.for_range import (indexed_backwards, indexed_nested, indexed_start_step,
                              rosenbrock_terms)
from corpus.while_loops import nested_while, while_counting_down, while_rosenbrock

X7 = np.array([0.3, -1.2, 0.8, 2.1, -0.4, 0.6, 1.3])
VEC = (types.float64[::1],)


def _records(fn):
    """Per primal block: the names its forward pass pushes."""
    ctx, rev = derive(fn, VEC, (0,)).analyse()
    return ctx, rev, rev.records


@pytest.mark.parametrize("fn", [rosenbrock_terms, indexed_start_step, indexed_backwards,
                                indexed_nested, while_rosenbrock, while_counting_down,
                                nested_while])
def test_loop_bodies_push_nothing(fn):
    """Index, element reads and small + - * trees are rebuilt in the reverse pass: the
    only records are the trip counts, saved once per loop exit."""
    ctx, rev, records = _records(fn)
    counters = {loop.counter for loop in rev.counted.values()}
    assert counters and len(rev.inductions) == len(counters)
    for label, saved in records.items():
        assert set(saved) <= counters, (label, saved)
    check_grad(fn, X7)


def test_induction_is_rebuilt_from_start_and_step():
    """range(1, n - 1, 2): the index is ``1 + trips * 2``, reading ``start`` and ``step``."""
    _, rev, _ = _records(indexed_start_step)
    (ind,) = rev.inductions.values()
    assert ind.start is not None and ind.step is not None
    from numba.core import ir
    loc = ir.Loc("test", 1)
    text = "\n".join(str(s) for s in ind.statements(None, loc))
    assert ind.loop.counter in text and "%stride" in text


def _shared_iterator(x):
    # an explicit iter(range(...)) walked by two loops: not a for statement's own range
    s = 0.0
    it = iter(range(x.shape[0]))
    for i in it:
        s += x[i] * x[i]
        if i == 2:
            break
    for j in it:
        s += x[j] * 3.0
    return s


def test_shared_range_iterator_is_not_rebuilt():
    """An iterator that two loops advance: its values stay on the tape (the trip count of
    the second loop is not its index), and the gradient is right."""
    _, rev, _ = _records(_shared_iterator)
    assert not rev.inductions
    check_grad(_shared_iterator, X7)
    g = adjit.grad(_shared_iterator)(X7)
    expected = np.zeros_like(X7)
    expected[:3] = 2.0 * X7[:3]
    expected[3:] = 3.0
    np.testing.assert_allclose(g, expected, rtol=1e-14)


def test_while_loop_exit_is_decided_by_the_count():
    """A bottom-tested while loop: no block ids, the exit goes back into the loop by
    decrementing the count, and ``i -= 2`` is rebuilt as ``start - trips * 2``."""
    _, rev, _ = _records(while_counting_down)
    (loop,) = rev.counted.values()
    assert loop.exit in loop.decided and loop.header in loop.decided
    assert not any(rev.pushes_id.values())
    (ind,) = rev.inductions.values()
    assert ind.down
