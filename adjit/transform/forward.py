"""Forward mode: the dual (JVP) transform of typed IR, line by line.

``f_jvp(*args, *tangents) -> (y, ydot)``: every active float ``v`` gets a tangent ``v%dot``
of the same type, every active float array a tangent array, every tuple holding
differentiable items a tuple of their tangents. The transform adds no blocks and no stacks;
branches test the primal. Calls to ``@njit`` functions call their own JVP program.

Forward-over-reverse: adjit's generated programs are transformed like any other function.
Their tape operations get rules of their own (``tape.py`` beside this file): a pushed record
with float items is followed by a record of their tangents on the same per-thread tape, and
a pop takes both off in reverse order. The tape is LIFO per thread, so this interleaving is
exactly a shadow tape. Generated (tape-using) functions treat every float as active, since
values popped from the tape carry derivatives that no data-flow edge shows.
"""
import inspect
import threading

from numba.core import ir, types

from .. import config
from ..capture.fingerprint import user_rules_stamp
from ..capture.normalise import normalise
from ..ir.checks import after_rewrite
from ..capture.typed_ir import capture, is_generated, py_function_of
from ..compile.dispatcher import generated_dispatcher
from ..errors import UnsupportedError
from ..ir.builder import Emitter, clone_stmt
from .analysis import activity
from ..compile.kernel_cache import enable_derived_cache, static_signature
from .sink_tangents import sink_tangents
from ..ir.dead_code import remove_dead_code
from .partials import (forward_product_form, generated_product_form, long_straight_line,
                       plain_constant_products)
from .tangents import differentiable_items, has_tangent, tangent_suffix
from ..ir.lists import display_name, is_float_list
from ..ir.nodes import construct_refusal, definitions_indexed, node_kind
from .forward_handlers import FWD_HANDLERS
from .forward_tape import early_record_tangents
from .reverse.forward_pass import copy_phi_inputs, is_phi, phi_exports
from ..compile.caches import owned_cache
from ..rules.arrays import zeros_shadow
from ..rules.refusal_hints import may_be_none_words


def tangent_arg_names(arg_names, active_args):
    """Parameter names of the tangent arguments, unique even when the function already
    has parameters called ``x_adjit_dot`` (a JVP program transformed again)."""
    taken = set(arg_names)
    out = {}
    for i in sorted(active_args):
        name = f"{arg_names[i]}_adjit_dot"
        while name in taken:
            name += "_"
        taken.add(name)
        out[i] = name
    return out


def generated_activity(fn, active_args):
    """Activity for adjit's generated code: the tape (any ``void*``) carries activity,
    because what a reverse pass pops was pushed with tangents. A value computed only
    from constants and inactive arguments (the seed ``ybar = 1.0`` of ``grad``, the
    adjoints it flows into) then has no tangent, and its zero terms are never emitted."""
    tapes = [name for name, typ in fn.typemap.items() if typ == types.voidptr]
    return activity(fn, active_args, carriers=tapes)


