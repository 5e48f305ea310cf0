"""Random expressions for the fuzzer's programs: float scalars, 1-D arrays and conditions.

Every expression is Python source text that Numba can type. Arguments of functions with a
restricted domain are kept inside it by construction (``math.log(1.0 + e * e)``,
``math.asin(0.9 * math.tanh(e))``), and arguments of ``exp`` are bounded, so a program's
value stays finite and differentiable at almost every point.
"""
import copy

CONSTS = ["0.5", "1.5", "0.3", "2.0", "0.7", "1.1", "0.25", "0.6", "1.3", "3.0", "0.9", "0.15"]

# unary functions defined and smooth on the whole real line: (template, weight)
_SMOOTH = [
    ("math.sin({})", 4), ("math.cos({})", 3), ("math.tanh({})", 3), ("math.atan({})", 2),
    ("math.asinh({})", 1), ("math.erf({})", 1), ("math.erfc({})", 1), ("np.sin({})", 1),
    ("np.tanh({})", 1), ("np.arctan({})", 1), ("np.square({})", 1),
    ("math.sqrt(1.0 + {0} * {0})", 2), ("math.log(1.0 + {0} * {0})", 2),
    ("math.log1p({0} * {0})", 1), ("math.log10(1.0 + {0} * {0})", 1),
    ("math.log2(2.0 + math.sin({}))", 1), ("np.sqrt(1.0 + {0} * {0})", 1),
    ("np.log(1.5 + np.cos({}))", 1), ("math.asin(0.9 * math.tanh({}))", 1),
    ("math.acos(0.9 * math.sin({}))", 1), ("math.atanh(0.9 * math.tanh({}))", 1),
    ("math.acosh(1.1 + {0} * {0})", 1), ("math.tan(0.5 * math.sin({}))", 1),
    ("math.lgamma(1.5 + {0} * {0})", 1), ("math.gamma(1.5 + 0.5 * math.sin({}))", 1),
    ("({0} / (1.0 + {0} * {0}))", 1), ("abs({})", 2), ("math.fabs({})", 1), ("np.abs({})", 1),
    ("(-{})", 2), ("({} ** 2)", 2), ("({} ** 3)", 1), ("math.pow({}, 2.0)", 1),
    ("np.cbrt(1.5 + math.sin({}))", 1),
]
# functions whose argument must be bounded (exp-like growth)
_BOUNDED_ARG = [
    ("math.exp({})", 4), ("math.expm1({})", 1), ("math.sinh({})", 1), ("math.cosh({})", 1),
    ("np.exp({})", 1), ("np.exp2({})", 1),
]
_BOUNDERS = ["math.sin({})", "math.tanh({})", "math.cos({})", "(-({0} * {0}))",
             "(0.5 * math.atan({}))", "(0.3 * {})"]
