"""Rules for array primitives that reduce float arrays to a float scalar.

``y = p(a, b, ...)`` has one *shadow update* per array argument: a numba-compiled function
``update(g, ans, a, b, ..., shadow)`` that adds ``g * dy/da`` into that argument's shadow
in place (``g`` is the adjoint of ``y``, ``ans`` its primal value). The generated reverse
code calls it and LLVM inlines it. Two helpers make most rules one line:

- ``defelementwise(prims, *partials)``: each element's derivative is a function of the
  element(s) at the same position: ``partial(g, ans, n, a_i[, b_i])`` (``n`` is the size);
- ``defarrayvjp(prims, updates, tangents)``: whole functions, for rules that need a pass
  over the array (``prod`` without dividing by zero, the arg-max of ``max``).

Each rule also carries forward-mode tangents ``dy_k(ans, *args, da_k) -> float``.

Methods (``x.sum()``) are keyed by Numba's typing key ``(types.Array, "sum")``.
"""
import operator

import numpy as np
from numba.core import cgutils, types
from numba.core.imputils import impl_ret_new_ref
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

from ..compile.inline_library import internal_jit
from ..compile.whole_writes import assign_selection, assign_whole
from ..ir.purity import pure_kernel, zeros_kernel
from .core import deflinear, names_read
from .primitive import ALLOCATES, PRIMITIVES, Primitive


class Allocation(Primitive):
    """An array constructor: its result gets a fresh shadow (reverse) or tangent
    (forward), and no derivative flows to its inputs, except a differentiated fill value
    (``filled``: argument 1 of ``np.full``), whose derivative both modes carry."""

    family = "allocation"
    kind = "allocation"

    def __init__(self, name, filled=False):
        self.name, self.filled = name, filled

    def effects(self):
        return ALLOCATES


def defallocation(prims, filled=False):
    """Register array constructors (``filled``: argument 1 is the fill value)."""
    for prim in prims:
        PRIMITIVES.register([prim], Allocation(f"np.{getattr(prim, '__name__', prim)}", filled))


@zeros_kernel(like=True)
@intrinsic
def zeros_shadow(typingctx, a):
    """``np.zeros_like(a)`` for the shadows and tangents generated code allocates, as an
    intrinsic: NumPy's ``zeros_like`` is a Numba overload compiled (with the ``empty_like``,
    allocator and ``fill`` it calls) once per process and type, a large part of a small
    gradient's first compile. The result is C-ordered, or F-ordered for an F-ordered ``a``."""
    if not isinstance(a, types.Array):
        return None
    result = types.Array(a.dtype, a.ndim, "F" if a.layout == "F" else "C")

    def codegen(context, builder, sig, args):
        source = context.make_array(a)(context, builder, value=args[0])
        shape = cgutils.unpack_tuple(builder, source.shape, a.ndim)
        return _zeroed_array(context, builder, result, shape)

    return result(a), codegen


@zeros_kernel()
@intrinsic
def zeros_shaped(typingctx, shape, dtype):
    """``np.zeros(shape, dtype)`` for a shape tuple read from an array (so its size
    cannot overflow) and a NumPy scalar class or an array's ``dtype``: the shadows of the
    arrays a function allocates, and broadcast tangents. An intrinsic for the reason
    ``zeros_shadow`` is: ``np.zeros`` compiled for each rank and dtype cost 130 to 250 ms
    of a first gradient."""
    if isinstance(dtype, types.NumberClass):
        element = dtype.instance_type
    elif isinstance(dtype, types.DType):  # ``a.dtype`` in jitted code
        element = dtype.dtype
    else:
        return None
    if not (isinstance(shape, types.BaseTuple)
            and all(isinstance(t, types.Integer) for t in shape.types)):
        return None
    result = types.Array(element, len(shape), "C")

    def codegen(context, builder, sig, args):
        extents = cgutils.unpack_tuple(builder, args[0], len(shape))
        extents = [context.cast(builder, v, t, types.intp) for v, t in zip(extents, shape)]
        return _zeroed_array(context, builder, result, extents)

    return result(shape, dtype), codegen


