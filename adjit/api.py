"""Public transforms: ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``hvp``, ``show``.
Each returns a Numba dispatcher (generated IR compiled through Numba's pipeline), so it
runs from Python and inside ``@njit`` code, is compiled once per signature, and calling
``adjit.grad(f)`` twice returns the same dispatcher. Conventions follow JAX: ``argnums``
is an int (one gradient) or a tuple of ints (a tuple); gradients have their argument's
type and shape."""
import inspect
import threading

import numba
import numpy as np
from numba.core import ir, types

from .arguments import (
    TANGENT_SHAPE, check_cotangent, check_differentiable, check_named_parameters,
    check_scalar_output, check_shape, check_tangents, check_written_arguments_apart,
    entry_block, normalise_argnums, omitted_default, parameter_counts,
    refuse_float_tuples, refuse_reverse_over_reverse, takes_tangent, trailing_defaults)
from .capture.freshness import StalenessCheck, ensure_current
from .capture.typed_ir import capture, py_function_of
from .compile.caches import OwnedCache
from .compile.dispatcher import generated_dispatcher, refreshed_jit, set_rebuilder
from .errors import ArgumentError
from .ir.inlining import splice
from .runtime import tape_acquire
from .compile.hessian_columns import hessian_columns
from .jvp_wrappers import (JVPWrapper, NestedJVPWrapper, array_leaves, leaf,
                           tangent_as_argument, written_arguments)
from .rules.arrays import zeros_shadow
from .transform.reverse.program import derive

_transforms = OwnedCache("transform")  # dies with the function (compile/caches.py)
_lock = threading.Lock()