class ForwardContext:
    """One function's JVP build: activity, tangent names, zero tangents, derived calls."""

    def __init__(self, fn, active_args, tangent_only=False):
        self.fn = fn
        self.blocks = fn.func_ir.blocks
        self.active_args = frozenset(active_args)
        self.tangent_only = tangent_only  # return the tangent alone (``derive_jvp``)
        self.generated = is_generated(fn.py_func) or fn.extra.get("generated", False)
        self.suffix = tangent_suffix(fn.typemap)
        # the guarded product of this function's tangents: the user's elementwise loops
        # vectorise and keep selects, reductions and long straight-line code check for
        # NaN two products at a time with the guard in a block of its own
        # (``partials.forward_product_form``: jvp of large_single_block 2.53 -> 2.33
        # times the primal, rosenbrock_loop 2.94 -> 2.69); forward mode over adjit's
        # generated loops too (``partials.generated_product_form``)
        self.product = (generated_product_form(self.blocks) if self.generated
                        else forward_product_form(self.blocks, self.typeof))
        # forward mode over a long straight-line reverse sweep: its products, checked for
        # NaN by a select each (``adjoint_product_chain``), and their tangents are
        # checked in blocks of their own (``fwd_adjoint_product``). LLVM's code generator
        # turned the selects of large_single_block's hvp into branches one by one, each
        # time moving the rest of one huge block: 40 s of compile, 23 s now, same speed.
        self.chain_as_branch = self.generated and long_straight_line(self.blocks)
        self.derive_jvp = derive_jvp  # handlers derive callees through the context
        self.early_records = early_record_tangents(self.blocks, fn.typeof)
        self.act = (generated_activity(fn, self.active_args) if self.generated
                    else activity(fn, self.active_args))
        self.tangent_args = tangent_arg_names(fn.arg_names, self.active_args)

    def typeof(self, name):
        return types.unliteral(self.fn.typeof(name))

    def active(self, var):
        """Whether ``var`` has a tangent: an active float/array, or a container
        (tuple, iterator, pair) that holds active values."""
        if not isinstance(var, ir.Var):
            return False
        if var.name in self.act.active:
            return True
        if var.name not in self.act.carriers:
            return False
        typ = self.typeof(var.name)  # bool arrays and the like carry no tangent
        return has_tangent(typ) or is_float_list(typ) or isinstance(
            typ, (types.Pair, types.SimpleIteratorType))

    def unsupported(self, construct, loc, detail=""):
        return UnsupportedError(construct, self.fn.user_name, loc, detail)

    def dot(self, name):
        """Name of the tangent of variable ``name`` in this function."""
        return name + self.suffix

    def tangent(self, e, var):
        """The tangent of ``var`` as a variable, materialising a zero when inactive."""
        if self.active(var):
            return e.var(self.dot(var.name))
        return self.zero(e, var, self.typeof(var.name))

    def zero(self, e, like, typ):
        """A zero tangent of type ``typ`` (shaped like the variable ``like``)."""
        import numpy as np
        if isinstance(typ, types.Float):
            return e.const(np.float32(0.0) if typ == types.float32 else 0.0, hint="zero")
        if isinstance(typ, types.Array):
            return e.call(zeros_shadow, [like], hint="zeros")
        if isinstance(typ, types.BaseTuple):
            items = [self.zero(e, e.item(like, k), types.unliteral(typ.types[k]))
                     for k in differentiable_items(typ)]
            return e.tuple(items, hint="zerotup")
        return e.const(0.0, hint="zero")

    def set_tangent(self, e, target, value):
        """``target%dot = value``, keeping float32 tangents float32."""
        import numpy as np
        if self.typeof(target.name) == types.float32:
            value = e.call(np.float32, [value], hint="f32")
        e.assign(value, target=self.dot(target.name))


def check_tangent_assigned(ctx, stmt, emitted):
    """The post-condition of every forward handler: an assignment to an active variable
    assigns its tangent too. A handler that forgot a case would otherwise leave the
    tangent undefined, or a stale one from an earlier iteration: a wrong number."""
    if not (isinstance(stmt, ir.Assign) and ctx.active(stmt.target)):
        return
    name = ctx.dot(stmt.target.name)
    if any(isinstance(s, ir.Assign) and s.target.name == name for s in emitted):
        return
    raise ctx.unsupported(f"the value assigned to {display_name(stmt.target.name)}", stmt.loc,
                          "adjit's forward rule for it gave no tangent (an adjit bug: "
                          "please report it); computing the value another way may avoid it")