def _zeroed_array(context, builder, result, shape):
    """Allocate an array of type ``result`` and extents ``shape`` through the NRT directly
    (Numba's array constructor compiles an allocator overload on first use), zero its
    bytes, fill in the array struct."""
    itemsize = context.get_constant(
        types.intp, context.get_abi_sizeof(context.get_data_type(result.dtype)))
    strides, stride = [], itemsize
    for extent in (reversed(shape) if result.layout == "C" else shape):
        strides.append(stride)
        stride = builder.mul(stride, extent)
    if result.layout == "C":
        strides.reverse()
    size = stride  # itemsize times every extent: an existing array's size, no overflow
    meminfo = context.nrt.meminfo_alloc_aligned(
        builder, size, context.get_preferred_array_alignment(result.dtype))
    with builder.if_then(cgutils.is_null(builder, meminfo), likely=False):
        context.call_conv.return_user_exc(builder, MemoryError,
                                          ("adjit: cannot allocate a shadow array",))
    data = context.nrt.meminfo_data(builder, meminfo)
    cgutils.memset(builder, data, size, 0)
    out = context.make_array(result)(context, builder)
    intp = context.get_value_type(types.intp)
    populate_array(out, data=builder.bitcast(data, out.data.type),
                   shape=cgutils.pack_array(builder, shape, ty=intp),
                   strides=cgutils.pack_array(builder, strides, ty=intp),
                   itemsize=itemsize, meminfo=meminfo)
    return impl_ret_new_ref(context, builder, result, out._getvalue())


defallocation((np.zeros, np.empty, np.ones, np.zeros_like, np.empty_like, np.ones_like, np.eye,
               np.identity))
defallocation((zeros_shadow, zeros_shaped))
defallocation((np.full, np.full_like), filled=True)


def lookup_allocation(prim):
    """The ``Allocation`` of ``prim``, or None."""
    return PRIMITIVES.get(prim, "allocation")


def is_filled_allocation(prim):
    """Whether ``prim`` allocates an array filled with its argument 1 (``np.full``)."""
    alloc = lookup_allocation(prim)
    return alloc is not None and alloc.filled


class ArrayRule(Primitive):
    """A reduction from float arrays to a float scalar: reverse mode calls one shadow
    update per array argument, forward mode one tangent per argument."""

    family = "reduction"
    kind = "reduction"

    def __init__(self, name, updates, tangents, ndims, reads_ans, reads_args=None):
        self.name = name
        # whether the updates read argument k's values (else only its shape: the reverse
        # pass may then pass the shadow, which has the same shape, in its place)
        self.reads_args = reads_args or (True,) * len(updates)
        self.updates = updates      # one numba function per argument (None: no derivative)
        # forward mode: ``dy_k(ans, *args, da_k) -> float``, computing only
        self.tangents = tuple(t if t is None else pure_kernel(t) for t in tangents)
        self.arity = len(updates)
        self.ndims = ndims          # array ranks the updates handle
        self.reads_ans = reads_ans  # whether ``ans`` must be kept for the reverse pass

    def matches(self, argtypes, result_type):
        """At least one array argument, each of a rank its updates handle."""
        ranks = [t.ndim for t in argtypes if isinstance(t, types.Array)]
        return bool(ranks) and all(r in self.ndims for r in ranks)

    @property
    def reverse(self):
        return self.updates

    @property
    def forward(self):
        return self.tangents


def _reads(func, name):
    return name in names_read(func)


def _register(prims, rule):
    PRIMITIVES.register(prims, rule)


def lookup_array(prim):
    """The ``ArrayRule`` of ``prim`` (a function or a method's typing key), or None."""
    return PRIMITIVES.get(prim, "reduction")


def _elementwise_update(partial, arity):
    """``shadow[i] += partial(g, ans, n, a[i], ...)`` over every element of a 0-d, 1-D, 2-D
    or 3-D array (plain loops: forward mode differentiates these helpers again)."""
    d = internal_jit(partial)
    if arity == 1:
        def update(g, ans, a, shadow):
            n = a.size
            if a.ndim == 1:
                for i in range(a.shape[0]):
                    shadow[i] += d(g, ans, n, a[i])
            elif a.ndim == 2:
                for i in range(a.shape[0]):
                    for j in range(a.shape[1]):
                        shadow[i, j] += d(g, ans, n, a[i, j])
            elif a.ndim == 3:
                for i in range(a.shape[0]):
                    for j in range(a.shape[1]):
                        for k in range(a.shape[2]):
                            shadow[i, j, k] += d(g, ans, n, a[i, j, k])
            else:
                shadow[()] += d(g, ans, n, a[()])
    elif arity == 2:
        def update(g, ans, a, b, shadow):
            n = a.size
            for i in range(a.shape[0]):
                shadow[i] += d(g, ans, n, a[i], b[i])
    else:
        raise ValueError("elementwise array rules take one or two arrays")
    return internal_jit(update)


