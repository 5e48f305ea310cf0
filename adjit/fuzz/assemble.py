"""Whole test programs: helpers, the function ``f``, its return, and the evaluation point."""
import random
import re

import numpy as np

from .exprs import Scope
from .programs import HEADER, Helper, Program, ProgramGen, _indent

KINDS = ("scalar", "array")


def program_rng(seed, index, kind, purpose="program"):
    """The deterministic random.Random of one program (string seeds hash the same everywhere)."""
    return random.Random(f"adjit-fuzz:{seed}:{index}:{kind}:{purpose}")


def kind_of(index, kind):
    """The kind of program ``index`` under ``--kind`` (``all`` alternates scalar, array)."""
    return KINDS[index % 2] if kind == "all" else kind


def _scalar_helper(pg, name, helpers, returns):
    """A scalar ``@njit`` helper (float or tuple result), maybe with an int parameter
    and a keyword parameter with a default."""
    r, ex = pg.rng, pg.ex
    takes_tuple = r.random() < 0.2
    params = [("pair", "t") if takes_tuple else ("u", "f"), ("v", "f")]
    if r.random() < 0.3:
        params.append(("cnt", "i"))
    defaults = [("s", r.choice(["0.5", "1.5", "2.0"]))] if r.random() < 0.4 else []
    scope = Scope()
    scope.floats = ([] if takes_tuple else ["u"]) + ["v"] + [d for d, _ in defaults]
    scope.tuples = ["pair"] if takes_tuple else []
    scope.ints = ["cnt"] if len(params) == 3 else []
    scope.helpers = list(helpers)
    pg.ret_kind = returns
    body = pg.block(scope, r.randint(1, 3), in_helper=True)
    extra = "".join(f" + 0.5 * {t}" for t in pg.sink_terms(scope, limit=2))
    if returns == "tuple":
        ret = f"return {ex.fexpr(scope, 2)}{extra}, {ex.fexpr(scope, 2)}"
    else:
        ret = f"return {ex.fexpr(scope, 2)}{extra}"
    sig = ", ".join([p for p, _ in params] + [f"{d}={v}" for d, v in defaults])
    lines = ["@numba.njit", f"def {name}({sig}):"] + _indent(body + [ret])
    return Helper(name, params, defaults, returns), lines


def _recursive_helper(pg, name, helpers):
    """A self-recursive scalar ``@njit`` helper; its depth is an int argument."""
    ex = pg.ex
    scope = Scope()
    scope.floats, scope.ints, scope.helpers = ["u", "v"], ["cnt"], list(helpers)
    lines = ["@numba.njit", f"def {name}(u, v, cnt):", "    if cnt <= 0:",
             f"        return {ex.fexpr(scope, 2)}",
             f"    return 0.5 * {name}({ex.bounded(scope, 1)}, {ex.bounded(scope, 1)}, "
             f"cnt - 1) + {ex.fexpr(scope, 1)}"]
    return Helper(name, [("u", "f"), ("v", "f"), ("cnt", "i")], [], "float"), lines


def _array_helper(pg, name, helpers):
    """An array ``@njit`` helper: read an element, reduce in a loop, map, or fill ``out``."""
    r, ex = pg.rng, pg.ex
    role = r.choice(["read", "reduce", "map", "fill"])
    scope = Scope()
    scope.arrays, scope.floats, scope.length = ["arr"], ["u"], "arr.shape[0]"
    scope.helpers = [h for h in helpers if not h.arrays]
    if role == "read":
        scope.indices = ["i"]
        lines = [f"def {name}(arr, i, u):", f"    return {ex.fexpr(scope, 2)}"]
        h = Helper(name, [("arr", "a"), ("i", "idx"), ("u", "f")], [], "float", True, role)
    elif role == "reduce":
        body = scope.child()
        body.indices, body.ints, body.loop_depth, body.floats = ["j"], ["j"], 1, ["u", "acc"]
        lines = [f"def {name}(arr, u):", "    acc = 0.25", "    for j in range(arr.shape[0]):",
                 f"        acc += {ex.fexpr(body, 2)}", "    return acc"]
        h = Helper(name, [("arr", "a"), ("u", "f")], [], "float", True, role)
    elif role == "map":
        e = ex.aexpr(scope, 2)
        if re.fullmatch(r"\w+(\[.*\])?", e):
            e = f"np.tanh({e}) * u"
        lines = [f"def {name}(arr, u):", f"    return {e}"]
        h = Helper(name, [("arr", "a"), ("u", "f")], [], "array", True, role)
    else:
        body = scope.child()
        body.indices, body.ints, body.loop_depth = ["j"], ["j"], 1
        lines = [f"def {name}(out, arr, u):", "    for j in range(arr.shape[0]):",
                 f"        out[j] = {ex.fexpr(body, 2)}"]
        h = Helper(name, [("out", "a"), ("arr", "a"), ("u", "f")], [], "none", True, role)
    return h, ["@numba.njit"] + lines