def build_jvp_blocks(ctx, arg_names):
    """The JVP blocks: primal statements each followed by their tangent statements."""
    blocks = {}
    exports = phi_exports(ctx.blocks)
    tangent_index = len(arg_names)
    for label in sorted(ctx.blocks):
        primal = ctx.blocks[label]
        block = ir.Block(primal.scope, primal.loc)
        e = Emitter(block, primal.scope, primal.loc)
        if label == min(ctx.blocks):
            for i in sorted(ctx.active_args):
                name = ctx.tangent_args[i]
                e.assign(ir.Arg(name, tangent_index, primal.loc), target=name)
                tangent_index += 1
        for stmt in primal.body[:-1]:
            if is_phi(stmt):
                continue
            e.loc = stmt.loc
            if isinstance(stmt, ir.Assign) and stmt.target.name in ctx.act.control_only:
                e.stmt(clone_stmt(stmt))  # steers control flow only: no tangent
                continue
            if isinstance(stmt, ir.Assign) and may_be_none(ctx, stmt.target):
                what, advice = may_be_none_words(ctx.fn, stmt.value, stmt.target.name)
                raise ctx.unsupported(what, stmt.loc, advice)
            handler = FWD_HANDLERS.get(node_kind(stmt))
            if handler is None:
                if any(ctx.active(v) for v in stmt.list_vars()):
                    what, advice = construct_refusal(stmt)
                    raise ctx.unsupported(what, stmt.loc, advice)
                e.stmt(clone_stmt(stmt))
                continue
            start = len(block.body)
            handler(ctx, stmt, e)
            check_tangent_assigned(ctx, stmt, block.body[start:])
        e.loc = primal.terminator.loc
        pairs = []
        for target, value in exports.get(label, ()):
            pairs.append((target, value))
            if ctx.active(target):
                tan = (ctx.tangent(e, value) if isinstance(value, ir.Var)
                       else ctx.zero(e, target, ctx.typeof(target.name)))
                pairs.append((e.var(ctx.dot(target.name)), tan))
        copy_phi_inputs(e, pairs)
        term = primal.terminator
        if isinstance(term, ir.Return):
            value = term.value
            e.ret(ctx.tangent(e, value) if ctx.tangent_only
                  else e.tuple([value, ctx.tangent(e, value)], hint="dual"))
        else:
            block.append(clone_stmt(term))
        blocks[label] = block
    plain_constant_products(blocks)
    primal = set(ctx.fn.typemap)
    # tangents nothing reads (of an array whose shape alone is used: hvp's forward pass
    # of np.kron computed a 5 MB tangent for nothing); the primal's own code stays,
    # unless only the tangent is returned: then what only fed the value goes too, with
    # the element writes into shadows (hvp's primal gradient: rosenbrock_loop's hvp
    # kept a second shadow array it wrote twice per iteration)
    if ctx.tangent_only:
        remove_dead_code(blocks, element_writes=True)
    else:
        remove_dead_code(blocks, removable=lambda stmt: stmt.target.name not in primal)
    return sink_tangents(blocks, primal)


def may_be_none(ctx, var):
    """Whether ``var`` is an optional float that carries derivatives (``r = x * x if c
    else None``, a helper that may return None): it has no tangent, so anything read
    from it would have a silent zero one."""
    return (isinstance(ctx.typeof(var.name), types.Optional)
            and var.name in ctx.act.carriers)


def _is_forward_mode_code(func):
    """Whether ``func`` is code adjit generated in forward mode: a JVP program, or the
    ``jvp`` transform that holds one."""
    spec = getattr(func, "adjit_spec", None)
    return getattr(func, "adjit_jvp_of", None) is not None or bool(spec and spec[0] == "jvp")


def _higher_order_refusal(func, error):
    """The refusal of a JVP of a JVP program (``jvp`` over ``hvp``, or over a ``jvp``
    whose function calls a helper) in the user's terms: the construct without a rule is
    in the code adjit generated for the user's line, not written there."""
    for _ in range(8):  # back through the derivatives to the user's function
        spec = getattr(func, "adjit_spec", None)
        parent = getattr(func, "adjit_jvp_of", None) or (spec[1] if spec else None)
        if parent is None:
            break
        func = parent
    return UnsupportedError(
        "a forward-mode derivative of adjit's own forward-mode code",
        py_function_of(func).__qualname__, error.loc,
        detail="adjit differentiates that code again for scalar arithmetic, not yet for its "
        f"array operations (here: {error.construct}); write the array operation as a loop "
        "over elements, or take this derivative another way")