def _elementwise_tangent(partial, arity):
    """``sum_i partial(1, ans, n, a[i], ...) * da[i]``: partials are linear in ``g``."""
    d = internal_jit(partial)
    if arity == 1:
        def tangent(ans, a, da):
            n = a.size
            t = 0.0
            if a.ndim == 1:
                for i in range(a.shape[0]):
                    t += d(1.0, ans, n, a[i]) * da[i]
            elif a.ndim == 2:
                for i in range(a.shape[0]):
                    for j in range(a.shape[1]):
                        t += d(1.0, ans, n, a[i, j]) * da[i, j]
            elif a.ndim == 3:
                for i in range(a.shape[0]):
                    for j in range(a.shape[1]):
                        for k in range(a.shape[2]):
                            t += d(1.0, ans, n, a[i, j, k]) * da[i, j, k]
            else:
                t += d(1.0, ans, n, a[()]) * da[()]
            return t
    else:
        def tangent(ans, a, b, da):
            n = a.size
            t = 0.0
            for i in range(a.shape[0]):
                t += d(1.0, ans, n, a[i], b[i]) * da[i]
            return t
    return internal_jit(tangent)


#: the ranks the whole-array reductions handle (a 0-d array is one element)
ANY_RANK = (0, 1, 2, 3)


def defelementwise(prims, *partials, ndims=ANY_RANK):
    """Register a reduction whose derivative with respect to each element depends on that
    element only: one ``partial(g, ans, n, a_i[, b_i])`` per argument, linear in ``g``."""
    updates = tuple(_elementwise_update(p, len(partials)) for p in partials)
    tangents = tuple(_elementwise_tangent(p, len(partials)) for p in partials)
    name = getattr(prims[0], "__name__", str(prims[0]))
    reads_args = tuple(any(_reads(p, p.__code__.co_varnames[3 + k]) for p in partials)
                       for k in range(len(partials)))
    _register(prims, ArrayRule(name, updates, tangents, ndims,
                               any(_reads(p, "ans") for p in partials), reads_args))


def defarrayvjp(prims, updates, tangents, ndims=(1, 2)):
    """Register a primitive by whole functions, one per argument: shadow updates
    ``(g, ans, *args, shadow)`` and tangents ``(ans, *args, da) -> float``."""
    name = getattr(prims[0], "__name__", str(prims[0]))
    _register(prims, ArrayRule(name, tuple(internal_jit(u) for u in updates),
                               tuple(internal_jit(t) for t in tangents), ndims,
                               any(_reads(u, "ans") for u in updates)))


@internal_jit
def add_in_bounds_at(shadow, index, g):
    """``shadow[index] += g`` unless ``index`` is past the end: the reverse of an
    exhausted iterator's last ``next`` (its adjoint is zero). The test is on the index,
    not on ``g``: forward mode differentiates this under hvp, and a zero adjoint can
    carry a nonzero tangent (a test of ``g != 0`` dropped it: a wrong Hessian of
    ``for v in x`` loops where a partial is 0)."""
    if index < shadow.shape[0]:
        shadow[index] += g


@internal_jit
def tuple_item_share(index, item, size, g):
    """The part of ``g``, the adjoint of ``t[index]``, that item ``item`` of a tuple of
    ``size`` floats takes: all of it when the (possibly negative) index names it."""
    if index % size == item:
        return g
    return 0.0  # not ``g * 0.0``: an infinite adjoint of another item is not NaN here


@internal_jit
def fresh_shadow(shadow, shape, fresh):
    """The shadow of an array allocated in a loop, for its uses after one allocation:
    zeroed (reallocated when the shape changed) the first time after that allocation."""
    if not fresh:
        return shadow
    if shadow.shape == shape:
        shadow[...] = 0.0  # (not .fill: forward mode differentiates this under hvp)
        return shadow
    return np.zeros(shape, shadow.dtype)


