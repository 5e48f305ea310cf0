"""Numba intrinsics over the native tape (see native/tape_fast.ll for the layout).

Generated derivative code does, per thread::

    tape = tape_acquire()
    tape_push(tape, (x, i, flag))               # forward sweep
    ...
    x, i, flag = pop_record(rec_type)(tape)     # reverse sweep, LIFO

Every scalar takes one 8-byte word: floats are bit-cast, integers and booleans are
zero-extended (and truncated back on pop), so the round trip is exact. An array takes the
words of its Numba struct (meminfo, parent, sizes, data pointer, shape, strides): a push
holds a reference (NRT incref), and the pop hands that reference to the popping code,
so an array temporary that the reverse pass reads stays alive until it is popped. The intrinsics
only declare the ``adjit_tape_*`` functions and link the fast-path library; LLVM inlines
them into the caller.
"""

import re
import threading

from llvmlite import ir
from numba.core import cgutils, errors, types
from numba.extending import intrinsic

from adjit.runtime import loader

_I64 = ir.IntType(64)
_VOIDPTR = ir.IntType(8).as_pointer()

# Signatures of the fast-path functions in tape_fast.ll.
_FAST_FUNCTIONS = {
    "adjit_tape_acquire": (_VOIDPTR, ()),
    "adjit_tape_reserve": (_VOIDPTR, (_VOIDPTR, _I64)),
    "adjit_tape_release": (_VOIDPTR, (_VOIDPTR, _I64)),
    "adjit_tape_put": (ir.VoidType(), (_VOIDPTR, _I64, _I64)),
    "adjit_tape_get": (_I64, (_VOIDPTR, _I64)),
    "adjit_tape_depth": (_I64, (_VOIDPTR,)),
    "adjit_tape_set_depth": (ir.VoidType(), (_VOIDPTR, _I64)),
}

_OOM_MESSAGE = "adjit: out of memory while growing the tape"


def _link_fast_path(context):
    """Link the fast-path library into the function being compiled (once per codegen)."""
    context.active_code_library.add_linking_library(loader.fast_library())


def _call(builder, name, *args):
    """Declare (if needed) and call the tape_fast.ll function ``name``."""
    ret, params = _FAST_FUNCTIONS[name]
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ret, params), name)
    return builder.call(fn, list(args))


def record_words(ty):
    """Number of tape words a record of numba type ``ty`` occupies (None if unsupported)."""
    if isinstance(ty, (types.Boolean, types.Integer, types.Float)):
        return 1
    if isinstance(ty, types.Complex):
        return 2
    if isinstance(ty, types.Array):
        return 5 + 2 * ty.ndim  # meminfo, parent, nitems, itemsize, data, shape, strides
    if isinstance(ty, types.BaseTuple):
        total = 0
        for t in ty.types:
            n = record_words(t)
            if n is None:
                return None
            total += n
        return total
    return None


def _check_record(ty, what):
    """Unliteral ``ty`` and reject types that cannot go on the tape (typing time)."""
    ty = types.unliteral(ty)
    if record_words(ty) is None:
        raise errors.TypingError(
            "adjit %s: unsupported tape record type %s (expected a float, integer, "
            "boolean, complex, array or a (nested) tuple of those)" % (what, ty))
    return ty


def _scalar_bits(context, ty):
    """LLVM bit width of a scalar's value representation (booleans are i1)."""
    return 1 if isinstance(ty, types.Boolean) else ty.bitwidth


def _encode_struct(builder, value, out):
    """Append the i64 words of an LLVM aggregate of pointers and integers (an array)."""
    for i, elem in enumerate(value.type.elements):
        part = builder.extract_value(value, i)
        if isinstance(elem, ir.ArrayType):
            for j in range(elem.count):
                out.append(builder.extract_value(part, j))
        elif isinstance(elem, ir.PointerType):
            out.append(builder.ptrtoint(part, _I64))
        else:
            out.append(part)


def _decode_struct(builder, llty, words):
    """Rebuild an LLVM aggregate of pointers and integers from i64 words."""
    value = ir.Constant(llty, ir.Undefined)
    for i, elem in enumerate(llty.elements):
        if isinstance(elem, ir.ArrayType):
            part = ir.Constant(elem, ir.Undefined)
            for j in range(elem.count):
                part = builder.insert_value(part, next(words), j)
        elif isinstance(elem, ir.PointerType):
            part = builder.inttoptr(next(words), elem)
        else:
            part = next(words)
        value = builder.insert_value(value, part, i)
    return value


def _encode(context, builder, ty, value, out):
    """Append the i64 words of ``value`` (numba type ``ty``) to ``out``."""
    if isinstance(ty, types.Array):
        _encode_struct(builder, value, out)
    elif isinstance(ty, types.BaseTuple):
        for i, t in enumerate(ty.types):
            _encode(context, builder, t, builder.extract_value(value, i), out)
    elif isinstance(ty, types.Complex):
        part = ty.underlying_float
        for i in (0, 1):
            _encode(context, builder, part, builder.extract_value(value, i), out)
    else:
        bits = _scalar_bits(context, ty)
        if isinstance(ty, types.Float):
            value = builder.bitcast(value, ir.IntType(bits))
        if bits < 64:
            value = builder.zext(value, _I64)
        out.append(value)


