"""The IR of ``jvp(f)`` and of ``jvp(jvp(f))``: the stubs that check the tangents given
and splice in (or call) the JVP program, and the helpers ``hvp`` shares with them
(tangents converted to their argument's type, the array leaves of a tuple argument)."""
import inspect

import numpy as np
from numba.core import ir, types

from .arguments import (
    TANGENT_SHAPE, check_shape, check_tangents, check_written_arguments_apart,
    copy_tangent_arrays, entry_block, needs_contiguous, omitted_default, parameter_counts,
    takes_tangent, tangent_in_primal_type, trailing_defaults)
from .capture.effects import callee_container_writes, callee_writes
from .capture.typed_ir import py_function_of
from .errors import ArgumentError
from .ir.inlining import splice
from .ir.value_types import is_float_array


def written_arguments(func, primal_types):
    """Indices of the array arguments ``func`` writes into. ``grad(f)`` and
    ``value_and_grad(f)``, which take ``f``'s arguments, write those ``f`` writes: their
    own compiled stub takes one packed ``*args`` tuple, whose index says nothing about
    ``f``'s parameters. (Other transforms take more values than ``f``: their stub's
    analysis stands.)"""
    return callee_writes(_written_by(func), primal_types)


def written_tuples(func, primal_types):
    """Indices of the tuple arguments ``func`` writes an array item of (``x, v = state;
    x *= k``): ``jvp`` copies their tangents' arrays, as it does a written array's."""
    return callee_container_writes(_written_by(func), primal_types)


def _written_by(func):
    """The function whose writes ``func``'s are: ``f`` for ``grad(f)`` and
    ``value_and_grad(f)`` (see ``written_arguments``), else ``func``."""
    spec = getattr(func, "adjit_spec", None)
    while spec is not None and spec[0] in ("grad", "value_and_grad"):
        func = spec[1]
        spec = getattr(func, "adjit_spec", None)
    return func


class JVPWrapper:
    """Builds the IR of ``jvp(f)``: check tangent shapes, call the JVP program."""

    label = "jvp"  # how its argument errors name the transform

    def __init__(self, func):
        self.func = func
        self.py_func = py_function_of(func)
        self.names = tuple(inspect.signature(self.py_func).parameters)
        self.fname = self.py_func.__qualname__

    def build(self, argtypes):
        """IR of ``jvp(f)`` for one signature: (args..., tangents...) -> (y, ydot)."""
        from .transform.forward import derive_jvp
        flat = tuple(types.unliteral(t) for t in argtypes[0].types)  # the *args tuple
        n, tuples = self.primal_count(flat)
        given_types, tangent_types = flat[:n], flat[n:]
        active = tuple(i for i, t in enumerate(given_types) if takes_tangent(t, tuples))
        check_tangents(self.fname, self.names, given_types, active, tangent_types)
        defaults, primal_types = trailing_defaults(self.py_func, given_types, n)
        program = derive_jvp(self.func, primal_types, active)
        block, e = entry_block(self.py_func)
        blocks = {0: block}
        packed = e.assign(ir.Arg("args", 0, e.loc), target="args")
        args = [e.item(packed, k, hint="a") for k in range(len(flat))]
        written = written_arguments(self.func, primal_types)
        e = check_written_arguments_apart(blocks, e, f"jvp({self.fname})", self.names,
                                          args[:n], given_types, written)
        written = written | written_tuples(self.func, primal_types)
        e = self.check_given(blocks, e, args)
        for j, i in enumerate(active):
            args[n + j] = tangent_as_argument(e, args[n + j], tangent_types[j], args[i],
                                               primal_types[i])
            for path, _ in array_leaves(primal_types[i]):
                where = self.names[i] + "".join(f"[{k}]" for k in path)
                e = check_shape(blocks, e, leaf(e, args[i], path), leaf(e, args[n + j], path),
                                TANGENT_SHAPE.format(where, self.label))
            if i in written:  # its tangent is updated in place: not the caller's array
                args[n + j] = copy_tangent_arrays(e, args[n + j], primal_types[i])
        args[n:n] = [omitted_default(e, d) for d in defaults]
        dual, e = splice(blocks, e, program.blocks(), args, "jvp")
        e.ret(dual)
        return blocks

    def primal_count(self, flat):
        """``jvp_split`` of the values passed (all parameters when none fits:
        ``check_tangents`` then says what is expected)."""
        return jvp_split(self.py_func, flat) or (parameter_counts(self.py_func)[1], True)

    def check_given(self, blocks, e, args):
        """Run-time checks of the values passed beyond the tangents' (none here)."""
        return e