# binary functions and operators: (template, weight)
_BINARY = [
    ("({} + {})", 6), ("({} - {})", 4), ("({} * {})", 6),
    ("({0} / (1.0 + {1} * {1}))", 2), ("({} / (2.0 + math.cos({})))", 1),
    ("math.atan2({}, {})", 2), ("math.hypot({}, {})", 1), ("min({}, {})", 2),
    ("max({}, {})", 2), ("np.maximum({}, {})", 1), ("np.minimum({}, {})", 1),
    ("np.arctan2({}, {})", 1), ("np.hypot({}, {})", 1),
    ("math.pow(1.0 + {0} * {0}, math.sin({1}))", 1), ("((1.5 + math.cos({})) ** {})", 1),
    ("({} * math.exp(math.sin({})))", 1),
]
_ARRAY_UNARY = [
    ("np.sin({})", 3), ("np.cos({})", 2), ("np.tanh({})", 3), ("np.exp(np.sin({}))", 2),
    ("np.sqrt(1.0 + {0} * {0})", 2), ("np.log(1.0 + {0} * {0})", 2), ("np.abs({})", 1),
    ("np.arctan({})", 1), ("({} ** 2)", 2), ("(-{})", 1), ("np.exp(-({0} * {0}))", 1),
    ("({0} / (1.0 + {0} * {0}))", 1), ("np.log1p({0} * {0})", 1),
    ("np.cumsum({})", 1), ("({}).cumsum()", 0.5), ("np.copy({})", 0.5), ("np.ravel({})", 0.3),
    ("({}).copy()", 0.3),
]
_ARRAY_BINARY = [
    ("({} + {})", 4), ("({} - {})", 3), ("({} * {})", 5), ("({0} / (1.0 + {1} * {1}))", 1),
    ("np.maximum({}, {})", 1), ("np.minimum({}, {})", 1),
]
_REDUCTIONS = [
    ("np.sum({})", 5), ("({}).sum()", 1), ("np.dot({}, {})", 3), ("np.mean({})", 1),
    ("np.max({})", 1), ("np.min({})", 1), ("np.prod(1.0 + 0.1 * np.tanh({}))", 1),
    # (a copy: Numba's own np.linalg.norm of a reversed view, a[::-1], is wrong and not
    # even deterministic; adjit differentiates the norm, not that bug)
    ("np.linalg.norm(np.copy({}))", 1), ("(({}) @ ({}))", 1), ("np.sum(np.outer({0}, {1}))", 0.5),
    ("np.sum(np.outer({0}, {1}) @ {1})", 0.5), ("np.sum(np.cumsum({0}) * {1})", 0.5),
]
# reductions involving an m x m matrix {M}
_MATRIX_REDUCTIONS = [
    "np.sum({M} * {M})", "np.sum(np.sin({M}) @ {M}.T)", "np.sum({M}.T * {s})",
    "np.dot(np.ravel({M}), np.ravel({M}))", "np.sum(np.outer({a}, {b}) * {M})",
    "np.sum(np.transpose({M}) @ {a})", "np.sum({M}.reshape({n}) * {s})",
    "({M}.sum())", "np.sum(np.tanh({M} @ {M}))", "np.max({M} @ {a})",
]


class Scope:
    """What a statement may read: names by type, loop state and the callable helpers."""

    def __init__(self):
        """An empty scope (the generator fills it with parameters and locals)."""
        self.floats = []       # float scalar names
        self.ints = []         # int names (parameters, loop counters)
        self.indices = []      # int expressions that are valid indices into length-m arrays
        self.arrays = []       # 1-D float arrays of length m
        self.writable = []     # arrays that may be written element by element
        self.matrices = []     # m x m float arrays
        self.tuples = []       # names of 2-tuples of floats
        self.helpers = []      # Helper descriptors callable from here
        self.loop_depth = 0
        self.loop_kind = None  # "for" | "while": the innermost loop (no continue in a while)
        self.depth = 0         # nesting depth of compound statements
        self.length = None     # source expression of m (array programs)
        self.parent_floats = None  # floats of the enclosing block (None at the top)

    def child(self):
        """A nested scope: names it adds are dropped when the block ends."""
        c = copy.copy(self)
        for k in ("floats", "ints", "indices", "arrays", "writable", "matrices", "tuples"):
            setattr(c, k, list(getattr(self, k)))
        c.depth = self.depth + 1
        c.parent_floats = list(self.floats)
        return c


def _pick(rng, weighted):
    """A template from a list of (template, weight)."""
    total = sum(w for _, w in weighted)
    r = rng.random() * total
    for t, w in weighted:
        r -= w
        if r <= 0:
            return t
    return weighted[-1][0]


