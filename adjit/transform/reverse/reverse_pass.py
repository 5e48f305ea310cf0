"""Build the reverse-pass IR: one adjoint block per primal block, walked backwards.

Layout of the generated function ``f_rev(adjit_tape, *args, *shadows, adjit_ybar)``:
- label 0 (entry): bind arguments, zero every adjoint, then pop the id of the return block
  that was taken (only when there are several) and seed its return adjoint with ``ybar``;
- one block per primal block ``B``: pop B's tape record, recompute free values, run the
  statement handlers in reverse order, then go to the predecessor that was taken: statically
  when it is unique, else by popping the id the predecessor pushed and switching on it.
  A return block's adjoint first allocates the shadows of arrays allocated in the function
  and adds ``ybar`` into the shadow of a returned array;
- edge blocks: ``phi%bar`` flows into the incoming value's adjoint along the taken edge;
- the exit block (after the entry block's adjoint): return one cotangent per argument.
"""
import itertools
import operator

import numpy as np
from numba.core import ir, types

from ...errors import UnsupportedError
from ...ir.builder import Emitter, clone_value
from ..analysis import operands
from ..partials import plain_constant_products
from ...ir.value_types import copy_type, is_float, is_float_array, is_scalar
from .lists import start_shadows as start_list_shadows
from .context import (TAPE, YBAR, bar, bar_item, is_basic_index, local_shadow, shadow_arg,
                      shape_of, zero_of)
from .shadows import argument_memory, empty_array, fresh_flag
from .handlers import emit_reverse
from .stmt_info import NOTHING, StmtInfo
from ...rules.arrays import add_cotangent, add_into, phi_transfer, snapshot_shadow, zeros_shaped
from .loops import counted_loops, inductions
from .loop_invariants import LoopInvariants
from ...runtime import pop_record, record_words

_CHEAP = (ir.Const, ir.Global, ir.FreeVar, ir.Var)
_CHEAP_OPS = ("build_tuple", "getattr", "static_getitem", "cast")
_RECOMPUTE_FLOPS = 4  # the largest float + - * tree recomputed rather than saved


