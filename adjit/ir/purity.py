"""Which calls in generated IR only compute their result: adjit's own kernels declared
pure where they are defined (the tangent kernels of forward mode, which return a new
value and write nothing). Passes that move statements ask here, beside ``dead_code``'s
test for NumPy and ``math`` functions (``effect_free``)."""
from numba.core import ir

#: id -> kernel: adjit's kernels that read their arguments and write nothing (kept alive
#: here, as the rule modules that define them keep them for the process)
_PURE_KERNELS = {}


def pure_kernel(kernel):
    """Declare ``kernel`` (an adjit dispatcher or overloaded function) free of effects:
    it reads its arguments and returns a new value. Returns it, to use as a decorator."""
    _PURE_KERNELS[id(kernel)] = kernel
    return kernel


def is_pure_kernel(obj):
    """Whether ``obj`` was declared with ``pure_kernel`` (never None: a callee that is
    not a global, such as a method, is not known to be pure)."""
    return obj is not None and _PURE_KERNELS.get(id(obj)) is obj


def calls_pure_kernel(value, globals_):
    """Whether ``value`` is a call of a pure kernel with positional arguments only."""
    return (isinstance(value, ir.Expr) and value.op == "call" and not value.kws
            and value.vararg is None and is_pure_kernel(globals_.get(value.func.name)))


#: id -> kernel: adjit's kernels that read their arguments and add into the last one,
#: writing nothing else (the reverse updates of matrix products)
_ACCUMULATING_KERNELS = {}


def accumulating_kernel(kernel):
    """Declare ``kernel`` an update: ``kernel(..., shadow)`` reads its arguments and adds
    into ``shadow``, its last, and has no other effect. Dead-code removal drops such an
    update of a shadow whose values nothing reads (hvp's gradient of an argument).
    Returns it, to use as a decorator."""
    _ACCUMULATING_KERNELS[id(kernel)] = kernel
    return kernel


def accumulated_argument(stmt, globals_):
    """The array variable ``stmt`` (``void = kernel(..., shadow)``) adds into, if it
    calls an ``accumulating_kernel`` with positional arguments; else None."""
    value = getattr(stmt, "value", None)
    if not (isinstance(stmt, ir.Assign) and isinstance(value, ir.Expr)
            and value.op == "call" and value.args and not value.kws
            and value.vararg is None):
        return None
    kernel = globals_.get(value.func.name)
    if kernel is None or _ACCUMULATING_KERNELS.get(id(kernel)) is not kernel:
        return None
    return value.args[-1]


#: id -> (kernel, like): adjit's allocations of zeros, and whether the array is shaped
#: like the kernel's one argument, of which it reads only the shape
_ZEROS_KERNELS = {}


def zeros_kernel(like=False):
    """Declare a kernel an allocation of zeros and nothing else (removable when its
    array is unused); ``like``: ``kernel(a)`` is shaped, typed and ordered like ``a``,
    whose shape alone it reads, so ``kernel(kernel(a))`` is ``kernel(a)``. Returns a
    decorator."""
    def declare(kernel):
        _ZEROS_KERNELS[id(kernel)] = (kernel, like)
        return kernel
    return declare


def allocates_zeros(value, globals_, like=False):
    """Whether ``value`` calls a ``zeros_kernel`` (with ``like``, a ``like`` one)."""
    if not (isinstance(value, ir.Expr) and value.op == "call"):
        return False
    kernel = globals_.get(value.func.name)
    entry = _ZEROS_KERNELS.get(id(kernel)) if kernel is not None else None
    return entry is not None and entry[0] is kernel and (entry[1] or not like)