def _decode(context, builder, ty, words):
    """Rebuild a value of numba type ``ty`` from the iterator ``words`` of i64 words."""
    if isinstance(ty, types.Array):
        return _decode_struct(builder, context.get_value_type(ty), words)
    if isinstance(ty, (types.BaseTuple, types.Complex)):
        parts = (ty.types if isinstance(ty, types.BaseTuple)
                 else (ty.underlying_float,) * 2)
        value = ir.Constant(context.get_value_type(ty), ir.Undefined)
        for i, t in enumerate(parts):
            value = builder.insert_value(value, _decode(context, builder, t, words), i)
        return value
    word = next(words)
    bits = _scalar_bits(context, ty)
    if bits < 64:
        word = builder.trunc(word, ir.IntType(bits))
    if isinstance(ty, types.Float):
        word = builder.bitcast(word, context.get_value_type(ty))
    return word


def _held_words(context, builder, ty, value):
    """The i64 words of ``value`` (numba type ``ty``), with a reference taken on every
    array in it: the tape holds each array it holds until it is popped."""
    words = []
    _encode(context, builder, ty, value, words)
    if context.enable_nrt:
        context.nrt.incref(builder, ty, value)
    return words


def _put_words(builder, slot, start, words):
    """Store ``words`` at word ``start`` onwards of a reserved ``slot``."""
    for i, w in enumerate(words):
        _call(builder, "adjit_tape_put", slot, ir.Constant(_I64, start + i), w)


def _raise_oom_if_null(context, builder, ptr):
    """Turn a null from the tape allocator into a numba MemoryError."""
    with builder.if_then(cgutils.is_null(builder, ptr), likely=False):
        context.call_conv.return_user_exc(builder, MemoryError, (_OOM_MESSAGE,))


def _check_tape(tape):
    """The tape handle must be the ``voidptr`` returned by tape_acquire."""
    if tape != types.voidptr:
        raise errors.TypingError("adjit tape handle must be voidptr, got %s" % (tape,))


@intrinsic
def tape_acquire(typingctx):
    """The calling thread's tape (``voidptr``), created on its first use in that thread."""
    def codegen(context, builder, sig, args):
        _link_fast_path(context)
        tape = _call(builder, "adjit_tape_acquire")
        _raise_oom_if_null(context, builder, tape)
        return tape
    return types.voidptr(), codegen


@intrinsic
def tape_push(typingctx, tape, record):
    """Push a scalar, an array or a (nested, heterogeneous) tuple of those as one tape
    record (arrays are held by reference until popped)."""
    _check_tape(tape)
    rec = _check_record(record, "tape_push")

    def codegen(context, builder, sig, args):
        words = _held_words(context, builder, rec, args[1])
        if words:
            n = ir.Constant(_I64, len(words))
            _link_fast_path(context)
            slot = _call(builder, "adjit_tape_reserve", args[0], n)
            _raise_oom_if_null(context, builder, slot)
            _put_words(builder, slot, 0, words)
        return context.get_dummy_value()
    return types.none(types.voidptr, rec), codegen


def record_fits(pushed, expected):
    """Whether a record pushed as type ``pushed`` is read right when popped as
    ``expected``: the same types, except that an array may be popped as layout 'A' (read
    by its strides, which the record holds) and without its read-only or alignment flags.
    Any other difference would make the pop read the words as another type."""
    pushed, expected = types.unliteral(pushed), types.unliteral(expected)
    if pushed == expected:
        return True
    if isinstance(pushed, types.BaseTuple) and isinstance(expected, types.BaseTuple):
        return len(pushed) == len(expected) and all(
            record_fits(p, x) for p, x in zip(pushed.types, expected.types))
    if isinstance(pushed, types.Array) and isinstance(expected, types.Array):
        return (pushed.dtype == expected.dtype and pushed.ndim == expected.ndim
                and expected.layout in ("A", pushed.layout))
    return False


def _refuse_misfit(pushed, expected, what):
    """An internal error, at typing, for a record the reverse pass would misread."""
    if not record_fits(pushed, expected):
        raise errors.TypingError(
            f"adjit {what}: a tape record typed {pushed} would be read back as {expected} "
            "(an adjit bug: the derivative's types disagree with Numba's)")


#: the checked forms of ``tape_push`` and ``tape_put``, by (kind, expected type)
_checked_cache = {}
#: ``id`` of every checked form, by kind: classification asks of each call
_checked_ids = {"push": set(), "put": set()}


def _checked(kind, expected, typer, **options):
    """The checked form of ``tape_push`` or ``tape_put`` (``kind``) for records popped as
    ``expected`` (cached): ``typer(expected)`` is its typing function, which refuses a
    record that ``expected`` would misread before typing it as the plain intrinsic."""
    key = (kind, types.unliteral(expected))
    with _checked_lock:
        if key not in _checked_cache:
            checked = typer(key[1])
            checked.__name__ = checked.__qualname__ = (
                f"tape_{kind}_" + re.sub(r"\W+", "_", str(key[1])))
            form = intrinsic(**options)(checked) if options else intrinsic(checked)
            _checked_cache[key] = form
            _checked_ids[kind].add(id(form))
        return _checked_cache[key]