@internal_jit
def phi_transfer(shadow, fresh, phi_shadow, phi_fresh):
    """Along a loop edge backwards, the shadow of an array phi flows into the shadow of
    the array that came in (``shadow``, stale when ``fresh``); returns that shadow and
    whether it is still stale. An untouched (``phi_fresh``) phi shadow holds nothing."""
    if phi_fresh:
        return shadow, fresh
    if fresh:
        return phi_shadow.copy(), False
    shadow += phi_shadow
    return shadow, False


@internal_jit
def snapshot_shadow(shadow, fresh):
    """A copy of an array phi's shadow (and its staleness), taken before the phis of a
    loop edge that exchanges arrays (``a, b = b, a``) pass their adjoints on."""
    if fresh:
        return shadow, True
    return shadow.copy(), False


@internal_jit
def add_into(shadow, g):
    """``shadow += g``: seeds the shadow of an array the function returns."""
    shadow += g


@internal_jit
def add_cotangent(shadow, g):
    """``shadow += g`` unless ``g`` is empty: seeds the shadow of an array item of a
    returned tuple; the caller passes an empty array for an item it has no shadow for."""
    if g.size:
        shadow += g


# linear in (shadow, g): forward-over-reverse adds the tangents the same way instead of
# deriving the in-place array add (whose derived form took seconds to compile)
deflinear(add_into, 0, 1)
deflinear(add_cotangent, 0, 1)
# the slice writes of generated code (compile/whole_writes), met again when forward mode
# differentiates a reverse program: the tangent is written the same way
deflinear(assign_whole, 0, 1)
deflinear(assign_selection, 0, 2)


