"""The registry of array-valued primitives, and the one question both modes ask of a call.

A primitive that returns an array is registered once, through the helper of its rule shape:

- ``defview(keys)``: the result shares memory with argument 0 (``x.T``, ``x.reshape(s)``,
  ``np.transpose(x)``). Its shadow (reverse) and its tangent (forward) are the same
  operation applied to the parent's shadow or tangent, with the other arguments unchanged.
- ``deflinear_array(keys, transpose)``: a new array, linear in argument 0, the other
  arguments static (``x.copy()``, ``np.cumsum(x)``, ``x.ravel()``, ``np.sum(x, axis)``).
  Forward: the same call on the tangent. Reverse: ``transpose(g, shadow, *static)`` adds
  the adjoint ``g`` of the result into the argument's shadow.
- ``defbilinear(keys, vjp_a, vjp_b)``: a new array bilinear in arguments 0 and 1
  (``np.cross``, ``np.outer``). Forward: ``op(da, b) + op(a, db)``. Reverse:
  ``vjp_a(g, b, shadow_a)`` and ``vjp_b(g, a, shadow_b)``.
- ``defnonlinear(keys, vjps, jvps)``: a new array, any differentiable function of its
  leading arguments (``np.linalg.cholesky``, ``solve``, ``inv``). Forward:
  ``sum_k jvps[k](ans, *args, da_k)``. Reverse: ``vjps[k](g, ans, *args, shadow_k)``.

Keys are the called Python object (``np.cumsum``) or, for a method or attribute, Numba's
typing key ``(types.Array, name)``. Each primitive also says which argument types it
matches (``match``): a call that does not match is unsupported, never guessed at.

Every ``ArrayOp`` is a ``Primitive`` of the one registry (``primitive.py``).
``classify_array_call(key, argtypes, result_type)`` is the question: it returns the
``ArrayOp`` or None. Reverse mode (handlers, shadows), forward mode and the write and
aliasing analyses all ask it (through ``classify_call``), so the two modes cannot
disagree about a call.
"""
from dataclasses import dataclass, field

from numba.core import types

from ..compile.inline_library import internal_jit
from .primitive import PRIMITIVES, PURE, Effects, Primitive


@dataclass(eq=False)
class ArrayOp(Primitive):
    """One array-valued primitive: its rule ``shape`` (view, linear, bilinear,
    nonlinear) and the numba helpers of its rule. Both modes reach it as the call kind
    ``array_op``; the shape says how each emits it."""

    name: str
    shape: str                    # "view" | "linear" | "bilinear" | "nonlinear"
    transposes: tuple = ()        # reverse helpers, one per differentiable argument
    ndims: tuple = (1, 2)         # ranks of the differentiable array arguments it handles
    nargs: tuple = (1,)           # numbers of arguments (receiver included) it handles
    method: str = None            # attribute / method name when it is one
    attribute: bool = False       # ``x.T``: a getattr, not a call
    keys: list = field(default_factory=list)
    tangents: tuple = ()          # forward helpers of a nonlinear op, one per diff argument
    differentiable: tuple = None  # positions of the diff arguments of a nonlinear op
    family = "array_op"
    kind = "array_op"

    @property
    def reverse(self):
        """Transposes (linear, bilinear) or vjps (nonlinear); a view needs none."""
        return self.transposes

    @property
    def forward(self):
        """Tangent helpers of a nonlinear op; the others apply the op to tangents."""
        return self.tangents

    def effects(self):
        """A view shares its argument's memory; the others allocate their result."""
        return PURE if self.shape == "view" else Effects(allocates=True)

    @property
    def diff_args(self):
        """Positions of the arguments the result depends on differentiably."""
        if self.differentiable is not None:
            return self.differentiable
        return (0, 1) if self.shape == "bilinear" else (0,)

    def matches(self, argtypes, result_type):
        """Whether this rule covers a call with these argument and result types."""
        if len(argtypes) not in self.nargs or not isinstance(result_type, types.Array):
            return False
        for k in self.diff_args:
            t = types.unliteral(argtypes[k])
            if not (isinstance(t, types.Array) and t.ndim in self.ndims):
                return False
        return isinstance(result_type.dtype, types.Float)


def _register(keys, op):
    op.keys = list(keys)
    for key in keys:
        if isinstance(key, tuple) and op.method is None:
            op.method = key[1]
    return PRIMITIVES.register(keys, op)


