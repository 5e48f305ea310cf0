"""Records written item by item (``reverse/forward_pass.push_record``): a long
straight-line block of scalars reserves its record where it starts and stores each value
as it is computed. Gradients, JVPs and HVPs (forward mode over the reserved record,
``forward_tape.fwd_tape_put``) must agree with finite differences, and the words on the
tape must be exactly those a push at the block's end would have written."""
import math

import numba
import pytest

import adjit
from adjit.runtime import current_depth
from adjit.testing import check_grad, check_hvp, check_jvp


def long_block(x, y):
    """Twenty-odd dependent lines; an integer and a boolean among the saved values."""
    a = x * y
    b = a * y + x
    c = math.sin(b) * a
    d = c * c - b
    flag = d > 0.0
    n = int(flag) + 2
    e = d * n + math.cos(a)
    f = e * y
    g = f * x + a * b
    h = math.exp(-g * g) + c
    i = h * h * d
    j = i * a - b * c
    k = math.tanh(j) * e
    m = k * f + g
    p = m * m - h
    q = p * i + j * k
    r = math.sin(q) * p
    s = r * x * y
    t = s * s + m
    u = t * a + q
    return u * y + t


@numba.njit
def helper(v):
    return v * v + 1.0


def long_block_with_call(x, y):
    """A long block that calls a differentiated helper: its forward pass pushes records
    of its own, so the block's record is pushed whole at the end."""
    a = x * y
    b = a * y + x
    c = math.sin(b) * a
    d = helper(c) - b
    e = d * a + c
    f = e * y - d
    g = f * x + a * b
    h = math.exp(-g * g) + c
    i = h * h * d
    j = i * a - b * c
    k = math.tanh(j) * e
    m = k * f + g
    p = m * m - h
    q = p * i + j * k
    r = math.sin(q) * p
    s = r * x * y
    return s * s + m


def long_block_in_loop(x, y, n):
    """The long block is a loop body: one record per iteration."""
    total = 0.0
    for it in range(n):
        a = x * y + it
        b = a * y + x
        c = math.sin(b) * a
        d = c * c - b
        e = d * 0.5 + math.cos(a)
        f = e * y
        g = f * x + a * b
        h = math.exp(-g * g) + c
        i = h * h * d
        j = i * a - b * c
        k = math.tanh(j) * e
        m = k * f + g
        p = m * m - h
        q = p * i + j * k
        r = math.sin(q) * p
        s = r * x * y
        total += s * 0.1 + m
    return total


def long_block_then_raise(x, y):
    """A record written item by item, a division that raises ZeroDivisionError in the
    middle of it when ``y == 0``, and a ``raise`` after it that unwinds the tape."""
    a = x * y
    b = a * y + x
    c = math.sin(b) * a
    d = c * c - b
    e = d * 3.0 + math.cos(a)
    f = e * y
    g = f * x + a * b
    h = math.exp(-g * g) + c
    i = h * h * d
    j = i * a - b * c
    k = math.tanh(j) / y
    m = k * f + g
    p = m * m - h
    q = p * i + j * k
    r = math.sin(q) * p
    s = r * x * y
    u = s * s + m
    if x > 10.0:
        raise ValueError("x out of range")
    return u


ARGS = (0.4, 0.7)


def forward_pass_text(f, *args, capsys):
    adjit.show(adjit.grad(f), *args)
    text = capsys.readouterr().out
    return text[text.index("---- forward pass"):text.index("---- reverse pass")]


def test_a_long_block_writes_its_record_as_it_goes(capsys):
    text = forward_pass_text(long_block, *ARGS, capsys=capsys)
    assert text.count("= call $tape_reserve") == 1
    assert text.count("= call $tape_put") >= 16
    assert "tape_push" not in text


@pytest.mark.parametrize("f", [long_block, long_block_with_call, long_block_then_raise])
def test_long_blocks_in_every_mode(f):
    check_grad(f, *ARGS)
    check_jvp(f, *ARGS)
    check_hvp(f, *ARGS)


def test_a_block_that_calls_a_forward_pass_pushes_at_its_end(capsys):
    text = forward_pass_text(long_block_with_call, *ARGS, capsys=capsys)
    assert "tape_reserve" not in text
    assert "tape_push" in text


def test_a_long_loop_body_in_every_mode():
    check_grad(long_block_in_loop, 0.2, 0.3, 3, argnums=(0, 1))
    check_jvp(long_block_in_loop, 0.2, 0.3, 3)
    check_hvp(long_block_in_loop, 0.2, 0.3, 3, argnums=(0, 1))


@pytest.mark.parametrize("bad, error", [((20.0, 0.7), ValueError),
                                        ((0.4, 0.0), ZeroDivisionError)])
def test_an_exception_leaves_the_tape_as_it_was(bad, error):
    g = adjit.grad(long_block_then_raise)
    expected = g(*ARGS)
    depth = current_depth()
    with pytest.raises(error):
        g(*bad)
    assert current_depth() == depth
    assert g(*ARGS) == expected


hessian_xx = adjit.hvp(long_block, argnums=(0, 1))


@numba.njit
def second_x(x, y):
    return hessian_xx(x, y, 1.0, 0.0)[0]


def test_third_order_over_a_reserved_record():
    """jvp of an hvp: forward mode over the tangent record's own reserve and puts."""
    value, slope = adjit.jvp(second_x)(0.4, 0.7, 1.0, 0.0)
    assert value == pytest.approx(second_x(0.4, 0.7), rel=1e-12)
    h = 1e-5
    fd = (second_x(0.4 + h, 0.7) - second_x(0.4 - h, 0.7)) / (2 * h)
    assert slope == pytest.approx(fd, rel=1e-6)