_checked_lock = threading.Lock()


def _push_typer(expected):
    def push(typingctx, tape, record):
        _refuse_misfit(record, expected, "tape_push")
        return tape_push._defn(typingctx, tape, record)
    return push


def _put_typer(expected):
    def put(typingctx, slot, offset, value):
        _refuse_misfit(value, expected, "tape_put")
        return tape_put._defn(typingctx, slot, offset, value)
    return put


def checked_push(record_type):
    """``tape_push`` for a record the reverse pass pops as ``record_type`` (cached per
    type): typing refuses a record of another type, which would be read back wrongly."""
    return _checked("push", record_type, _push_typer)


def checked_put(item_type):
    """``tape_put`` of an item the reverse pass pops as ``item_type`` (see
    ``checked_push``)."""
    return _checked("put", item_type, _put_typer, prefer_literal=True)


def is_push(key):
    """Whether ``key`` is ``tape_push`` or one of its checked forms."""
    return key is tape_push or id(key) in _checked_ids["push"]


def is_put(key):
    """Whether ``key`` is ``tape_put`` or one of its checked forms."""
    return key is tape_put or id(key) in _checked_ids["put"]


@intrinsic(prefer_literal=True)
def tape_reserve(typingctx, tape, nwords):
    """Reserve ``nwords`` (a constant) words on ``tape`` for one record, to be written
    item by item with ``tape_put`` as each value is computed: a long straight-line block
    then stores its values as it goes, instead of keeping them all live until one push
    at its end. Nothing else may push before the record is complete."""
    _check_tape(tape)
    if not isinstance(nwords, types.IntegerLiteral):
        return None  # the word count must be a constant
    count = nwords.literal_value

    def codegen(context, builder, sig, args):
        _link_fast_path(context)
        slot = _call(builder, "adjit_tape_reserve", args[0], ir.Constant(_I64, count))
        _raise_oom_if_null(context, builder, slot)
        return slot
    return types.voidptr(types.voidptr, nwords), codegen


@intrinsic(prefer_literal=True)
def tape_put(typingctx, slot, offset, value):
    """Write ``value`` (anything ``tape_push`` takes) at word ``offset`` (a constant) of a
    record reserved by ``tape_reserve``: the same words, with the same array reference,
    that ``tape_push`` of the whole record writes there."""
    _check_tape(slot)
    if not isinstance(offset, types.IntegerLiteral):
        return None  # the offset must be a constant
    rec = _check_record(value, "tape_put")
    start = offset.literal_value

    def codegen(context, builder, sig, args):
        words = _held_words(context, builder, rec, args[2])
        _link_fast_path(context)
        _put_words(builder, args[0], start, words)
        return context.get_dummy_value()
    return types.none(types.voidptr, offset, rec), codegen


@intrinsic
def tape_depth(typingctx, tape):
    """Number of 8-byte words currently on ``tape``."""
    _check_tape(tape)

    def codegen(context, builder, sig, args):
        _link_fast_path(context)
        return _call(builder, "adjit_tape_depth", *args)
    return types.int64(types.voidptr), codegen


@intrinsic
def tape_set_depth(typingctx, tape, depth):
    """Drop ``tape`` back to ``depth`` words (a depth read earlier with tape_depth)."""
    _check_tape(tape)
    if not isinstance(depth, types.Integer):
        raise errors.TypingError("adjit tape_set_depth: depth must be an integer")

    def codegen(context, builder, sig, args):
        _link_fast_path(context)
        _call(builder, "adjit_tape_set_depth", *args)
        return context.get_dummy_value()
    return types.none(types.voidptr, types.int64), codegen


_pop_cache = {}


def pop_record(record_type):
    """Return the (cached) intrinsic ``(voidptr) -> record_type`` popping one record.

    ``record_type`` must be exactly the numba type that was pushed.
    """
    try:
        return _pop_cache[record_type]
    except KeyError:
        pass
    rec = _check_record(record_type, "pop_record")
    nwords = record_words(rec)

    def _pop(typingctx, tape):
        _check_tape(tape)

        def codegen(context, builder, sig, args):
            if nwords == 0:
                return ir.Constant(context.get_value_type(rec), ir.Undefined)
            _link_fast_path(context)
            slot = _call(builder, "adjit_tape_release", args[0], ir.Constant(_I64, nwords))
            words = (_call(builder, "adjit_tape_get", slot, ir.Constant(_I64, i))
                     for i in range(nwords))
            return _decode(context, builder, rec, words)
        return rec(types.voidptr), codegen

    _pop.__name__ = _pop.__qualname__ = "pop_record_" + re.sub(r"\W+", "_", str(rec))
    # setdefault: concurrent first calls for one type still agree on a single intrinsic
    return _pop_cache.setdefault(record_type, intrinsic(_pop))
