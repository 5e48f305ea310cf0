"""Random numba-compatible test programs: statements, helpers, whole modules and inputs.

A program is a module's source text (``import math, numba, numpy``, a few ``@numba.njit``
helpers, and the function ``f`` to differentiate) plus one point to evaluate it at. The
same ``(seed, index, kind)`` always gives the same program, so a finding is reproduced by
``python -m adjit.fuzz --seed S --only INDEX``.
"""
import re
from dataclasses import dataclass, field

import numpy as np

from .exprs import ExprGen, _pick

HEADER = "import math\n\nimport numba\nimport numpy as np\n"


@dataclass
class Helper:
    """A generated ``@njit`` helper: name, parameters, defaults, what it returns."""
    name: str
    params: list                 # [(name, "f" | "i" | "a" | "idx")]
    defaults: list = field(default_factory=list)   # [(name, default literal)]
    returns: str = "float"       # "float" | "tuple" | "array" | "none"
    arrays: bool = False         # takes array arguments (called from statements only)
    role: str = ""               # array helpers: "read" | "reduce" | "map" | "fill"


@dataclass
class Program:
    """One generated test program and its evaluation point."""
    seed: int
    index: int
    kind: str
    source: str
    arg_names: list
    args: tuple
    writes_args: bool = False

    def float_slots(self):
        """Indices of the float and float-array arguments (the differentiated ones)."""
        return [k for k, a in enumerate(self.args)
                if isinstance(a, float) or isinstance(a, np.ndarray)]

    def args_source(self):
        """The arguments as Python source, exact (``repr`` of floats round-trips)."""
        parts = []
        for name, a in zip(self.arg_names, self.args):
            if isinstance(a, np.ndarray):
                parts.append(f"{name}=np.array({a.tolist()!r})")
            else:
                parts.append(f"{name}={a!r}")
        return ", ".join(parts)


def _indent(lines, n=1):
    """Lines shifted right by ``n`` levels."""
    return ["    " * n + ln for ln in lines]