class _Wrapper:
    """Builds the IR of a top-level transform: acquire the tape, fwd, seed, rev."""

    def __init__(self, func, argnums, single, kind):
        self.func, self.argnums, self.single, self.kind = func, argnums, single, kind
        self.py_func = py_function_of(func)
        self.names = tuple(inspect.signature(self.py_func).parameters)
        self.fname = self.py_func.__qualname__

    @property
    def star_args(self):
        """Whether the stub takes ``*args``: a ``vjp`` of a function with defaults, whose
        trailing defaults may be omitted before ``ybar`` (as in ``jvp``). Without
        defaults, vjp's stub keeps named parameters, so ``jvp(vjp(f))`` can derive it."""
        return self.kind == "vjp" and bool(self.py_func.__defaults__)

    def stub_names(self):
        """The stub's parameters: the function's (omitted defaults become ``Omitted``
        types) and vjp's ``ybar``, or None for ``*args`` (``star_args``)."""
        if self.star_args:
            return None
        names = list(self.names)
        if self.kind == "vjp":
            names.append("ybar" if "ybar" not in names else "adjit_ybar_in")
        return names

    def _arguments(self, argtypes):
        """``(given, defaults, primal_types, ybar_type)``: how many arguments the call
        passed, the values of the omitted defaults by index, the function's argument
        types with the defaults filled in, and the cotangent's type (vjp only)."""
        n = len(self.names)
        if self.star_args:
            flat = tuple(types.unliteral(t) for t in argtypes[0].types)  # the *args tuple
            given = len(flat) - 1
            required, _ = parameter_counts(self.py_func)
            if not required <= given <= n:
                raise ArgumentError(
                    f"vjp({self.fname}) takes the arguments ({', '.join(self.names)}; "
                    f"trailing defaults may be omitted) and then ybar; got {len(flat)} values")
            values, primal_types = trailing_defaults(self.py_func, flat[:given], given)
            return given, dict(enumerate(values, given)), primal_types, flat[given]
        # omitted arguments with defaults (grad and value_and_grad) take their default
        defaults = {i: t.value for i, t in enumerate(argtypes[:n]) if isinstance(t, types.Omitted)}
        primal_types = tuple(types.unliteral(numba.typeof(defaults[i]) if i in defaults else t)
                             for i, t in enumerate(argtypes[:n]))
        return n, defaults, primal_types, argtypes[n] if self.kind == "vjp" else None

    def _stub_arguments(self, e, given):
        """The stub's argument variables: the function's arguments as given (then ybar)."""
        if not self.star_args:
            return [e.assign(ir.Arg(name, i, e.loc), target=name)
                    for i, name in enumerate(self.stub_names())]
        packed = e.assign(ir.Arg("args", 0, e.loc), target="args")
        return [e.item(packed, k, hint="a") for k in range(given + 1)]

    def _check_ybar(self, blocks, e, primal_types, btype, y, ybar):
        """Refuse a cotangent without the output's structure, dtype or shape; returns the
        emitter that goes on."""
        ytype = capture(self.func, primal_types).return_type
        for path in check_cotangent(self.fname, ytype, btype):
            yk, bk = y, ybar
            for k in path:
                yk, bk = e.item(yk, k), e.item(bk, k)
            where = "ybar" + "".join(f"[{k}]" for k in path)
            message = f"vjp({self.fname}): {where} must have the shape of the output"
            e = check_shape(blocks, e, yk, bk, message)
        return e

    def build(self, argtypes):
        """IR of the transform for one signature."""
        n = len(self.names)
        given, defaults, primal_types, ybar_type = self._arguments(argtypes)
        if self.kind == "vjp":
            refuse_float_tuples(self.fname, self.names, primal_types)
            active = tuple(i for i, t in enumerate(primal_types) if takes_tangent(t))
        else:
            check_differentiable(self.fname, self.names, primal_types, self.argnums,
                                 tuples=True)
            check_scalar_output(self.fname, capture(self.func, primal_types))
            active = self.argnums
        program = derive(self.func, primal_types, active)
        block, e = entry_block(self.py_func)
        blocks = {0: block}
        args = self._stub_arguments(e, given)
        if self.star_args:  # ybar after the function's arguments, defaults included
            args[given:given] = [None] * (n - given)
        for i, value in defaults.items():
            args[i] = omitted_default(e, value)
        written = written_arguments(self.func, primal_types)
        e = check_written_arguments_apart(blocks, e, f"{self.kind}({self.fname})",
                                          self.names, args[:given], primal_types, written)
        tape = e.call(tape_acquire, [], hint="tape")
        # the passes run inline; the transform's entry sets the tape back on an exception
        # (compile/unwinding.py)
        if self.kind == "grad":  # the value is never read: push the records, nothing else
            _, e = splice(blocks, e, program.pass_blocks("fwd_tape"), [tape] + args[:n], "fwd")
        else:
            y, e = splice(blocks, e, program.pass_blocks("fwd"), [tape] + args[:n], "fwd")
        if self.kind == "vjp":
            e = self._check_ybar(blocks, e, primal_types, ybar_type, y, args[n])
            if written:
                y = _detached(e, y, capture(self.func, primal_types).return_type)
        shadows = [_zero_shadow(e, args[i], primal_types[i]) for i in program.array_args]
        seed = args[n] if self.kind == "vjp" else e.const(
            np.float32(1.0) if capture(self.func, primal_types).return_type == types.float32
            else 1.0, hint="one")
        cots, e = splice(blocks, e, program.pass_blocks("rev"),
                         [tape] + args[:n] + shadows + [seed], "rev")
        if self.kind == "vjp":  # one cotangent per argument given, as in JAX
            if given < n or any(isinstance(primal_types[i], types.BaseTuple) for i in active):
                cots = e.tuple([_gradient(e, cots, i, primal_types[i], shadows,
                                          program.array_args) if i in active
                                else e.item(cots, i) for i in range(given)])
            e.ret(e.tuple([y, cots]))
            return blocks
        grads = [_gradient(e, cots, i, primal_types[i], shadows, program.array_args)
                 for i in self.argnums]
        result = grads[0] if self.single else e.tuple(grads)
        e.ret(e.tuple([y, result]) if self.kind == "value_and_grad" else result)
        return blocks


def _zero_shadow(e, arg, typ):
    """The zero shadow a reverse pass increments for an array argument; for a tuple
    argument, the tuple of its items' shadows (0 for a float item)."""
    if not isinstance(typ, types.BaseTuple):
        return e.call(zeros_shadow, [arg], hint="shadow")
    return e.tuple([e.call(zeros_shadow, [e.item(arg, k)], hint="shadow")
                    if isinstance(t, types.Array) else e.const(0.0, hint="zero")
                    for k, t in enumerate(typ.types)], hint="shadows")