def _add_flat(shadow, k, v):
    """``shadow.flat[k] += v`` for a (possibly strided) shadow of any rank."""
    if shadow.ndim == 1:
        shadow[k] += v
    elif shadow.ndim == 2:
        shadow[k // shadow.shape[1], k % shadow.shape[1]] += v
    elif shadow.ndim == 3:
        plane = shadow.shape[1] * shadow.shape[2]
        shadow[k // plane, (k % plane) // shadow.shape[2], k % shadow.shape[2]] += v
    else:
        shadow[()] += v


_add_flat_jit = internal_jit(_add_flat)


def _flat_copy(a):
    """The elements of an array of any rank in C order, as a new 1-D float64 array."""
    out = np.empty(a.size)
    if a.ndim == 1:
        for i in range(a.shape[0]):
            out[i] = a[i]
    elif a.ndim == 2:
        m = a.shape[1]
        for i in range(a.shape[0]):
            for j in range(m):
                out[i * m + j] = a[i, j]
    elif a.ndim == 3:
        for i in range(a.shape[0]):
            for j in range(a.shape[1]):
                for k in range(a.shape[2]):
                    out[(i * a.shape[1] + j) * a.shape[2] + k] = a[i, j, k]
    else:
        out[0] = a[()]
    return out


_flat_copy_jit = internal_jit(_flat_copy)


def _others_products(a):
    """``out[k]`` = product of every element of ``a`` but the k-th (C order), by prefix
    and suffix products: exact with zeros, where dividing ``prod(a) / a_k`` is not."""
    flat = _flat_copy_jit(a)
    n = flat.size
    out = np.empty(n)
    suffix = 1.0
    for k in range(n - 1, -1, -1):
        out[k] = suffix
        suffix *= flat[k]
    prefix = 1.0
    for k in range(n):
        out[k] *= prefix
        prefix *= flat[k]
    return out


_others_products_jit = internal_jit(_others_products)


def prod_update(g, ans, a, shadow):
    others = _others_products_jit(a)
    for k in range(others.size):
        _add_flat_jit(shadow, k, g * others[k])


def prod_tangent(ans, a, da):
    others = _others_products_jit(a)
    flat_da = _flat_copy_jit(da)
    t = 0.0
    for k in range(others.size):
        t += others[k] * flat_da[k]
    return t


def argmax_update(g, ans, a, shadow):
    """The whole adjoint goes to the first maximal element (NumPy's ``argmax``)."""
    _add_flat_jit(shadow, np.argmax(a), g)


def argmin_update(g, ans, a, shadow):
    """The whole adjoint goes to the first minimal element (NumPy's ``argmin``)."""
    _add_flat_jit(shadow, np.argmin(a), g)


def argmax_tangent(ans, a, da):
    return _flat_copy_jit(da)[np.argmax(a)]


def argmin_tangent(ans, a, da):
    return _flat_copy_jit(da)[np.argmin(a)]


def _method(name):
    return (types.Array, name)


defelementwise((np.sum, sum, _method("sum")), lambda g, ans, n, a: g)
defelementwise((np.mean, _method("mean")), lambda g, ans, n, a: g / n)
# the gradient of the norm at 0 is taken as 0 (a subgradient); on a matrix it is the
# Frobenius norm, the same formula (other ``ord=`` arguments are refused by arity)
defelementwise((np.linalg.norm,), lambda g, ans, n, a: g * a / ans if ans != 0.0 else 0.0)
defelementwise((np.dot, np.vdot, operator.matmul),
               lambda g, ans, n, a, b: g * b, lambda g, ans, n, a, b: g * a, ndims=(1,))
defarrayvjp((np.prod, _method("prod")), [prod_update], [prod_tangent], ndims=ANY_RANK)
# the builtins too, on an array: ``max(x)`` is its first maximal element, as ``np.max``'s
# arg-max rule takes it (on two scalars they are the scalar rules of rules/builtins.py)
defarrayvjp((np.max, np.amax, _method("max"), max), [argmax_update], [argmax_tangent],
            ndims=ANY_RANK)
defarrayvjp((np.min, np.amin, _method("min"), min), [argmin_update], [argmin_tangent],
            ndims=ANY_RANK)


# -- selection writes ``a[sel] = v`` (slices, masks, index arrays) in reverse mode -----
@internal_jit
def add_selection(vshadow, shadow, index):
    """``vshadow += shadow[index]; shadow[index] = 0``: the adjoint of an array written
    into a selection, which the overwritten values do not get. The adjoint is taken
    out before the selection is cleared, and added after: the written array may be a
    view of the same memory (``y[:] = y[::-1]``), whose shadow is part of ``shadow``."""
    part = shadow[index].copy()
    if part.shape != vshadow.shape:
        raise ValueError("adjit: writing an array into a selection of another shape "
                         "(broadcasting) is not differentiable")
    shadow[index] = 0.0
    vshadow += part


@internal_jit
def sum_selection(shadow, index):
    """``sum(shadow[index])``: the adjoint of a scalar written into a selection."""
    return np.sum(shadow[index])


@internal_jit
def add_indexed(vshadow, shadow, index):
    """``add_selection`` for an integer index array (``y[idx] = v``): where ``idx``
    repeats a position only the last write survives, so only that item of ``v`` takes
    the position's adjoint (going backwards, each position is cleared once read).
    Clears the written positions too."""
    if index.shape[0] != vshadow.shape[0]:
        raise ValueError("adjit: writing an array into a selection of another shape "
                         "(broadcasting) is not differentiable")
    part = np.zeros_like(vshadow)  # (taken out first, as in add_selection)
    for k in range(index.shape[0] - 1, -1, -1):
        j = index[k]
        if shadow.ndim == 1:
            part[k] = shadow[j]
            shadow[j] = 0.0
        else:
            for c in range(shadow.shape[1]):
                part[k, c] = shadow[j, c]
                shadow[j, c] = 0.0
    vshadow += part


@internal_jit
def sum_indexed(shadow, index):
    """``sum_selection`` for an integer index array: each written position counts once,
    however often ``index`` repeats it."""
    t = 0.0
    for k in range(index.shape[0]):
        j = index[k]
        if shadow.ndim == 1:
            t += shadow[j]
            shadow[j] = 0.0
        else:
            for c in range(shadow.shape[1]):
                t += shadow[j, c]
                shadow[j, c] = 0.0
    return t


@internal_jit
def zero_selection(shadow, index):
    """``shadow[index] = 0``: what was overwritten receives no adjoint."""
    shadow[index] = 0.0


@internal_jit
def restore_selection(a, index, old):
    """``a[index] = old``: put back what a selection write overwrote (a basic index goes
    through ``assign_selection``'s loops, not Numba's slice assignment)."""
    assign_selection(a, index, old)