class ProgramGen:
    """Builds one program's statements from a random.Random (all choices go through it)."""

    def __init__(self, rng, kind):
        """Start with no names used; ``kind`` is "scalar" or "array"."""
        self.rng = rng
        self.kind = kind
        self.ex = ExprGen(rng)
        self.count = 0
        self.writes_args = False
        self.param_arrays = set()
        self.ret_kind = "float"      # what a return in the function being built returns

    def fresh(self, prefix):
        """A new, unique local name (counted as not read yet)."""
        self.count += 1
        name = f"{prefix}{self.count}"
        if prefix not in ("i", "k", "w"):
            self.ex.unused.add(name)
        return name

    def sink_terms(self, scope, limit=4):
        """Terms reading the floats, tuples and local arrays of ``scope`` nobody read yet,
        so that little of the program is dead code."""
        unused, terms = self.ex.unused, []
        for v in scope.floats:
            if v in unused and len(terms) < limit:
                terms.append(v)
                unused.discard(v)
        for t in scope.tuples:
            if t in unused and len(terms) < limit:
                terms.append(f"{t}[{self.rng.randint(0, 1)}]")
                unused.discard(t)
        for a in scope.arrays:
            if a in unused and len(terms) < limit + 1:
                terms.append(f"0.1 * np.sum({a})")
                unused.discard(a)
        return terms

    def flush(self, scope):
        """At the end of a nested block: fold its unread locals into an enclosing float."""
        if not scope.parent_floats:
            return []
        terms = self.sink_terms(scope, limit=2)
        if not terms:
            return []
        target = self.rng.choice(scope.parent_floats)
        self.ex.unused.add(target)
        total = " + ".join(terms)
        if scope.loop_depth:
            return [f"{target} = 0.8 * {target} + 0.2 * math.tanh({total})"]
        return [f"{target} = {target} + 0.5 * ({total})"]

    # ------------------------------------------------------------ blocks

    def block(self, scope, budget, in_helper=False):
        """Statements using about ``budget`` statements (at least one)."""
        lines = []
        while budget > 0:
            stmt, cost = self.stmt(scope, budget, in_helper)
            lines += stmt
            budget -= max(1, cost)
        return lines + self.flush(scope)

    def stmt(self, scope, budget, in_helper):
        """One statement (possibly compound) and its cost in statements."""
        r = self.rng
        opts = [("assign", 5), ("update", 4 if scope.floats else 0), ("tuple", 1.2)]
        compound = scope.depth < 3 and budget >= 3
        if compound:
            opts += [("if", 3)]
            if scope.loop_depth < 2:
                opts += [("for", 3), ("while", 1)]
        if any(h.returns == "float" and not h.arrays for h in scope.helpers):
            opts.append(("call", 1.5))
        if any(h.returns == "tuple" for h in scope.helpers):
            opts.append(("tcall", 1.2))
        if scope.loop_depth:
            opts.append(("brk", 1.2))
        if scope.depth > 0:
            opts.append(("ret", 0.5))
        if scope.arrays:
            opts += [("newarr", 1.5 if compound else 0.5), ("aassign", 1.5), ("reduce", 2)]
            if scope.writable:
                opts += [("write", 2), ("aupdate", 1.2), ("slicewrite", 0.5)]
            if any(h.arrays for h in scope.helpers):
                opts.append(("acall", 2))
        kind = _pick(r, opts)
        return getattr(self, "s_" + kind)(scope, budget, in_helper)

    # ------------------------------------------------------------ scalar statements

    def s_assign(self, scope, budget, in_helper):
        """``v = expr`` with a new name."""
        v = self.fresh("v")
        line = f"{v} = {self.ex.fexpr(scope, self.rng.randint(1, 3))}"
        scope.floats.append(v)
        return [line], 1

    def s_update(self, scope, budget, in_helper):
        """Reassign or update an existing float, bounded inside loops."""
        r, ex = self.rng, self.ex
        v = r.choice(scope.floats)
        e = ex.fexpr(scope, r.randint(1, 2))
        ex.unused.add(v)                  # a new value nobody read yet
        if scope.loop_depth:
            b = ex.bounded(scope, 1)
            forms = [f"{v} = 0.7 * {v} + 0.3 * {b}", f"{v} += 0.2 * {b}",
                     f"{v} *= 0.9 + 0.1 * math.tanh({e})", f"{v} -= 0.15 * {b}",
                     f"{v} = {v} + 0.1 * {b} * {v}"]
        else:
            forms = [f"{v} = {e}", f"{v} += {e}", f"{v} -= {e}",
                     f"{v} *= {ex.bounded(scope, 1)}", f"{v} /= (1.0 + {e} * {e})",
                     f"{v} = {v} * {e}"]
        return [r.choice(forms)], 1

    def s_tuple(self, scope, budget, in_helper):
        """Build and unpack tuples of floats."""
        r, ex = self.rng, self.ex
        u = r.random()
        if u < 0.35:
            t = self.fresh("t")
            line = f"{t} = ({ex.fexpr(scope, 2)}, {ex.fexpr(scope, 2)})"
            scope.tuples.append(t)
            return [line], 1
        p, q = self.fresh("p"), self.fresh("q")
        if scope.tuples and u < 0.6:
            line = f"{p}, {q} = {r.choice(scope.tuples)}"
        elif len(scope.floats) >= 2 and u < 0.7:
            a, b = r.sample(scope.floats, 2)
            line = f"{p}, {q} = {b}, {a}"
        else:
            line = f"{p}, {q} = {ex.fexpr(scope, 2)}, {ex.fexpr(scope, 1)}"
        scope.floats += [p, q]
        return [line], 1

    def s_call(self, scope, budget, in_helper):
        """``v = helper(...)``, keyword arguments sometimes."""
        v = self.fresh("c")
        line = f"{v} = {self.ex.call(scope, self.rng.randint(1, 2))}"
        scope.floats.append(v)
        return [line], 1

    def s_tcall(self, scope, budget, in_helper):
        """A call of a tuple-returning helper, unpacked or kept as a tuple."""
        call = self.ex.call(scope, 1, want="tuple")
        if self.rng.random() < 0.6:
            p, q = self.fresh("p"), self.fresh("q")
            scope.floats += [p, q]
            return [f"{p}, {q} = {call}"], 1
        t = self.fresh("r")                 # "r": returned by a call (no f(*r): see exprs)
        scope.tuples.append(t)
        return [f"{t} = {call}"], 1

    def s_brk(self, scope, budget, in_helper):
        """``if cond: break`` or ``continue`` inside a loop (never continue in a while)."""
        word = "break" if scope.loop_kind == "while" or self.rng.random() < 0.5 else "continue"
        return [f"if {self.ex.cond(scope, 1)}:", f"    {word}"], 1

    def s_ret(self, scope, budget, in_helper):
        """An early return under a condition."""
        value = self.ex.fexpr(scope, 2)
        if self.ret_kind == "tuple":
            value += f", {self.ex.fexpr(scope, 1)}"
        return [f"if {self.ex.cond(scope, 1)}:", f"    return {value}"], 1

    def s_if(self, scope, budget, in_helper):
        """if / elif / else with nested blocks."""
        r = self.rng
        inner = max(1, min(budget - 1, r.randint(1, 4)))
        lines = [f"if {self.ex.cond(scope, 1)}:"]
        lines += _indent(self.block(scope.child(), inner, in_helper))
        cost = 1 + inner
        if r.random() < 0.2:
            lines.append(f"elif {self.ex.cond(scope, 0)}:")
            lines += _indent(self.block(scope.child(), 1, in_helper))
            cost += 1
        if r.random() < 0.6:
            k = max(1, min(budget - cost, r.randint(1, 3)))
            lines.append("else:")
            lines += _indent(self.block(scope.child(), k, in_helper))
            cost += k
        return lines, cost

    def s_for(self, scope, budget, in_helper):
        """A for loop over a range (value-dependent through int arguments) or an array."""
        r, body = self.rng, scope.child()
        body.loop_depth += 1
        body.loop_kind = "for"
        i = self.fresh("i")
        ex_f = lambda sc: self.ex.fexpr(sc, 1)      # noqa: E731
        ints = [n for n in scope.ints if not n.startswith("k")]
        cap = 5 if scope.loop_depth == 0 else 3
        opts = [f"range({r.randint(2, cap)})", f"range({r.randint(3, cap + 1)}, 0, -1)",
                f"range(0, {r.randint(3, cap + 2)}, 2)"]
        if ints:
            n = r.choice(ints)
            opts += [f"range({n})", f"range(1, {n} + 1)", f"range({n})", f"range(min({n}, 3))"]
        if scope.floats and r.random() < 0.15:      # trip count from a float value
            opts = [f"range(int(1.0 + 2.0 * abs(math.sin({ex_f(scope)}))))"]
        header = f"for {i} in {r.choice(opts)}:"
        body.ints.append(i)
        if scope.arrays and r.random() < 0.5:
            L, a = scope.length, r.choice(scope.arrays)
            u = r.random()
            if u < 0.4:
                header = f"for {i} in range({r.choice([L, f'len({a})', f'{a}.shape[0]'])}):"
                body.indices.append(i)
            elif u < 0.55:
                header = f"for {i} in range(1, {L}):"
                body.indices += [i, f"{i} - 1"]
            elif u < 0.7:
                e = self.fresh("e")
                header = f"for {i}, {e} in enumerate({a}):"
                body.indices.append(i)
                body.floats.append(e)
            elif u < 0.85:
                e = self.fresh("e")
                header = f"for {e} in {a}:"
                body.ints.remove(i)
                body.floats.append(e)
            else:
                e, g = self.fresh("e"), self.fresh("g")
                header = f"for {e}, {g} in zip({a}, {r.choice(scope.arrays)}):"
                body.ints.remove(i)
                body.floats += [e, g]
        inner = max(1, min(budget - 1, r.randint(1, 5)))
        return [header] + _indent(self.block(body, inner, in_helper)), 1 + inner

    def s_while(self, scope, budget, in_helper):
        """A while loop whose trip count depends on the values (with an iteration cap)."""
        r, ex = self.rng, self.ex
        k, w = self.fresh("k"), self.fresh("w")
        lines = [f"{k} = 0", f"{w} = {ex.bounded(scope, 2)}"]
        scope.floats.append(w)
        body = scope.child()
        body.loop_depth += 1
        body.loop_kind = "while"
        body.ints.append(k)
        cap, lim = r.randint(3, 8), r.choice(["1.5", "2.0", "2.5", "3.0"])
        step = f"{w} = {w} + 0.3 + 0.2 * math.sin({ex.fexpr(body, 1)})"
        inner = max(1, min(budget - 2, r.randint(1, 4)))
        stmts = self.block(body, inner, in_helper)
        if r.random() < 0.7:
            lines.append(f"while {w} < {lim} and {k} < {cap}:")
            lines += _indent(stmts + [step, f"{k} += 1"])
        else:
            lines.append("while True:")
            lines += _indent([f"if {w} >= {lim} or {k} >= {cap}:", "    break"]
                             + stmts + [step, f"{k} += 1"])
        scope.ints.append(k)
        return lines, 2 + inner

    # ------------------------------------------------------------ array statements

    def s_newarr(self, scope, budget, in_helper):
        """A local array (np.zeros, np.empty_like, copy...), usually filled by a loop."""
        r, ex = self.rng, self.ex
        t, a, L = self.fresh("arr"), r.choice(scope.arrays), scope.length
        empty = r.random() < 0.4
        if empty:
            alloc = r.choice([f"np.empty_like({a})", f"np.empty({L})"])
        else:
            alloc = r.choice([f"np.zeros({L})", f"np.zeros_like({a})", f"np.ones({L})",
                              f"{a}.copy()", f"np.copy({a})"])
        lines = [f"{t} = {alloc}"]
        if empty and r.random() < 0.3:
            lines.append(f"{t}.fill({ex.fexpr(scope, 1)})")
            empty = False
        if empty or r.random() < 0.6:
            i = self.fresh("i")
            body = scope.child()
            body.loop_depth += 1
            body.loop_kind = "for"
            body.indices.append(i)
            body.ints.append(i)
            lines += [f"for {i} in range({L}):", f"    {t}[{i}] = {ex.fexpr(body, 2)}"]
        scope.arrays.append(t)
        scope.writable.append(t)
        return lines, 2

    def s_aassign(self, scope, budget, in_helper):
        """``c = <whole-array expression>``."""
        c = self.fresh("arr")
        e = self.ex.aexpr(scope, self.rng.randint(1, 3))
        if re.fullmatch(r"\w+(\[.*\])?", e):     # a bare name or view: make a new array
            e = f"np.sin({e})"
        scope.arrays.append(c)
        return [f"{c} = {e}"], 1

    def s_aupdate(self, scope, budget, in_helper):
        """Update a local array: loop-carried reassignment or an in-place operator."""
        r, ex = self.rng, self.ex
        c = r.choice(scope.writable)
        e = ex.aexpr(scope, 1)
        forms = [f"{c} = 0.8 * {c} + 0.2 * np.tanh({e})", f"{c} += 0.1 * np.sin({e})",
                 f"{c} *= 0.9", f"{c}[:] = 0.5 * ({c} + np.tanh({e}))",
                 f"{c} -= 0.1 * np.tanh({e})"]
        if c in self.param_arrays:
            self.writes_args = True
            forms = forms[1:]       # rebinding a parameter would hide the write
        return [r.choice(forms)], 1

    def s_write(self, scope, budget, in_helper):
        """An element write ``t[i] = expr`` (or ``+=``) into a writable array."""
        r, ex = self.rng, self.ex
        t = r.choice(scope.writable)
        if t in self.param_arrays:
            self.writes_args = True
        idx = ex.index(scope)
        if scope.loop_depth:
            rhs = f"0.5 * {t}[{idx}] + 0.5 * {ex.bounded(scope, 2)}" if r.random() < 0.5 \
                else ex.fexpr(scope, 2)
            return [f"{t}[{idx}] = {rhs}"], 1
        if r.random() < 0.3:
            return [f"{t}[{idx}] += {ex.fexpr(scope, 2)}"], 1
        return [f"{t}[{idx}] = {ex.fexpr(scope, 2)}"], 1

    def s_slicewrite(self, scope, budget, in_helper):
        """A slice write: ``t[1:] = a[:-1] * s`` or ``t[:] = <array expression>``."""
        r, ex = self.rng, self.ex
        t = r.choice(scope.writable)
        if t in self.param_arrays:
            self.writes_args = True
        if r.random() < 0.5:
            return [f"{t}[1:] = {r.choice(scope.arrays)}[:-1] * {ex.fexpr(scope, 1)}"], 1
        return [f"{t}[:] = {ex.aexpr(scope, 2)}"], 1

    def s_reduce(self, scope, budget, in_helper):
        """``v = np.sum(...)`` / ``np.dot`` / ``np.max`` ... of array expressions."""
        v = self.fresh("v")
        line = f"{v} = {self.ex.reduction(scope, self.rng.randint(0, 2))}"
        scope.floats.append(v)
        return [line], 1

    def s_acall(self, scope, budget, in_helper):
        """A call of an array helper: read an element, reduce, or fill an output array."""
        r, ex = self.rng, self.ex
        hs = [h for h in scope.helpers if h.arrays]
        if not scope.writable:
            hs = [h for h in hs if h.role != "fill"] or None
            if hs is None:
                return self.s_assign(scope, budget, in_helper)
        h = r.choice(hs)
        a = r.choice(scope.arrays)
        s = ex.fexpr(scope, 1)
        if h.role == "fill":
            t = r.choice(scope.writable)
            if t in self.param_arrays:
                self.writes_args = True
            kw = "u=" if r.random() < 0.3 else ""
            return [f"{h.name}({t}, {a}, {kw}{s})"], 1
        v = self.fresh("v")
        scope.floats.append(v)
        if h.role == "read":
            return [f"{v} = {h.name}({a}, {ex.index(scope)}, {s})"], 1
        if h.role == "map":
            return [f"{v} = np.sum({h.name}({a}, {s}))"], 1
        return [f"{v} = {h.name}({a}, {s})"], 1