def _method_key(name):
    return (types.Array, name)


def defview(keys, ndims=(1, 2), nargs=(1,), attribute=False):
    """Register a view: the shadow and the tangent are the same operation on the
    parent's shadow and tangent (memory is shared, so writes through the view reach the
    parent and so do their adjoints)."""
    return _register(keys, ArrayOp(_name(keys[0]), "view", (), ndims, nargs,
                                   attribute=attribute))


def deflinear_array(keys, transpose, ndims=(1, 2), nargs=(1,)):
    """Register a new array linear in argument 0: ``transpose(g, shadow)`` adds the
    result's adjoint ``g`` into the argument's shadow."""
    return _register(keys, ArrayOp(_name(keys[0]), "linear", (internal_jit(transpose),),
                                   ndims, nargs))


def defbilinear(keys, vjp_a, vjp_b, ndims=(1, 2), nargs=(2,)):
    """Register a new array bilinear in arguments 0 and 1: ``vjp_a(g, b, shadow_a)`` and
    ``vjp_b(g, a, shadow_b)`` add the transposed products into the shadows."""
    return _register(keys, ArrayOp(_name(keys[0]), "bilinear",
                                   (internal_jit(vjp_a), internal_jit(vjp_b)), ndims, nargs))


def defnonlinear(keys, vjps, jvps, ndims=(1, 2), nargs=(1,)):
    """Register a new array that depends nonlinearly on its first ``len(vjps)`` arguments
    (``np.linalg.cholesky``, ``solve``, ``inv``). Reverse: ``vjps[k](g, ans, *args,
    shadow_k)`` adds the adjoint of argument k; forward: ``jvps[k](ans, *args, da_k)``
    returns the tangent term of argument k. ``ans`` is the primal result."""
    return _register(keys, ArrayOp(_name(keys[0]), "nonlinear",
                                   tuple(_internal(v) for v in vjps), ndims, nargs,
                                   tangents=tuple(_internal(j) for j in jvps),
                                   differentiable=tuple(range(len(vjps)))))


def _internal(helper):
    """A rule's helper compiled as adjit's internal code, unless it already is (a helper
    that needs Numba options of its own, such as ``fastmath``)."""
    return helper if hasattr(helper, "py_func") else internal_jit(helper)


def _name(key):
    if isinstance(key, tuple):
        return f"x.{key[1]}"
    module = getattr(key, "__module__", "") or ""
    name = getattr(key, "__name__", str(key))
    if not module.startswith("numpy"):
        return name
    sub = module.split(".")[1] if "." in module else ""
    return f"np.{sub}.{name}" if sub in ("linalg", "fft", "random") else f"np.{name}"


def lookup_array_op(key):
    """The ``ArrayOp`` registered for ``key``, or None."""
    return PRIMITIVES.get(key, "array_op")


def classify_array_call(key, argtypes, result_type):
    """The ``ArrayOp`` that covers this call, or None (then it is not an array op)."""
    op = lookup_array_op(key)
    if op is None or not op.matches(argtypes, result_type):
        return None
    return op


class Kernel(Primitive):
    """A NumPy function acting elementwise by a scalar ``@njit`` kernel: the
    ``VectorizeToLoops`` pass turns its array calls into loops over the kernel, which
    adjit then derives (so ``reverse`` and ``forward`` are the kernel's own derivation)."""

    family = "kernel"
    kind = "derived"

    def __init__(self, name, kernel):
        self.name, self.kernel = name, kernel


def defkernel(keys, kernel):
    """Register a NumPy function that acts elementwise by a scalar ``kernel`` (an
    ``@njit`` function of one element of each operand), such as ``np.where`` and
    ``np.clip``. The ``VectorizeToLoops`` pass rewrites array calls into loops over the
    kernel, as for ``@vectorize`` ufuncs, and adjit derives the kernel in every mode."""
    PRIMITIVES.register(keys, Kernel(_name(keys[0]), kernel))


def lookup_kernel(key):
    """The scalar kernel registered for ``key`` with ``defkernel``, or None."""
    found = PRIMITIVES.get(key, "kernel")
    return found.kernel if found is not None else None


def registered_kernels():
    """Every function registered with ``defkernel`` (README list, coverage test)."""
    return PRIMITIVES.keys("kernel")


def registered_array_ops():
    """Every registered array op (for the README list and the coverage test)."""
    return PRIMITIVES.primitives("array_op")