class NestedJVPWrapper:
    """Builds ``jvp(jvp(f))`` directly: the JVP of ``f``'s JVP program for the types of
    the arguments and inner tangents given. ``jvp(f)`` takes ``*args`` (its number of
    tangents depends on the types), so the program, whose parameters are named, is
    what the outer level differentiates; each level has its own tangent variables, so
    there is no perturbation confusion."""

    def __init__(self, f):
        self.f = f
        self.py_func = py_function_of(f)
        self.names = tuple(inspect.signature(self.py_func).parameters)
        self.fname = self.py_func.__qualname__

    def build(self, argtypes):
        """IR of ``jvp(jvp(f))`` for one signature: (args, inner tangents, outer
        tangents) -> ((y, ydot), (y', ydot'))."""
        from .transform.forward import derive_jvp
        flat = tuple(types.unliteral(t) for t in argtypes[0].types)  # the *args tuple
        n, active = self._split(flat)
        program = derive_jvp(self.f, flat[:n], active)
        return _InnerTangentsChecked(program.dispatcher, self.names, flat[:n], active).build(
            argtypes)

    def _split(self, flat):
        """``(n, active)``: ``f``'s arguments (all of them) and those the inner level
        gives tangents; the values after those tangents are the outer tangents
        (``jvp_split`` at each level). Of the readings that fit the count (flat tuples
        held fixed or given tangents, at each level), the first whose inner tangents
        have their arguments' types."""
        n = parameter_counts(self.py_func)[1]
        mismatch = None
        for tuples in (False, True):
            active = tuple(i for i, t in enumerate(flat[:n]) if takes_tangent(t, tuples))
            m = n + len(active)
            if not any(m + sum(takes_tangent(t, outer) for t in flat[:m]) == len(flat)
                       for outer in (False, True)):
                continue
            try:
                check_tangents(self.fname, self.names, flat[:n], active, flat[n:m])
            except ArgumentError as error:
                mismatch = mismatch or error
                continue
            return n, active
        if mismatch is not None:
            raise mismatch
        raise ArgumentError(
            f"jvp(jvp({self.fname})) takes {self.fname}'s arguments ({', '.join(self.names)}; "
            "all of them), one tangent per float or float-array argument, then one "
            f"tangent per float or float-array value among those; got {len(flat)} values")


class _InnerTangentsChecked(JVPWrapper):
    """``jvp`` of a JVP program whose first ``n`` parameters are the function's
    arguments and the next its tangents (``jvp(jvp(f))``): the inner tangents' shapes
    are checked at run time as ``jvp(f)`` checks them, since the program itself does not."""

    def __init__(self, program, names, primal_types, active):
        super().__init__(program)
        self.user_names, self.primal_types, self.inner_active = names, primal_types, active
        self.n = len(primal_types)
        # the program's tangent parameters are adjit's names: say dx for x's
        self.names = names + tuple("d" + names[i] for i in active)
        self.label = f"jvp(jvp({py_function_of(program.adjit_jvp_of).__qualname__}))"

    def check_given(self, blocks, e, args):
        """Each inner tangent has the shape of its argument."""
        for j, i in enumerate(self.inner_active):
            for path, _ in array_leaves(self.primal_types[i]):
                where = self.user_names[i] + "".join(f"[{k}]" for k in path)
                e = check_shape(blocks, e, leaf(e, args[i], path),
                                leaf(e, args[self.n + j], path),
                                TANGENT_SHAPE.format(where, self.label))
        return e


def jvp_split(py_func, flat):
    """``(k, tuples)``: how many of the values passed to ``jvp(f)`` are arguments, all
    parameters or fewer when trailing parameters with defaults are omitted
    (``jvp(f)(x, y, dx, dy)`` for ``def f(x, y, scale=1.0)``), and whether the flat
    tuples among them take tangents; None when no split fits. A flat tuple of floats and
    float arrays takes a tuple of tangents, as in JAX; when the tangents given are only
    those of the float and float-array arguments, every tuple is held fixed (a
    workspace, as jvp took them before). k arguments and one tangent per float among
    them grow together, so the first fit is the one."""
    required, nparams = parameter_counts(py_func)
    fits = [(k, tuples) for k in range(required, nparams + 1) for tuples in (False, True)
            if k + sum(takes_tangent(t, tuples) for t in flat[:k]) == len(flat)]
    return fits[0] if fits else None


def tangent_as_argument(e, tangent, tangent_type, primal, primal_type):
    """A tangent converted to its argument's number type and, for a C-ordered array, to
    C order (``tangent_in_primal_type``, ``needs_contiguous``); a tuple's item by item."""
    if isinstance(primal_type, types.BaseTuple):
        return e.tuple([tangent_as_argument(e, e.item(tangent, k), tt, e.item(primal, k), pt)
                        for k, (tt, pt) in enumerate(zip(tangent_type.types,
                                                         primal_type.types))],
                       hint="tangent")
    converted = tangent_in_primal_type(e, tangent, tangent_type, primal, primal_type)
    if needs_contiguous(primal_type, tangent_type):
        return e.call(np.ascontiguousarray, [converted], hint="tangent")
    return converted


def array_leaves(typ, path=()):
    """``(path, type)`` of each float array in an argument (itself, or a tuple's items)."""
    if isinstance(typ, types.BaseTuple):
        return [leaf for k, t in enumerate(typ.types) for leaf in array_leaves(t, path + (k,))]
    return [(path, typ)] if is_float_array(typ) else []


def leaf(e, value, path):
    """The item of ``value`` at ``path`` (``value`` itself for an empty path)."""
    for k in path:
        value = e.item(value, k)
    return value