class ExprGen:
    """Generates expression source text from a random.Random and a Scope."""

    def __init__(self, rng):
        """Keep the rng: every choice goes through it, so a seed fixes the program."""
        self.rng = rng
        self.unused = set()    # names defined but not read yet (preferred as leaves)

    def use(self, names):
        """One of ``names``, preferring one not read yet; it counts as read from now on."""
        fresh = [v for v in names if v in self.unused]
        v = self.rng.choice(fresh if fresh and self.rng.random() < 0.6 else names)
        self.unused.discard(v)
        return v

    def const(self):
        """A float literal (sometimes negative)."""
        c = self.rng.choice(CONSTS)
        return "(-" + c + ")" if self.rng.random() < 0.15 else c

    def index(self, scope):
        """An int expression that is a valid index of a length-m array."""
        r = self.rng
        if scope.indices and r.random() < 0.75:
            i = r.choice(scope.indices)
            form = r.random()
            if form < 0.15:
                return f"{scope.length} - 1 - {i}"
            if form < 0.25:
                return f"({i} + 1) % {scope.length}"
            return i
        if scope.ints and r.random() < 0.3:
            return f"{r.choice(scope.ints)} % {scope.length}"
        return str(r.randint(0, 2))

    def leaf(self, scope):
        """A float-valued leaf: variable, constant, element read, tuple item or int."""
        r = self.rng
        opts = []
        if scope.floats:
            opts += [("var", 8)]
        opts += [("const", 2)]
        if scope.ints:
            opts += [("int", 1)]
        if scope.arrays:
            opts += [("elem", 4)]
        if scope.matrices:
            opts += [("melem", 1)]
        if scope.tuples:
            opts += [("tup", 2)]
        kind = _pick(r, opts)
        if kind == "var":
            return self.use(scope.floats)
        if kind == "const":
            return self.const()
        if kind == "int":
            # offset: an exact 0.0 at atan2/hypot's singular origin would give 0 * nan
            return f"(0.3 * {r.choice(scope.ints)} + 0.1)" if r.random() < 0.5 \
                else f"float({r.choice(scope.ints)} + 1)"
        if kind == "elem":
            return f"{self.use(scope.arrays)}[{self.index(scope)}]"
        if kind == "melem":
            return f"{r.choice(scope.matrices)}[{self.index(scope)}, {self.index(scope)}]"
        return f"{self.use(scope.tuples)}[{r.randint(0, 1)}]"

    def bounded(self, scope, depth):
        """An expression of bounded magnitude (the argument of exp-like functions)."""
        return self.rng.choice(_BOUNDERS).format(self.fexpr(scope, depth))

    def fexpr(self, scope, depth):
        """A float expression of nesting depth at most ``depth``."""
        r = self.rng
        if depth <= 0 or r.random() < 0.2:
            return self.leaf(scope)
        opts = [("smooth", 6), ("bexp", 2), ("binary", 8)]
        if scope.depth < 3 and depth >= 2:
            opts.append(("ternary", 1))
        if any(h.returns == "float" and not h.arrays for h in scope.helpers):
            opts.append(("call", 2))
        if scope.ints:
            opts.append(("intpow", 1))
        opts.append(("piecewise", 0.3))
        if scope.arrays and depth >= 2:
            opts.append(("reduce", 1))
        kind = _pick(r, opts)
        sub = lambda: self.fexpr(scope, depth - 1)   # noqa: E731
        if kind == "smooth":
            t = _pick(r, _SMOOTH)
            return t.format(sub())
        if kind == "bexp":
            return _pick(r, _BOUNDED_ARG).format(self.bounded(scope, depth - 1))
        if kind == "binary":
            return _pick(r, _BINARY).format(sub(), sub())
        if kind == "ternary":
            return f"({sub()} if {self.cond(scope, 1)} else {sub()})"
        if kind == "call":
            return self.call(scope, depth - 1)
        if kind == "intpow":
            return f"({sub()} ** {r.choice(scope.ints)})"
        if kind == "piecewise":
            return r.choice(["({} % 1.7)", "({} // 0.5)", "float(math.floor({}))"]).format(sub())
        return self.reduction(scope, 1)

    def call(self, scope, depth, want="float"):
        """A call of a float- (or tuple-) returning scalar helper, keywords sometimes."""
        r = self.rng
        hs = [h for h in scope.helpers if h.returns == want and not h.arrays]
        h = r.choice(hs)
        built = [t for t in scope.tuples if t.startswith("t")]     # made here, not returned
        if built and h.params == [("u", "f"), ("v", "f")] and r.random() < 0.3:
            return f"{h.name}(*{self.use(built)})"                  # f(*t)
        args = []
        use_kw = r.random() < 0.25
        for name, kind in h.params:
            if kind == "t":                                         # a tuple argument
                v = self.use(scope.tuples) if scope.tuples and r.random() < 0.6 \
                    else f"({self.fexpr(scope, depth)}, {self.fexpr(scope, depth)})"
            else:
                v = self.fexpr(scope, depth) if kind == "f" else self.intarg(scope)
            args.append(f"{name}={v}" if use_kw else v)
        for name, _ in h.defaults:
            if r.random() < 0.5:
                args.append(f"{name}={self.fexpr(scope, depth)}")
        return f"{h.name}({', '.join(args)})"

    def intarg(self, scope):
        """An int argument for a helper's int parameter (small, non-negative)."""
        r = self.rng
        if scope.ints and r.random() < 0.6:
            return r.choice(scope.ints)
        return str(r.randint(1, 4))

    def cond(self, scope, depth):
        """A boolean condition: float comparisons, int tests, and/or/not."""
        r = self.rng
        u = r.random()
        if depth > 0 and u < 0.15:
            op = r.choice(["and", "or"])
            return f"({self.cond(scope, 0)} {op} {self.cond(scope, 0)})"
        if depth > 0 and u < 0.2:
            return f"(not {self.cond(scope, 0)})"
        if scope.ints and u < 0.35:
            i = r.choice(scope.ints)
            return r.choice([f"{i} % 2 == 0", f"{i} < {r.randint(1, 3)}",
                             f"{i} > {r.randint(1, 3)}", f"{i} != 1"])
        op = r.choice(["<", ">", "<=", ">="])
        lhs = self.fexpr(scope, 1)
        rhs = self.fexpr(scope, 1) if r.random() < 0.6 else self.const()
        return f"{lhs} {op} {rhs}"

    # ---------------------------------------------------------------- arrays

    def aleaf(self, scope):
        """A length-m array-valued leaf: a variable, a reversed view, a matrix product/row."""
        r = self.rng
        u = r.random()
        if scope.matrices and u < 0.15:
            m = r.choice(scope.matrices)
            form = r.choice(["{} @ {}", "np.dot({}, {})", "{}.T @ {}"])
            return "(" + form.format(m, self.use(scope.arrays)) + ")"
        if scope.matrices and u < 0.22:
            m = r.choice(scope.matrices)
            return r.choice([f"{m}[{self.index(scope)}]", f"{m}[:, {self.index(scope)}]"])
        if u < 0.28:
            return f"{self.use(scope.arrays)}[::-1]"
        return self.use(scope.arrays)

    def aexpr(self, scope, depth):
        """A length-m float array expression (whole-array operations)."""
        r = self.rng
        if depth <= 0 or r.random() < 0.25:
            return self.aleaf(scope)
        u = r.random()
        sub = lambda: self.aexpr(scope, depth - 1)   # noqa: E731
        if u < 0.35:
            return _pick(r, _ARRAY_UNARY).format(sub())
        if u < 0.7:
            return _pick(r, _ARRAY_BINARY).format(sub(), sub())
        s = self.fexpr(scope, 1)
        hs = [h for h in scope.helpers if h.returns == "array"]
        if hs and u < 0.78:
            h = r.choice(hs)
            return f"{h.name}({sub()}, {s})"
        return r.choice(["({} * {})", "({1} * {0})", "({} + {})", "({} - {})"]).format(sub(), s)

    def reduction(self, scope, depth):
        """A float reduction of array expressions (sum, dot, mean, max, norm...)."""
        r = self.rng
        if r.random() < 0.1 and len(scope.arrays) >= 1:
            a, b = r.choice(scope.arrays), r.choice(scope.arrays)
            return r.choice([f"np.sum({a}[1:] * {b}[:-1])", f"np.dot({a}[1:], {b}[:-1])"])
        if scope.matrices and r.random() < 0.2:
            M = self.use(scope.matrices)
            return r.choice(_MATRIX_REDUCTIONS).format(
                M=M, s=self.fexpr(scope, 1), a=self.aexpr(scope, depth),
                b=self.aexpr(scope, depth), n=f"{M}.size")
        t = _pick(r, _REDUCTIONS)
        return t.format(self.aexpr(scope, depth), self.aexpr(scope, depth))