_programs = owned_cache("jvp_program")
_lock = threading.RLock()


class JVPProgram:
    """The JVP dispatcher of one (function, argument types, active arguments)."""

    def __init__(self, func, argtypes, active_args, tangent_only=False):
        self.func = func
        self.tangent_only = tangent_only
        self.py_func = py_function_of(func)
        self.argtypes = tuple(argtypes)
        self.active_args = tuple(sorted(active_args))
        self.arg_names = tuple(inspect.signature(self.py_func).parameters)
        tangents = tangent_arg_names(self.arg_names, self.active_args)
        names = list(self.arg_names) + [tangents[i] for i in self.active_args]
        # a forward-mode program is optimised alone before its callers inline it, so
        # -O3 vectorises its loops (see inline_library). hvp's jvp of grad(f) too: it
        # holds grad's passes inline, and spliced into hvp's own body instead, its
        # reverse loop lost its vectors (rosenbrock_loop's hvp: 4.75 primal calls, not 3.0)
        mode = "tangent" if tangent_only else "jvp"  # hvp's returns the tangent alone
        self.dispatcher = generated_dispatcher(
            f"{self.py_func.__name__}_{mode}", names, self._build, internal=True,
            primal=func, optimise_alone=True)
        self.dispatcher.adjit_jvp_of = func  # a JVP of it is a derivative of a JVP
        # the JVP of one of adjit's rule kernels is as static as the kernel: on disk too
        if static_signature(self.argtypes):
            enable_derived_cache(self.dispatcher, func, mode, lambda: (
                self.argtypes, self.active_args, user_rules_stamp()))
        self._typed = None

    @property
    def typed(self):
        if self._typed is None:
            self._typed = normalise(capture(self.func, self.argtypes))
        return self._typed

    def _build(self, argtypes):
        return self.blocks()

    def blocks(self):
        """The JVP program's IR. Its dispatcher compiles it for callers' JVPs and for
        ``hvp``; ``jvp(f)`` splices it into its own body instead (``ir.inlining``)."""
        try:
            with definitions_indexed(self.typed.func_ir.blocks):  # read, not changed
                ctx = ForwardContext(self.typed, self.active_args, self.tangent_only)
                blocks = build_jvp_blocks(ctx, self.arg_names)
        except UnsupportedError as error:
            if not _is_forward_mode_code(self.func):
                raise
            raise _higher_order_refusal(self.func, error) from error
        after_rewrite(blocks, f"jvp of {self.py_func.__qualname__}", None)
        return blocks

    def show(self):
        from ..ir.printing import format_blocks
        with definitions_indexed(self.typed.func_ir.blocks):
            ctx = ForwardContext(self.typed, self.active_args, self.tangent_only)
            blocks = build_jvp_blocks(ctx, self.arg_names)
        return format_blocks(blocks, f"jvp of {self.py_func.__qualname__}")


def derive_jvp(func, argtypes, active_args, tangent_only=False):
    """The cached ``JVPProgram`` of ``func`` (shared by every call site). With
    ``tangent_only`` its dispatcher returns the tangent alone and computes no more of
    the value than the tangent needs: ``hvp``, which discards grad's value."""
    argtypes = tuple(types.unliteral(t) for t in argtypes)
    key = (py_function_of(func), argtypes, tuple(sorted(active_args)), tangent_only)
    with _lock:
        program = _programs.get(key)
        if program is None:
            program = _programs[key] = JVPProgram(func, argtypes, active_args,
                                                  tangent_only)
        return program


__all__ = ["derive_jvp", "JVPProgram", "config"]