def _gradient(e, cots, i, typ, shadows, array_args):
    """Argument ``i``'s gradient: its item of the reverse pass's cotangents, or for a
    tuple of floats and float arrays the tuple of its items' gradients (an array item's
    is its shadow, a float item's its cotangent), as JAX returns a tuple's."""
    if not isinstance(typ, types.BaseTuple):
        return e.item(cots, i)
    cot = e.item(cots, i, hint="cot")
    shadow = shadows[array_args.index(i)] if i in array_args else None
    return e.tuple([e.item(shadow, k, hint="g") if isinstance(t, types.Array)
                    else e.item(cot, k, hint="g") for k, t in enumerate(typ.types)],
                   hint="grads")


def _detached(e, y, ytype):
    """``y`` with each array in it copied: a function that writes into its arguments
    may return one of them (``fill(x, out); return out``), and the reverse pass puts
    the arguments' old values back, which ``vjp`` returned as the output."""
    if isinstance(ytype, types.Array):
        return e.call(np.copy, [y], hint="y")
    if isinstance(ytype, types.BaseTuple) and any(
            isinstance(t, (types.Array, types.BaseTuple)) for t in ytype):
        return e.tuple([_detached(e, e.item(y, k), t) for k, t in enumerate(ytype)])
    return y


def _finish(disp, func, spec, label, cache):
    """Equip a transform's dispatcher: its pickle recipe ``spec`` (kind, argnums), the
    freshness check its calls run, and the disk cache when asked (``cache=True``)."""
    if cache is not True and cache is not False:
        raise ArgumentError(f"cache must be True or False, got {cache!r}")
    previous = getattr(disp, "adjit_spec", None)
    disp.adjit_spec = (spec[0], func, spec[1], bool(cache or (previous and previous[3])))
    disp.adjit_refresh = StalenessCheck(func)
    if cache:
        from .capture.fingerprint import fingerprint
        from .compile.disk_cache import enable_disk_cache
        enable_disk_cache(disp, py_function_of(func), label, lambda: fingerprint(func, label))
    return disp


def clear_cache(func=None):
    """Delete the disk-cache files of every derivative of ``func`` (``cache=True``) where
    Numba would cache ``func``, or without ``func`` those of adjit's rule kernels."""
    from .compile import disk_cache, kernel_cache
    if func is None:
        return kernel_cache.clear_kernel_cache()
    if not callable(func):
        raise ArgumentError(f"adjit.clear_cache expects a function, got {func!r}")
    return disk_cache.clear_cache(py_function_of(func))


def _label(kind, nums, single):
    """The transform's name in cache file names: ``grad0``, ``hvp0-1t`` (a tuple)."""
    return kind + "-".join(map(str, nums)) + ("" if single else "t")


def _rebuild_transform(kind, func, argnums, cache):
    """Unpickle a transform: the same transform of the unpickled function (which reaches
    its compiled code through the disk cache when it was built with ``cache=True``)."""
    if kind in ("jvp", "vjp", "hessian"):
        return globals()[kind](func, cache=cache)
    return globals()[kind](func, argnums, cache=cache)


set_rebuilder(_rebuild_transform)


def _transform(func, argnums, kind, cache=False):
    """The cached dispatcher of one transform of ``func``."""
    if not callable(func):
        raise ArgumentError(f"adjit.{kind} expects a function, got {func!r}")
    refuse_reverse_over_reverse(func, kind)
    py_func = py_function_of(func)
    check_named_parameters(py_func, kind)
    nparams = len(inspect.signature(py_func).parameters)
    nums, single = normalise_argnums(argnums, nparams, py_func.__qualname__)
    ensure_current(func)
    key = (py_func, nums, single, kind)
    with _lock:
        disp = _transforms.get(key)
        if disp is None:
            wrapper = _Wrapper(func, nums, single, kind)
            disp = generated_dispatcher(f"{kind}_{py_func.__name__}", wrapper.stub_names(),
                                        wrapper.build,
                                        defaults=None if kind == "vjp" else py_func.__defaults__,
                                        primal=func)
            disp.adjit_wrapper = wrapper
            _transforms[key] = disp
        return _finish(disp, func, (kind, argnums), _label(kind, nums, single), cache)


def grad(func=None, argnums=0, cache=False):
    """``grad(f)(*args)`` is d f / d args[argnums]; usable as ``@grad`` or ``@grad(argnums=1)``.

    ``cache=True`` keeps the compiled derivative on disk, like ``numba.njit(cache=True)``
    (same directory), keyed by the content fingerprint of ``f`` and its callees: a new
    process loads it without deriving or compiling. The same option exists on every
    transform."""
    if func is None:
        return lambda f: grad(f, argnums, cache)
    return _transform(func, argnums, "grad", cache)