def _final_return(pg, scope):
    """``return`` a combination of several floats (and array reductions) of the body."""
    r = pg.rng
    terms = [f"{r.choice(['', '0.5 * ', '0.3 * ', '1.5 * '])}{t}"
             for t in pg.sink_terms(scope, limit=5)]
    floats = scope.floats
    if floats:
        for v in r.sample(floats, min(len(floats), r.randint(1, 2))):
            terms.append(f"{r.choice(['', '0.5 * ', '0.3 * ', '1.5 * '])}{v}")
    locals_ = [a for a in scope.arrays if a not in pg.param_arrays]
    if locals_ and r.random() < 0.5:
        a = r.choice(locals_)
        terms.append(r.choice([f"0.1 * np.sum({a})", f"np.dot({a}, {scope.arrays[0]})"]))
    if "out" in scope.writable and (pg.writes_args or r.random() < 0.5):
        terms.append("0.2 * np.sum(out)")
    if not terms:
        terms.append(pg.ex.reduction(scope, 1))
    if r.random() < 0.15:
        return f"return math.tanh({' + '.join(terms)})"
    return "return " + " + ".join(terms)


def _signature(pg, kind, scope):
    """The parameters of ``f`` and the statements that set up the scope (``m = ...``)."""
    r = pg.rng
    if kind == "scalar":
        names = ["x", "y", "z"][:r.randint(1, 3)]
        scope.floats = list(names)
        if r.random() < 0.65:
            names.append("n")
            scope.ints = ["n"]
        return names, []
    names = ["a"]
    if r.random() < 0.7:
        names.append("b")
    if r.random() < 0.25:
        names.append("A")
        scope.matrices = ["A"]
    if r.random() < 0.8:
        names.append("x")
        scope.floats = ["x"]
    if r.random() < 0.5:
        names.append("n")
        scope.ints = ["n"]
    if r.random() < 0.25:
        names.append("out")
        scope.writable = ["out"]
    if r.random() < 0.1:
        scope.writable.append("a")
    scope.arrays = [a for a in names if a in ("a", "b")]
    pg.param_arrays = {"a", "b", "A", "out"}
    scope.length = "m"
    scope.ints.append("m")
    scope.floats.append("acc")
    return names, [r.choice(["m = a.shape[0]", "m = len(a)"]), "acc = 0.5"]


def _inputs(rng, names):
    """The evaluation point: floats in [-2, 2], n in 2..5, arrays of one length m in 3..6."""
    m = rng.randint(3, 6)
    args = []
    for name in names:
        if name == "n":
            args.append(rng.randint(2, 5))
        elif name in ("a", "b", "out"):
            args.append(np.array([round(rng.uniform(-1.5, 1.5), 3) for _ in range(m)]))
        elif name == "A":
            args.append(np.array([[round(rng.uniform(-0.8, 0.8), 3) for _ in range(m)]
                                  for _ in range(m)]))
        else:
            args.append(round(rng.uniform(-2.0, 2.0), 3))
    return tuple(args)


def generate(seed, index, kind="scalar"):
    """Program ``index`` of the run seeded ``seed``: source text and evaluation point."""
    kind = kind_of(index, kind)
    rng = program_rng(seed, index, kind)
    pg = ProgramGen(rng, kind)
    helpers, chunks = [], []
    for j in range(rng.randint(0, 2)):
        returns = "tuple" if rng.random() < 0.3 else "float"
        if rng.random() < 0.15:
            h, lines = _recursive_helper(pg, f"h{j}", helpers)
        else:
            h, lines = _scalar_helper(pg, f"h{j}", helpers, returns)
        helpers.append(h)
        chunks.append(lines)
    if kind == "array":
        for j in range(rng.randint(0, 2)):
            h, lines = _array_helper(pg, f"g{j}", helpers)
            helpers.append(h)
            chunks.append(lines)
    scope = Scope()
    scope.helpers = helpers
    pg.ret_kind = "float"
    names, setup = _signature(pg, kind, scope)
    body = setup + pg.block(scope, rng.randint(4, 13 if kind == "scalar" else 11))
    body.append(_final_return(pg, scope))
    deco = ["@numba.njit"] if rng.random() < 0.25 else []
    chunks.append(deco + [f"def f({', '.join(names)}):"] + _indent(body))
    source = HEADER + "".join("\n\n" + "\n".join(c) + "\n" for c in chunks)
    args = _inputs(program_rng(seed, index, kind, "inputs"), names)
    return Program(seed, index, kind, source, names, args, pg.writes_args)