class ReversePass:
    """Holds the reverse blocks under construction and the per-block record layouts."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.cfg = ctx.cfg
        self.scope = ctx.blocks[ctx.cfg.entry].scope
        self.blocks = {}
        self.records = {}
        self.sources = {}  # (label, record name) -> ("copy" | "var", forward-pass name)
        self.infos = {}    # id(primal statement) -> its StmtInfo (what its handler returned)
        self._labels = itertools.count(1)
        self.counted = counted_loops(ctx.blocks, self.cfg)
        self.counted_exits = {loop.exit: loop for loop in self.counted.values()}
        for loop in self.counted.values():
            ctx.synthetic_types[loop.counter] = types.intp
        self.inductions = inductions(ctx, self.counted)
        self.decided = {label: loop for loop in self.counted.values() for label in loop.decided}
        for ind in self.inductions.values():
            ctx.synthetic_types[f"{ind.name}%stride"] = types.intp
        self.pushes_id = {p: any(self.pops_id(s) for s in self.cfg.succs[p])
                          for p in ctx.blocks}
        self.pushes_return_id = len(self.cfg.returns) > 1
        self.rev_label = {label: self.new_label() for label in sorted(ctx.blocks)}
        self.invariants = LoopInvariants(ctx, self.cfg)
        self.label = None  # the block being built: its loop's invariants are free to read

    def pops_id(self, label):
        """Whether rev(label) learns its predecessor by popping an id (several
        predecessors, and not decided by a loop's trip count)."""
        return len(self.cfg.preds[label]) > 1 and label not in self.decided

    def new_label(self):
        return next(self._labels)

    def new_block(self, label, loc):
        block = ir.Block(self.scope, loc)
        self.blocks[label] = block
        return Emitter(block, self.scope, loc)

    # -- the whole function ---------------------------------------------------------
    def build(self, arg_names, shadow_names):
        """Every adjoint block, then the entry and exit blocks; returns the block dict."""
        self.exit_label = self.new_label()
        for label in sorted(self.ctx.blocks):
            self.build_block(label)
        self.invariants.hoist(self.records, self.sources)
        self.pop_records()
        self.build_entry(arg_names, shadow_names)
        self.build_exit()
        plain_constant_products(self.blocks)
        return self.blocks

    def build_block(self, label):
        """rev(B): pop record, recompute, adjoint statements backwards, go to predecessor."""
        primal = self.ctx.blocks[label]
        body = ir.Block(self.scope, primal.loc)
        e = Emitter(body, self.scope, primal.loc)
        self.label = label
        if label in self.cfg.returns:
            self.allocate_local_shadows(e)
            self.seed_array_result(e, primal.terminator.value)
        self.marks, self.inserts = {}, []
        for k in reversed(range(len(primal.body) - 1)):
            stmt = primal.body[k]
            self.marks[k] = len(body.body)  # where the adjoint code of statement k starts
            e.loc = stmt.loc
            self.infos[id(stmt)] = emit_reverse(self.ctx, stmt, e)
        e.loc = primal.loc
        saved, remat = self.free_values(body, label)
        for pos, stmt in sorted(self.inserts, key=lambda p: -p[0]):
            body.body.insert(pos, stmt)
        if label in self.counted_exits:
            saved.append(self.counted_exits[label].counter)
        self.records[label] = saved
        head = self.new_block(self.rev_label[label], primal.loc)
        for stmt in remat:  # the record's pop goes before these (``pop_records``)
            head.stmt(stmt)
        head.block.body.extend(body.body)
        self.goto_predecessor(head, label)

    def pop_records(self):
        """Begin each adjoint block with the pop of its block's record, once every
        record is final (``LoopInvariants.hoist`` moves items between records)."""
        for label, saved in self.records.items():
            if not saved:
                continue
            block = self.blocks[self.rev_label[label]]
            pops = ir.Block(self.scope, block.loc)
            e = Emitter(pops, self.scope, block.loc)
            rec_type = types.Tuple([types.unliteral(self.ctx.typeof(n)) for n in saved])
            rec = e.call(pop_record(rec_type), [e.var(TAPE)], hint="rec")
            for k, name in enumerate(saved):
                e.item(rec, k, target=name)
            block.body[:0] = pops.body

    def allocate_local_shadows(self, e):
        """``y%shadow = zeros(y%shape)`` for arrays allocated in the function: the
        reverse pass starts at a return block, which every such allocation dominates."""
        for name in sorted(self.ctx.local_arrays):
            dtype = getattr(np, str(self.ctx.typeof(name).dtype))
            e.call(zeros_shaped, [e.var(shape_of(name)), e.glob(dtype)],
                   target=local_shadow(name))
        start_list_shadows(self.ctx, e)

    def seed_array_result(self, e, ret):
        """A returned array takes its cotangent ``ybar`` into its shadow (the seeds of
        float and tuple results are set in the entry block)."""
        ctx = self.ctx
        if ctx.active_array(ret):
            e.call(add_into, [ctx.shadow_of(ret, e.loc, e), e.var(YBAR)], hint="void")
        elif ctx.active_tuple(ret) and ctx.array_items(ret.name):
            self.seed_array_items(e, ret)
        elif ret.name in ctx.act.carriers and not ctx.active_tuple(ret):
            raise UnsupportedError(f"returning a {ctx.typeof(ret.name)} holding "
                                   "differentiated values", ctx.fn.name, e.loc)

    def seed_array_items(self, e, ret):
        """Each active array item of a returned tuple ``(call, put)`` takes its item of
        ``ybar`` into its shadow (an empty item stands for no cotangent)."""
        ctx = self.ctx
        root = ctx.tuple_root(ret.name)
        made = ctx.definition(root)
        if isinstance(made, ir.Arg):
            raise UnsupportedError(f"returning the tuple argument '{made.name}' itself",
                                   ctx.fn.name, e.loc, "return a tuple of new arrays "
                                   "(copies: (a.copy(), b.copy())), or let the caller keep "
                                   "using its own tuple")
        if not (isinstance(made, ir.Expr) and made.op == "build_tuple"):
            raise UnsupportedError("returning a tuple of arrays that another call made",
                                   ctx.fn.name, e.loc, "unpack it and return "
                                   "'a, b' built in this function")
        for k in ctx.array_items(ret.name):
            if ctx.active_array(made.items[k]):
                cot = e.item(e.var(YBAR), k, hint="ybar")
                e.call(add_cotangent, [ctx.shadow_of(made.items[k], e.loc, e), cot],
                       hint="void")

    def free_values(self, body, label):
        """Primal values the adjoint code reads: saved on the tape, or recomputed."""
        ctx = self.ctx
        wanted = {}  # name -> location of the first reverse statement reading it
        for stmt in body.body:
            for var in stmt.list_vars():
                if var.name in ctx.fn.typemap or var.name in ctx.synthetic_types:
                    wanted.setdefault(var.name, stmt.loc)
        saved, remat, done = [], [], set(ctx.arg_vars.values())

        def need(name, loc):
            if name in done:
                return
            done.add(name)
            induction = self.inductions.get(name)
            if induction is not None and label in induction.loop.body:
                for op in induction.inputs():
                    need(op, loc)
                remat.extend(induction.statements(self.scope, loc))
                return
            recipe = self.recipe(name, loc)
            if recipe is not None:
                for op in operands(recipe):
                    need(op.name, loc)
                remat.append(ir.Assign(clone_value(recipe), ir.Var(self.scope, name, loc), loc))
                return
            typ = types.unliteral(ctx.typeof(name))
            if record_words(typ) is None:  # scalars and tuples of scalars can be saved
                raise UnsupportedError(
                    f"keeping {ctx.user_name(name)} (of type {typ}) for the reverse pass: "
                    "it is neither a number nor an array adjit can save or compute again. "
                    "Write the step as a loop over the indices", ctx.fn.name, loc)
            saved.append(name)

        for name, loc in wanted.items():
            if (name not in saved and isinstance(ctx.typeof(name), types.Array)
                    and not ctx.readable(name, False)):  # arguments too: a call wrote it
                done.add(name)
                saved.extend(self.save_array(name, label, loc))
                continue
            need(name, loc)
        return saved, remat

    def save_array(self, name, label, loc):
        """How the record of ``label`` keeps array ``name``, which the reverse pass cannot
        read in place; returns the record's names for it. By reference when nothing ever
        writes into it; else a copy taken at the end of the block, or, when the block
        writes it after reading it, one snapshot per run of reads, each taken just before
        the write that ends the run (``self.sources`` says what the forward pass pushes)."""
        ctx = self.ctx
        if name in ctx.saved_by_reference or ctx.never_written(name):
            return [name]
        body = ctx.blocks[label].body
        reads = [k for k, stmt in enumerate(body) if reads_array_values(ctx, stmt, name)]
        # the result of one of the block's own statements is read by that statement's
        # rule too (``y = np.cumprod(x)``, ``D = np.hstack((a, b))`` read their result):
        # kept as the statement made it, before any write (``y[1] = 2.0 * y[0]``)
        made = [k for k, stmt in enumerate(body)
                if isinstance(stmt, ir.Assign) and stmt.target.name == name][-1:]
        reads = sorted(set(reads) | set(made)) or [len(body) - 1]
        writes = [k for k, stmt in enumerate(body)
                  if reads and k > reads[0] and ctx.may_write(stmt, name)]
        runs = []  # [(last read of the run, first write after it or None)]
        for k in reads:
            after = next((w for w in writes if w > k), None)
            if runs and runs[-1][1] == after:
                runs[-1] = (k, after)
            else:
                runs.append((k, after))
        names = []
        for j, (last, write) in enumerate(runs):
            rec = name if len(runs) == 1 else f"{name}%run{j}"
            if write is None:
                self.sources[label, rec] = ("copy", name)
            else:
                snap = ctx.copy_before(self.info(body[write]).before,
                                       ir.Var(self.scope, name, loc), "snapshot")
                self.sources[label, rec] = ("var", snap)
            if rec != name:  # the reads of this run see this run's snapshot
                ctx.synthetic_types[rec] = copy_type(ctx.typeof(name))
                self.inserts.append((self.marks[last], ir.Assign(
                    ir.Var(self.scope, rec, loc), ir.Var(self.scope, name, loc), loc)))
            names.append(rec)
        return names

    def info(self, stmt):
        """The ``StmtInfo`` of a primal statement of a built block, made editable: the
        block's record may ask the forward sweep for a snapshot before any statement."""
        info = self.infos.get(id(stmt), NOTHING)
        if info is NOTHING:
            info = self.infos[id(stmt)] = StmtInfo()
        return info

    def recipe(self, name, loc):
        """The expression that recomputes ``name`` in a reverse block from arguments and
        scalars it can pop, or None when ``name`` itself must be saved (so an item of a
        tuple is saved rather than the tuple). A row of a 2-D iteration is ``X[counter]``."""
        ctx = self.ctx
        value = ctx.definition(name)
        if (isinstance(value, ir.Expr) and value.op == "pair_first"
                and isinstance(ctx.typeof(name), types.Array)):
            view = ctx.view_of(name, loc)
            value = ir.Expr.getitem(view[0], view[1], loc) if view is not None else None
        elif not self.recomputable(value):
            return None
        if value is None or ctx.draws_random(value):  # called again: other numbers
            return None
        # element reads are recomputed at the head of the block: only from arrays no
        # element write can have changed by then
        reads_data = (getattr(value, "op", None) in ("getitem", "static_getitem")
                      and not isinstance(ctx.typeof(name), types.Array)
                      ) or ctx.fresh_op(value) is not None
        for op in operands(value):
            typ = types.unliteral(ctx.typeof(op.name))
            if isinstance(typ, types.Array):
                ok = ctx.readable(op.name, reads_data)
            else:
                ok = (op.name in ctx.arg_vars.values() or is_scalar(typ)
                      or self.recipe(op.name, loc) is not None)
            if not ok:
                return None
        return value

    def recomputable(self, value):
        """Whether a value is cheaper to recompute than to save: constants, globals, copies,
        tuples, attributes, slices, and views of arrays (whose readability ``recipe``
        checks)."""
        ctx = self.ctx
        if isinstance(value, _CHEAP):
            return True
        if not isinstance(value, ir.Expr):
            return False
        if ctx.fresh_op(value) is not None:  # an array: recomputed, never saved
            return True
        if value.op in ("static_getitem", "getattr"):
            # items and attributes of tuples, numbers and (checked) arrays; other
            # containers (typed lists, dicts, jitclasses) may have changed since
            base = types.unliteral(ctx.typeof(value.value.name))
            return isinstance(base, (types.BaseTuple, types.Array, types.Number))
        if value.op in _CHEAP_OPS:
            return True
        if value.op == "call":
            return ctx.callee_object(value.func) is slice
        if value.op in ("getitem", "static_getitem"):
            sig = ctx.fn.calltypes.get(value)
            if sig is not None and isinstance(sig.return_type, types.Array):
                return is_basic_index(sig.args[1])
            return self.unwritten_array(value.value)
        if value.op == "binop":
            return self.cheap_arithmetic(value)
        return False

    def cheap_arithmetic(self, value):
        """Integer arithmetic (``i + 1``), and small ``+ - *`` trees (at most
        ``_RECOMPUTE_FLOPS`` operations) over values that are free to get (arguments,
        constants, reads of unwritten arrays, integers, numbers invariant in the block's
        loop, saved once for it: ``LoopInvariants``): recomputing costs a few flops,
        saving costs a tape write and a read (and, under ``jvp``, a tangent of each)."""
        ctx = self.ctx
        typ = types.unliteral(ctx.typeof_value(value))
        if isinstance(typ, types.Integer):
            return all(isinstance(types.unliteral(ctx.typeof(v.name)), types.Integer)
                       for v in operands(value))
        flops = self.tree_flops(value, _RECOMPUTE_FLOPS)
        return flops is not None and flops <= _RECOMPUTE_FLOPS

    def tree_flops(self, value, budget):
        """Flops to recompute the float ``+ - *`` tree ``value`` from free leaves, or None
        when a leaf is not free or the tree costs more than ``budget``."""
        ctx = self.ctx
        if budget < 1 or value.fn not in (operator.add, operator.sub, operator.mul):
            return None  # (checked before recursing: a long chain stops at the budget)
        flops = 1
        for v in operands(value):
            vt = types.unliteral(ctx.typeof(v.name))
            if (v.name in ctx.arg_vars.values() or isinstance(vt, types.Integer)
                    or self.invariants.free_in(self.label, v.name)):
                continue
            inner = ctx.definition(v.name)
            while isinstance(inner, ir.Var):  # a copy costs what its source costs
                inner = ctx.definition(inner.name)
            if isinstance(inner, (ir.Const, ir.Global, ir.FreeVar)):
                continue
            if (isinstance(inner, ir.Expr) and inner.op in ("getitem", "static_getitem")
                    and self.unwritten_array(inner.value) and not isinstance(vt, types.Array)):
                continue
            if not (isinstance(inner, ir.Expr) and inner.op == "binop" and is_float(vt)):
                return None
            sub = self.tree_flops(inner, budget - flops)
            if sub is None:
                return None
            flops += sub
            if flops > budget:
                return None
        return flops

    def unwritten_array(self, var):
        """An array the reverse pass may read again and get what the forward pass read
        (an argument never modified, see ``Shadows.readable``)."""
        return self.ctx.readable(var.name, remat=False)  # an element: not a whole array

    def goto_predecessor(self, e, label):
        """End rev(B): jump to the edge block of the predecessor that was actually taken."""
        preds = self.cfg.preds[label]
        if label == self.cfg.entry:
            e.jump(self.exit_label)
            return
        if label in self.decided:
            self.count_down(e, self.decided[label], label)
            return
        pops = any(self.pushes_id[p] for p in preds)
        if len(preds) == 1:
            if pops:
                e.call(pop_record(types.int64), [e.var(TAPE)], hint="discard")
            e.jump(self.edge(preds[0], label))
            return
        taken = e.call(pop_record(types.int64), [e.var(TAPE)], hint="came_from")
        self.switch(e, taken, [(p, self.edge(p, label)) for p in preds])

    def count_down(self, e, loop, label):
        """rev(header), or rev(exit) of a bottom-tested loop: back to the latch (one
        iteration fewer to go) while trips remain, else to the preheader."""
        trips = e.var(loop.counter)
        if loop.preheader in self.cfg.preds[label]:
            more = e.binop(operator.gt, trips, e.const(0, hint="none_left"), hint="more")
            again = self.new_label()
            e.branch(more, again, self.edge(loop.preheader, label))
            e = self.new_block(again, e.loc)
        # else the exit of a loop always entered (``do ... while``): trips >= 1 here
        e.binop(operator.sub, trips, e.const(1), target=loop.counter)
        e.jump(self.edge(loop.latch, label))

    def switch(self, e, value, cases):
        """A chain of ``if value == key`` tests over (key, target label) pairs."""
        for key, target in cases[:-1]:
            test = e.binop(operator.eq, value, e.const(key, hint="id"), hint="is")
            nxt = self.new_label()
            e.branch(test, target, nxt)
            e = self.new_block(nxt, e.loc)
        e.jump(cases[-1][1])

    def edge(self, pred, label):
        """Label of the block taking the edge pred -> label backwards (phi adjoints)."""
        ctx = self.ctx
        phis = [s for s in ctx.blocks[label].body
                if isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr)
                and s.value.op == "phi" and ctx.slots(s.target.name)]
        array_phis = [s for s in ctx.blocks[label].body
                      if isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr)
                      and s.value.op == "phi" and s.target.name in ctx.lazy_arrays]
        if not phis and not array_phis:
            return self.rev_label[pred]
        lab = self.new_label()
        e = self.new_block(lab, ctx.blocks[label].loc)
        self.array_phi_edge(e, array_phis, pred)
        temps = []
        for s in phis:  # phis are parallel: read them all before any update
            e.loc = s.loc
            temps.append([e.assign(e.var(slot), hint="phibar")
                          for slot, _ in ctx.slots(s.target.name)])
            ctx.reset(e, s.target.name)
        for s, ts in zip(phis, temps):
            for value, block in zip(s.value.incoming_values, s.value.incoming_blocks):
                if block == pred and isinstance(value, ir.Var):
                    if ctx.active_tuple(s.target):
                        for k, t in zip(ctx.float_items(s.target.name), ts):
                            ctx.accumulate(e, value, t, item=k)
                    else:
                        ctx.accumulate(e, value, ts[0])
        e.jump(self.rev_label[pred])
        return lab

    def array_phi_edge(self, e, phis, pred):
        """Along ``pred -> label`` backwards: each array phi's shadow is added into the
        shadow of the array that came in from ``pred``, and starts afresh. Phis are
        parallel: when arrays are exchanged between loop variables (``a, b = b, a``),
        every phi's shadow is taken out (a copy) and cleared before any is added."""
        ctx = self.ctx
        names = {s.target.name for s in phis}
        moves = [(s, value) for s in phis
                 for value, block in zip(s.value.incoming_values, s.value.incoming_blocks)
                 if block == pred and isinstance(value, ir.Var) and ctx.active_array(value)]
        exchanged = any(ctx.array_root(v.name) in names for _, v in moves)
        sources = {}
        for s in phis:
            name = s.target.name
            shadow, fresh = e.var(local_shadow(name)), e.var(fresh_flag(name))
            if exchanged:
                pair = e.call(snapshot_shadow, [shadow, fresh], hint="taken")
                shadow, fresh = e.item(pair, 0, hint="taken"), e.item(pair, 1, hint="stale")
                e.assign(ir.Const(True, s.loc), target=fresh_flag(name))
            sources[name] = (shadow, fresh)
        for s, value in moves:
            e.loc = s.loc
            phi_shadow, phi_fresh = sources[s.target.name]
            # (a helper's result that is its argument, ``unew = step(u, unew)``, is that
            # argument's memory)
            root = ctx.returned_root(value.name)
            if root in ctx.lazy_arrays:  # its shadow may be stale: no shape needed
                pair = e.call(phi_transfer, [e.var(local_shadow(root)),
                                             e.var(fresh_flag(root)), phi_shadow,
                                             phi_fresh], hint="transfer")
                e.item(pair, 0, target=local_shadow(root))
                e.item(pair, 1, target=fresh_flag(root))
            else:
                if ctx.view_parent(value.name) is not None:
                    raise UnsupportedError(
                        f"merging views of an array ({ctx.user_name(s.target.name)}) that "
                        "come from different branches", ctx.fn.user_name, s.loc,
                        "index the array itself in each branch instead")
                shadow = ctx.shadow_of(value, s.loc, e)
                e.call(phi_transfer, [shadow, e.const(False, hint="no"), phi_shadow,
                                      phi_fresh], hint="void")
        if not exchanged:
            for s in phis:
                e.assign(ir.Const(True, s.loc), target=fresh_flag(s.target.name))

    # -- entry and exit ---------------------------------------------------------------
    def build_entry(self, arg_names, shadow_names):
        """Bind arguments, zero the adjoints, seed the taken return block with ybar."""
        ctx = self.ctx
        e = self.new_block(0, ctx.blocks[self.cfg.entry].loc)
        e.assign(ir.Arg(TAPE, 0, e.loc), target=TAPE)
        for i, name in enumerate(arg_names):
            e.assign(ir.Arg(name, i + 1, e.loc), target=ctx.arg_vars.get(i, name))
            if i in ctx.arg_vars and isinstance(ctx.fn.argtypes[i], types.Array):
                memory = argument_memory(ctx.arg_vars[i])
                ctx.synthetic_types[memory] = ctx.fn.argtypes[i]
                e.assign(e.var(ctx.arg_vars[i]), target=memory)
        for j, name in enumerate(shadow_names):
            e.assign(ir.Arg(name, len(arg_names) + 1 + j, e.loc), target=name)
        e.assign(ir.Arg(YBAR, len(arg_names) + 1 + len(shadow_names), e.loc), target=YBAR)
        for name in sorted(ctx.act.active | ctx.act.carriers):
            ctx.reset(e, name)
        for name in sorted(ctx.lazy_arrays):  # an empty shadow, replaced at its first use
            typ = ctx.typeof(name)
            empty_array(e, typ, target=local_shadow(name))
            e.assign(ir.Const(True, e.loc), target=fresh_flag(name))
        starts = []
        for label in self.cfg.returns:
            start = self.new_label()
            s = self.new_block(start, ctx.blocks[label].loc)
            ret_var = ctx.blocks[label].terminator.value
            if ctx.active_float(ret_var):
                s.assign(s.var(YBAR), target=bar(ret_var.name))
            elif ctx.active_tuple(ret_var):  # ybar has one item per item of the result
                for k in ctx.float_items(ret_var.name):
                    s.item(s.var(YBAR), k, target=bar_item(ret_var.name, k))
            s.jump(self.rev_label[label])
            starts.append((label, start))
        if not starts:
            raise UnsupportedError("a function that never returns", ctx.fn.name, e.loc)
        if self.pushes_return_id:
            taken = e.call(pop_record(types.int64), [e.var(TAPE)], hint="returned_from")
            self.switch(e, taken, starts)
        else:
            e.jump(starts[0][1])

    def build_exit(self):
        """Return one cotangent per argument: adjoint, shadow array, or 0."""
        ctx = self.ctx
        e = self.new_block(self.exit_label, ctx.blocks[self.cfg.entry].loc)
        items = []
        for i, argtype in enumerate(ctx.fn.argtypes):
            name = ctx.arg_vars.get(i)
            if i in ctx.active_args and is_float(argtype):
                value = e.var(bar(name)) if name in ctx.act.active else e.const(0.0)
                items.append(e.call(np.float32 if argtype == types.float32 else np.float64,
                                    [value], hint="cot"))
            elif i in ctx.active_args and is_float_array(argtype):
                items.append(e.var(shadow_arg(ctx.fn.arg_names[i])))
            elif i in ctx.active_args and isinstance(argtype, types.BaseTuple):
                items.append(self.tuple_cotangent(e, name, argtype))
            else:
                items.append(e.const(0, hint="zero"))
        e.ret(e.tuple(items))

    def tuple_cotangent(self, e, name, typ):
        """The cotangent of a tuple argument: a tuple of item cotangents (0 for ints)."""
        ctx = self.ctx
        if not ctx.active_tuple(name) and name in ctx.act.carriers:
            raise UnsupportedError(f"a tuple argument of type {typ}", ctx.fn.name, e.loc,
                                   "only flat tuples of scalars get cotangents")
        items = []
        for k, t in enumerate(typ.types):
            if is_float(t) and name in ctx.act.carriers:
                items.append(e.var(bar_item(name, k)))
            elif is_float(t):
                items.append(e.const(zero_of(t), hint="zero"))
            else:
                items.append(e.const(0, hint="zero"))
        return e.tuple(items, hint="cot")


def reads_array_values(ctx, stmt, name):
    """Whether the adjoint of ``stmt`` may read the values of array ``name``: any use but
    its definition, a write into it, an element read (saved as a scalar), an alias or an
    attribute."""
    if name not in {v.name for v in stmt.list_vars()}:
        return False
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        return stmt.value.name == name
    if not isinstance(stmt, ir.Assign) or stmt.target.name == name:
        return False
    value = stmt.value
    if isinstance(value, ir.Var) or (isinstance(value, ir.Expr) and value.op in (
            "getattr", "cast")):
        return False  # an alias is saved under its own name; attributes are not data
    if isinstance(value, ir.Expr) and value.op in ("getitem", "static_getitem"):
        return isinstance(ctx.typeof(stmt.target.name), types.Array)
    return True