def value_and_grad(func=None, argnums=0, cache=False):
    """``value_and_grad(f)(*args)`` is ``(f(*args), grad(f, argnums)(*args))`` in one sweep."""
    if func is None:
        return lambda f: value_and_grad(f, argnums, cache)
    return _transform(func, argnums, "value_and_grad", cache)


def vjp(func, cache=False):
    """``vjp(f)(*args, ybar)`` is ``(f(*args), cotangents)``, one cotangent per argument
    given: ybar * df/darg for floats, an array for float arrays, a tuple of these for a
    flat tuple of floats and float arrays (as JAX returns a tuple's), 0 for ints and bools.
    Trailing arguments with defaults may be omitted (they get no cotangent), as in
    ``jvp``; ``ybar`` is always the last value passed."""
    return _transform(func, 0, "vjp", cache)


def jvp(func, cache=False):
    """``jvp(f)(*args, *tangents)`` is ``(f(*args), df)``: forward mode, with one tangent
    per float or float-array argument, in order; a flat tuple of these takes a tuple of
    tangents, as in JAX. ``jvp(grad(f))`` is forward-over-reverse. ``cache=True``: as
    for ``grad``."""
    if not callable(func):
        raise ArgumentError(f"adjit.jvp expects a function, got {func!r}")
    py_func = py_function_of(func)
    spec = getattr(func, "adjit_spec", None)
    # jvp(jvp(f)) (one level of nesting): the JVP of f's JVP program (NestedJVPWrapper)
    nested = (spec is not None and spec[0] == "jvp"
              and getattr(spec[1], "adjit_spec", None) is None)
    if not nested:
        check_named_parameters(py_func, "jvp")
    ensure_current(func)
    key = (py_func, (), False, "jvp")
    with _lock:
        disp = _transforms.get(key)
        if disp is None:
            wrapper = NestedJVPWrapper(spec[1]) if nested else JVPWrapper(func)
            # the number of tangents depends on the argument types: the stub takes *args
            disp = generated_dispatcher(f"jvp_{py_func.__name__}", None, wrapper.build,
                                        primal=func)
            _transforms[key] = disp
        return _finish(disp, func, ("jvp", None), "jvp", cache)


def hvp(func, argnums=0, cache=False):
    """``hvp(f)(*args, v)`` is the Hessian of f with respect to ``args[argnums]`` applied to
    ``v``, computed as ``jvp(grad(f, argnums))`` (forward-over-reverse).

    With a tuple ``argnums=(i, j, ...)`` it takes one tangent per listed argument,
    ``hvp(f, (i, j))(*args, v_i, v_j)``, and returns a tuple: the blocks of the Hessian of
    f with respect to those arguments jointly, applied to ``(v_i, v_j)`` (the other
    arguments held fixed), i.e. ``jvp(grad(f, (i, j)))``'s tangent, as in JAX."""
    if not callable(func):
        raise ArgumentError(f"adjit.hvp expects a function, got {func!r}")
    refuse_reverse_over_reverse(func, "hvp")
    py_func = py_function_of(func)
    check_named_parameters(py_func, "hvp")
    nparams = len(inspect.signature(py_func).parameters)
    nums, single = normalise_argnums(argnums, nparams, py_func.__qualname__)
    ensure_current(func)
    key = (py_func, nums, single, "hvp")
    with _lock:
        disp = _transforms.get(key)
        if disp is None:
            wrapper = _HVPWrapper(func, nums, single)
            # omitted defaults change where the tangents start: the stub takes *args
            disp = generated_dispatcher(f"hvp_{py_func.__name__}", None, wrapper.build,
                                        primal=func)
            _transforms[key] = disp
        return _finish(disp, func, ("hvp", argnums), _label("hvp", nums, single), cache)


class _HVPWrapper:
    """Builds the IR of ``hvp(f, argnums)``: jvp of grad(f, argnums) with tangents v on
    the ``argnums`` arguments and zeros on the others."""

    def __init__(self, func, argnums, single):
        self.func, self.argnums, self.single = func, argnums, single
        self.names = tuple(inspect.signature(py_function_of(func)).parameters)

    def build(self, argtypes):
        """IR of ``hvp(f)`` for one signature: (args..., tangents...) -> H v. Trailing
        arguments with defaults may be omitted (one tangent per ``argnums`` entry follows
        the arguments given)."""
        from .transform.forward import derive_jvp
        py_func = py_function_of(self.func)
        fname = py_func.__qualname__
        flat = tuple(types.unliteral(t) for t in argtypes[0].types)  # the *args tuple
        n = len(flat) - len(self.argnums)
        required, nparams = parameter_counts(py_func)
        if not required <= n <= nparams or max(self.argnums) >= n:
            raise ArgumentError(
                f"hvp({fname}) takes the arguments ({', '.join(self.names)}; trailing "
                f"defaults may be omitted) and then one tangent per argnums entry "
                f"({len(self.argnums)}); got {len(flat)} values")
        defaults, primal_types = trailing_defaults(py_func, flat[:n], n)
        check_differentiable(fname, self.names, primal_types, self.argnums, tuples=True)
        check_tangents(fname, self.names, primal_types, self.argnums, flat[n:])
        check_scalar_output(fname, capture(self.func, primal_types), "hvp")
        g = grad(self.func, self.argnums[0] if self.single else self.argnums)
        # the others are held fixed: no tangents (a float in a typed Dict needs none)
        active = tuple(sorted(set(self.argnums)))
        program = derive_jvp(g, primal_types, active, tangent_only=True)
        block, e = entry_block(py_func)
        blocks = {0: block}
        packed = e.assign(ir.Arg("args", 0, e.loc), target="args")
        values = [e.item(packed, k, hint="a") for k in range(len(flat))]
        args = values[:n] + [omitted_default(e, d) for d in defaults]
        given = {i: tangent_as_argument(e, values[n + k], flat[n + k], args[i],
                                         primal_types[i])
                 for k, i in enumerate(self.argnums)}
        tangents = [given[i] for i in active]
        # checked here, or the grad inside would refuse the call as grad(f)'s
        e = check_written_arguments_apart(blocks, e, f"hvp({fname})", self.names, args[:n],
                                          primal_types, written_arguments(self.func,
                                                                          primal_types))
        for i, v in given.items():
            for path, t in array_leaves(primal_types[i]):
                where = self.names[i] + "".join(f"[{k}]" for k in path)
                e = check_shape(blocks, e, leaf(e, args[i], path), leaf(e, v, path),
                                TANGENT_SHAPE.format(where, 'hvp'))
        e.ret(e.call(program.dispatcher, args + tangents, hint="hv"))
        return blocks


def hessian(func, cache=False):
    """``hessian(f)(x)``: the dense Hessian of a function of one float or float-array
    argument (others with defaults keep them), one HVP per column (forward-over-reverse),
    symmetrised to remove rounding asymmetry. Returns a float for a scalar x and,
    as JAX does, an array of shape ``x.shape + x.shape`` otherwise (``(n, n)`` for a
    vector; ``H[i, j, k, l]`` is the second derivative by ``x[i, j]`` and ``x[k, l]``
    for a matrix; 0-d for a 0-d array). ``cache=True`` caches its ``hvp`` on disk (the
    small column loop around it is compiled in each process)."""
    if not callable(func):
        raise ArgumentError(f"adjit.hessian expects a function, got {func!r}")
    refuse_reverse_over_reverse(func, "hessian")
    py_func = py_function_of(func)
    check_named_parameters(py_func, "hessian")
    required, nparams = parameter_counts(py_func)
    if required != 1:  # the others, with defaults, keep them (hvp omits them too)
        raise ArgumentError(
            f"adjit.hessian({py_func.__qualname__}): hessian takes a function of one float "
            f"or float-array argument; {py_func.__qualname__} takes {nparams}. Use "
            "adjit.hvp(f, argnums=...) for Hessian-vector products of other functions, or "
            "close over the other arguments")
    ensure_current(func)
    hv = hvp(func, cache=cache)
    key = (py_func, (), False, "hessian")
    with _lock:
        if key in _transforms:
            return _transforms[key]

    def dense_hessian(x):
        return hessian_columns(hv, x)
    dense_hessian = refreshed_jit(dense_hessian, StalenessCheck(func))
    dense_hessian.adjit_spec = ("hessian", func, None, bool(cache))  # pickles as such
    with _lock:
        return _transforms.setdefault(key, dense_hessian)


__all__ = ["grad", "value_and_grad", "vjp", "jvp", "hvp", "hessian", "clear_cache"]
