"""The on-disk derivative cache (``cache=True``): reuse across processes, staleness,
corruption, clearing and pickling. Each process is a real subprocess importing a module
written to a temporary directory, as a user's second run would."""
import json
import os
import pathlib
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import adjit
from adjit import CacheWarning, clear_cache

ROOT = pathlib.Path(__file__).resolve().parents[2]

MODULE = '''
import math, numpy as np, numba, adjit

@numba.njit
def helper(x, k=2.0):
    return math.sin(x) * k

@numba.njit
def f(x):
    s = 0.0
    for i in range(x.size):
        s += helper(x[i], k=SCALE) * x[i]
    return s

SCALE = 3.0
g = adjit.grad(f, cache=True)
h = adjit.hvp(f, cache=True)
j = adjit.jvp(f, cache=True)
'''

RUN = '''
import json, sys, warnings
import numpy as np
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import numba
    import cachedmod as m
    x = np.array([0.3, -1.2, 2.0])
    # h called from @njit code too: a second signature (the *args tuple) of its own
    hvp_in_njit = numba.njit(lambda x, v: m.h(x, v))(x, np.ones(3))
    out = {"grad": m.g(x).tolist(), "hvp": m.h(x, np.ones(3)).tolist(),
           "hvp_in_njit": hvp_in_njit.tolist(),
           "jvp": m.j(x, np.ones(3))[1],
           "hits": sum(sum(d.stats.cache_hits.values()) for d in (m.g, m.h, m.j)),
           "misses": sum(sum(d.stats.cache_misses.values()) for d in (m.g, m.h, m.j)),
           "warnings": [str(w.message) for w in caught if "adjit" in str(w.message)]}
print(json.dumps(out))
'''


def expected(x, scale):
    """Closed forms of f(x) = sum(scale * sin(x_i) * x_i)."""
    grad = scale * (np.cos(x) * x + np.sin(x))
    hess_diag = scale * (2 * np.cos(x) - np.sin(x) * x)
    return grad, hess_diag


def run(tmp_path):
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}")
    env.pop("NUMBA_CACHE_DIR", None)
    proc = subprocess.run([sys.executable, "-c", RUN], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check(out, scale):
    x = np.array([0.3, -1.2, 2.0])
    grad, hess_diag = expected(x, scale)
    np.testing.assert_allclose(out["grad"], grad, rtol=1e-12)
    np.testing.assert_allclose(out["hvp"], hess_diag, rtol=1e-12)
    np.testing.assert_allclose(out["hvp_in_njit"], hess_diag, rtol=1e-12)
    np.testing.assert_allclose(out["jvp"], grad.sum(), rtol=1e-12)


def cache_files(tmp_path):
    return sorted((tmp_path / "__pycache__").glob("adjit-cachedmod.f-*"))


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A module whose three derivatives were compiled once, in a first process."""
    tmp_path = tmp_path_factory.mktemp("cache")
    (tmp_path / "cachedmod.py").write_text(MODULE)
    first = run(tmp_path)
    check(first, 3.0)
    assert first["hits"] == 0 and first["misses"] == 4
    return tmp_path


def test_second_process_loads_every_transform_without_compiling(warm):
    out = run(warm)
    check(out, 3.0)
    assert out["hits"] == 4 and out["misses"] == 0
    names = [p.name for p in cache_files(warm)]
    assert any("-grad0-" in n for n in names) and any("-hvp0-" in n for n in names)
    assert any("-jvp-" in n for n in names)


def test_a_changed_constant_or_callee_is_never_served_stale(warm, tmp_path):
    for name in ("cachedmod.py",):
        (tmp_path / name).write_text(MODULE.replace("SCALE = 3.0", "SCALE = 5.0"))
    (tmp_path / "__pycache__").mkdir()
    for path in cache_files(warm):  # the warm entries, under the new module's name
        (tmp_path / "__pycache__" / path.name).write_bytes(path.read_bytes())
    out = run(tmp_path)
    check(out, 5.0)
    assert out["hits"] == 0 and out["misses"] == 4
    edited = MODULE.replace("math.sin(x) * k", "math.sin(x) * k * 2.0")
    (tmp_path / "cachedmod.py").write_text(edited)
    out = run(tmp_path)
    np.testing.assert_allclose(out["grad"], 2 * expected(np.array([0.3, -1.2, 2.0]), 3.0)[0],
                               rtol=1e-12)
    assert out["misses"] == 4


def test_corrupt_or_truncated_files_warn_and_recompile(warm, tmp_path):
    (tmp_path / "cachedmod.py").write_text(MODULE)
    (tmp_path / "__pycache__").mkdir()
    for path in cache_files(warm):
        data = path.read_bytes()
        broken = data[: len(data) // 2] if path.suffix == ".nbc" else b"not a pickle"
        (tmp_path / "__pycache__" / path.name).write_bytes(broken)
    out = run(tmp_path)
    check(out, 3.0)
    assert out["misses"] == 4
    assert out["warnings"] and all("unreadable disk-cache entry" in w for w in out["warnings"])
    out = run(tmp_path)  # the broken files were rewritten
    check(out, 3.0)
    assert out["hits"] == 4


def test_a_flipped_bit_is_caught_by_the_checksum(warm, tmp_path):
    """One flipped bit in a data file's object code (or in an index) loaded as if valid
    gave a wrong gradient, or crashed the process: every file carries a checksum."""
    (tmp_path / "cachedmod.py").write_text(MODULE)
    (tmp_path / "__pycache__").mkdir()
    for k, path in enumerate(cache_files(warm)):
        data = bytearray(path.read_bytes())
        data[len(data) * (k + 1) // (len(cache_files(warm)) + 2)] ^= 1 << (k % 8)
        (tmp_path / "__pycache__" / path.name).write_bytes(bytes(data))
    out = run(tmp_path)
    check(out, 3.0)
    assert out["misses"] == 4 and out["hits"] == 0
    assert out["warnings"] and all("checksum" in w for w in out["warnings"]), out["warnings"]


def test_a_flipped_bit_inside_stored_code_is_never_loaded(tmp_path):
    """Without a checksum, a bit flipped inside the object code still unpickles: the
    damaged code loads as if valid (a wrong gradient, or a crash, when it runs)."""
    from adjit.compile.disk_cache import _SingleEntryFile
    entry = _SingleEntryFile(str(tmp_path), "entry", "stamp")
    code = bytes(range(256)) * 8
    entry.save(("sig",), ("object code", code))
    assert entry.load(("sig",)) == ("object code", code)
    path = tmp_path / "entry.1.nbc"
    data = bytearray(path.read_bytes())
    data[bytes(data).find(code) + 1000] ^= 4
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="checksum"):
        entry.load(("sig",))


def test_clear_cache_removes_only_that_functions_files(warm):
    sys.path.insert(0, str(warm))
    try:
        import cachedmod
    finally:
        sys.path.remove(str(warm))
    (warm / "__pycache__" / "adjit-cachedmod.other-grad0-x.nbi").write_bytes(b"")
    assert clear_cache(cachedmod.f) >= 6
    assert cache_files(warm) == []
    assert (warm / "__pycache__" / "adjit-cachedmod.other-grad0-x.nbi").exists()
    # the next process recompiles and writes them again
    check(run(warm), 3.0)
    assert len(cache_files(warm)) >= 6


def test_signatures_that_print_alike_get_files_of_their_own():
    """A tuple argument and an ``*args`` tuple print alike; their entries once shared a
    file, each overwriting the other (an hvp used from Python and from @njit code was
    never found by a new process; the module's second run above counts both)."""
    from numba.core import types
    from adjit.compile.disk_cache import _type_classes
    arr = types.float64[::1]
    plain, star = (types.UniTuple(arr, 2),), (types.StarArgUniTuple(arr, 2),)
    assert repr(plain) == repr(star)
    assert _type_classes(plain) != _type_classes(star)


def test_transforms_pickle_as_the_same_transform():
    from corpus.straight_line import reuse_value
    for transform, args in ((adjit.grad(reuse_value), (1.3,)),
                            (adjit.value_and_grad(reuse_value), (0.2,)),
                            (adjit.jvp(reuse_value), (1.3, 1.0)),
                            (adjit.hvp(reuse_value), (1.3, 1.0))):
        clone = pickle.loads(pickle.dumps(transform))
        assert clone is transform  # the same process: the same cached transform
    x = 1.3  # f = x^4 + x^3 - 3x^2
    assert adjit.grad(reuse_value)(x) == pytest.approx(4 * x**3 + 3 * x**2 - 6 * x, rel=1e-14)


def test_a_function_without_source_is_not_cached_and_says_why():
    namespace = {}
    exec(textwrap.dedent("""
        def nosource(x):
            return x * x
    """), namespace)
    # (it said there was no writable cache directory, where there was no source file)
    with pytest.warns(CacheWarning, match="not cached on disk: it has no source file"):
        g = adjit.grad(namespace["nosource"], cache=True)
    assert g(3.0) == 6.0


def test_cache_must_be_a_bool():
    from corpus.straight_line import reuse_value
    with pytest.raises(adjit.ArgumentError, match="cache must be True or False"):
        adjit.grad(reuse_value, cache="yes")


def quartic(x):
    return np.sum(x ** 4)


def test_hessian_with_cache_caches_its_hvp():
    x = np.array([0.5, -1.0, 2.0])
    h = adjit.hessian(quartic, cache=True)(x)
    np.testing.assert_allclose(h, np.diag(12 * x ** 2), rtol=1e-12, atol=1e-12)
    pycache = pathlib.Path(__file__).parent / "__pycache__"
    assert list(pycache.glob("adjit-test_disk_cache.quartic-hvp0-*"))
    assert clear_cache(quartic) >= 2


def test_a_rule_registered_in_a_script_is_part_of_the_fingerprint():
    """Functions and rules defined in ``__main__`` (a script or a notebook) are user
    code: changing a ``defderiv`` rule there must change the fingerprint, or a cached
    derivative built with the old rule would be loaded."""
    from adjit.capture.fingerprint import fingerprint
    from adjit.extend import defderiv
    namespace = {"__name__": "__main__"}
    exec(textwrap.dedent("""
        import numba

        @numba.njit
        def script_square(a):
            return a * a

        def script_f(x):
            return script_square(x) + x
    """), namespace)
    defderiv(namespace["script_square"], eval("lambda a: 2.0 * a", {"__name__": "__main__"}))
    before = fingerprint(namespace["script_f"], "grad0")
    defderiv(namespace["script_square"], eval("lambda a: 3.0 * a", {"__name__": "__main__"}))
    assert fingerprint(namespace["script_f"], "grad0") != before


def _script_function(x):
    return np.sum(np.sin(x) * x)


def test_a_script_function_has_one_fingerprint_in_its_spawned_workers():
    """A script's functions live in ``__main__``, and in ``__mp_main__`` in the workers
    ``multiprocessing`` spawns: both must key the same cached derivative (the workers
    compiled it again)."""
    import types as pytypes
    from adjit.capture.fingerprint import fingerprint

    def in_module(name):
        f = pytypes.FunctionType(_script_function.__code__, _script_function.__globals__,
                                 "_script_function")
        f.__module__ = name
        return f
    assert (fingerprint(in_module("__main__"), "grad0")
            == fingerprint(in_module("__mp_main__"), "grad0")
            != fingerprint(in_module("elsewhere"), "grad0"))


def _reached_twice(twin_source=None):
    """``f`` calling helper ``soft`` by its name and as ``lib.soft``: one object, or
    (``twin_source``) a second function of that name and source, as a spawned worker
    that unpickles ``f`` gets (Numba rebuilds the helper ``f`` holds by value)."""
    import types as pytypes

    import numba
    source = "import math\ndef soft(v):\n    return math.log1p(math.exp(v))\n"
    first, second = {"__name__": "twinlib"}, {"__name__": "twinlib"}
    exec(source, first)
    exec(twin_source or source, second)
    lib = pytypes.ModuleType("twinlib")
    lib.soft = numba.njit(second["soft"]) if twin_source else numba.njit(first["soft"])
    namespace = {"__name__": "twinmod", "soft": lib.soft if not twin_source
                 else numba.njit(first["soft"]), "lib": lib}
    exec("def f(x):\n    return soft(x) + lib.soft(x)\n", namespace)
    return namespace["f"]


def test_copies_of_one_helper_reached_by_two_names_fingerprint_as_one():
    """Counted by object, the copies a spawned worker holds gave it another fingerprint
    than its parent's, and it compiled the derivative again instead of loading it."""
    from adjit.capture.fingerprint import fingerprint
    same = "import math\ndef soft(v):\n    return math.log1p(math.exp(v))\n"
    other = "import math\ndef soft(v):\n    return math.log1p(math.exp(2 * v))\n"
    one = fingerprint(_reached_twice(), "grad0")
    assert one == fingerprint(_reached_twice(same), "grad0")
    assert one != fingerprint(_reached_twice(other), "grad0")


def _namespace(helper_source, extra_globals=None):
    """``f`` calling ``helper`` (defined by ``helper_source``), in a fresh namespace."""
    import numba
    namespace = {"numba": numba, "np": np, **(extra_globals or {})}
    exec(textwrap.dedent(helper_source) + textwrap.dedent("""
        def f(x):
            return helper(x) * x
    """), namespace)
    return namespace


def test_the_code_and_defaults_of_a_helper_that_reads_no_globals_count():
    """A leaf helper (it reads no global of its own) was fingerprinted by name only, so
    an edit of its body or of a default was served stale from the disk cache."""
    from adjit.capture.fingerprint import fingerprint
    square = """
        @numba.njit
        def helper(a, p=2.0):
            return a ** p
    """
    prints = {fingerprint(_namespace(source)["f"], "grad0") for source in (
        square, square.replace("a ** p", "a ** p + a"), square.replace("p=2.0", "p=3.0"))}
    assert len(prints) == 3


def test_a_helper_reached_through_a_package_submodule_is_tracked():
    """``pkg.sub.helper(x)``: module attributes are followed to any depth, for the
    fingerprint and for the in-process rebind check (one level was followed)."""
    import types as pytypes
    import numba
    from adjit.capture.fingerprint import fingerprint
    from adjit.capture.freshness import snapshot
    pkg, sub = pytypes.ModuleType("adjit_test_pkg"), pytypes.ModuleType("adjit_test_pkg.sub")
    pkg.sub = sub
    sub.helper = numba.njit(lambda a: np.sin(a))
    namespace = {"pkg": pkg, "np": np}
    exec("def f(x):\n    return pkg.sub.helper(x) * x\n", namespace)
    before = fingerprint(namespace["f"], "grad0")
    assert "pkg.sub.helper" in [name for _, name, _ in snapshot(namespace["f"])]
    sub.helper = numba.njit(lambda a: np.cos(a))
    assert fingerprint(namespace["f"], "grad0") != before


def test_the_environment_stamp_reads_sources_not_the_kernel_cache(tmp_path):
    """adjit's rule kernels are cached in ``__pycache__`` beside its sources; walking
    those thousands of files cost every new process 10 to 35 ms of its cached gradient."""
    from adjit.compile.stamps import _sources
    (tmp_path / "rules" / "__pycache__").mkdir(parents=True)
    (tmp_path / "rules" / "core.py").write_text("")
    (tmp_path / "rules" / "__pycache__" / "stray.py").write_text("")
    (tmp_path / "rules" / "__pycache__" / "adjit-kernel-1.nbi").write_text("")
    assert [p.relative_to(tmp_path).as_posix() for p in _sources(tmp_path)] == ["rules/core.py"]


def test_the_environment_stamp_is_taken_when_adjit_is_imported():
    """Taken at the first cache use instead, a source edited after the import labelled
    kernels compiled from the imported code with the edited code's stamp (a wrong
    gradient for later processes that loaded them)."""
    code = ("import adjit\nfrom adjit.compile.stamps import environment_stamp\n"
            "print(environment_stamp.cache_info().currsize)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == "1", proc.stderr


SAME_NAME = '''
import itertools, json, sys
import numpy as np, numba
from numba.core.bytecode import FunctionIdentity
import adjit
import first, second

x = np.linspace(0.1, 1.0, 4)
# Numba numbers compiles per process: both writers number theirs alike from here
FunctionIdentity._unique_ids = itertools.count(5000)
g1, g2 = adjit.grad(first.f, cache=True), adjit.grad(second.f, cache=True)
if sys.argv[1] == "first":
    g1(x)
elif sys.argv[1] == "second":
    g2(x)
else:
    both = numba.njit(lambda x: (g1(x), g2(x)))
    print(json.dumps([a.tolist() for a in both(x)]))
'''


def test_derivatives_of_two_modules_functions_of_one_name_stay_apart(tmp_path):
    """``first.f`` and ``second.f``, each differentiated in a process of its own, both
    ``cache=True``; a third process loading both into one ``@njit`` caller got
    ``first.f``'s gradient for both: generated functions all live in one module, and
    the two entries' code had one symbol name."""
    (tmp_path / "first.py").write_text("import numpy as np\n"
                                       "def f(x):\n    return np.sum(np.sin(x) * x)\n")
    (tmp_path / "second.py").write_text("import numpy as np\n"
                                        "def f(x):\n    return np.sum(np.cos(x) * x)\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path)]))
    outputs = []
    for which in ("first", "second", "both"):
        proc = subprocess.run([sys.executable, "-c", SAME_NAME, which], capture_output=True,
                              text=True, env=env, timeout=600, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        outputs.append(proc.stdout)
    a, b = (np.array(v) for v in json.loads(outputs[-1].strip().splitlines()[-1]))
    x = np.linspace(0.1, 1.0, 4)
    np.testing.assert_allclose(a, np.sin(x) + x * np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(b, np.cos(x) - x * np.sin(x), rtol=1e-12)


def _run_script(tmp_path, script, *argv):
    """Run ``script`` in a fresh process over the modules in ``tmp_path``; its last line."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path)]))
    proc = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True,
                          text=True, env=env, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_transform_of_a_transform_is_keyed_by_the_inner_function(tmp_path):
    """``jvp(grad(f), cache=True)`` was keyed by grad's generated stub, the same for every
    ``f``: a second process differentiating another module's ``f`` loaded the first's."""
    for name, k in (("ma", 2.0), ("mb", 3.0)):
        (tmp_path / f"{name}.py").write_text(
            f"import numpy as np\ndef f(x):\n    return np.sum(np.sin({k} * x))\n")
    script = ("import importlib, json, sys, numpy as np, adjit\n"
              "f = importlib.import_module(sys.argv[1]).f\n"
              "x = np.linspace(0.1, 0.5, 4)\n"
              "print(json.dumps(adjit.jvp(adjit.grad(f), cache=True)(x, np.ones(4))[1].tolist()))\n")
    x = np.linspace(0.1, 0.5, 4)
    for name, k in (("ma", 2.0), ("mb", 3.0)):
        np.testing.assert_allclose(_run_script(tmp_path, script, name),
                                   -k * k * np.sin(k * x), rtol=1e-12)


@pytest.mark.parametrize("module, edit, expected", [
    # an @njit caller of adjit.grad(f) read as a global: f is reached through grad's stub
    ("import numpy as np, numba, adjit\n"
     "def f(x):\n    return np.sum(np.sin(2.0 * x))\n"
     "G = adjit.grad(f)\n"
     "@numba.njit\ndef caller(x):\n    return np.sum(G(x) * x)\n"
     "TARGET = caller\n",
     ("2.0 * x", "3.0 * x"),
     lambda x, k: np.sum(k * np.cos(k * x) - k * k * np.sin(k * x) * x)),
    # an @njit helper held in a global tuple: hashed by name only
    ("import numpy as np, numba\n"
     "@numba.njit\ndef h(v):\n    return 2.0 * v\n"
     "OPS = (h,)\n"
     "def f(x):\n    return np.sum(np.sin(OPS[0](x)))\n"
     "TARGET = f\n",
     ("2.0 * v", "3.0 * v"),
     lambda x, k: np.sum(k * np.cos(k * x))),
], ids=["njit_caller_of_a_grad", "helper_in_a_global_tuple"])
def test_an_edit_reached_through_a_transform_or_a_tuple_is_not_stale(tmp_path, module,
                                                                     edit, expected):
    """Edited between two processes, each code was still served the first process's
    cached derivative."""
    (tmp_path / "edited.py").write_text(module)
    script = ("import json, numpy as np, adjit, edited\n"
              "x = np.linspace(0.1, 0.5, 4)\n"
              "print(json.dumps(float(adjit.jvp(edited.TARGET, cache=True)(x, x * 0 + 1.0)[1])))\n")
    x = np.linspace(0.1, 0.5, 4)
    assert _run_script(tmp_path, script) == pytest.approx(expected(x, 2.0), rel=1e-12)
    (tmp_path / "edited.py").write_text(module.replace(*edit))
    for stale in tmp_path.rglob("__pycache__"):  # Python's own bytecode cache: by mtime
        for path in stale.glob("edited*.pyc"):
            path.unlink()
    assert _run_script(tmp_path, script) == pytest.approx(expected(x, 3.0), rel=1e-12)


def test_a_hessian_pickles_into_a_fresh_process(tmp_path):
    """``adjit.hessian(f)`` went to process-pool workers as a Numba function pickled by
    value, whose column loop lost the overload it calls (a TypingError there); it pickles
    as "the hessian of f" now, like the other transforms."""
    (tmp_path / "hmod.py").write_text(
        "import numpy as np\ndef f(x):\n    return np.sum(np.sin(2.0 * x) * x)\n")
    write = ("import json, pickle, numpy as np, adjit, hmod\n"
             "h = adjit.hessian(hmod.f, cache=True)\n"
             "open('h.pkl', 'wb').write(pickle.dumps(h))\n"
             "print(json.dumps(0))\n")
    read = ("import json, pickle, numpy as np\n"
            "h = pickle.loads(open('h.pkl', 'rb').read())\n"
            "print(json.dumps(h(np.linspace(0.1, 1.0, 3)).tolist()))\n")
    _run_script(tmp_path, write)
    x = np.linspace(0.1, 1.0, 3)
    np.testing.assert_allclose(np.diag(_run_script(tmp_path, read)),
                               4 * np.cos(2 * x) - 4 * x * np.sin(2 * x), rtol=1e-12)


def test_an_enum_members_values_count():
    """An ``Enum`` read by the function was fingerprinted by name only: ``K = 2.0``
    edited to ``3.0`` was served the old derivative (Numba compiles the value in)."""
    from adjit.capture.fingerprint import fingerprint
    prints = set()
    for k in ("2.0", "3.0"):
        namespace = {"__name__": "edited_enum"}
        exec(textwrap.dedent(f"""
            import enum, numpy as np
            class S(enum.Enum):
                K = {k}
            def f(x):
                return np.sum(np.sin(S.K.value * x))
        """), namespace)
        prints.add(fingerprint(namespace["f"], "grad0"))
    assert len(prints) == 2


FACTORY = '''
import numpy as np, numba, math
def make(k):
    @numba.njit
    def h(n):  # a primal-only helper, too large to inline
        s = 0.0
        for i in range(n):
            for j in range(n):
                s = s * 0.999 + math.sin(s + i * k) * math.exp(-s * s) + math.log1p(abs(s) + j)
                s = s * 0.998 + math.cos(s - j * k) * math.exp(-s * s) + math.log1p(abs(s) + i)
                s = s * 0.997 + math.sin(s * k + i) / (1.0 + s * s) + math.atan(s + j)
        return k + 0.0 * s
    def f(x, n):
        return np.sum(np.sin((h(n) + h(n + 1) - k) * x))  # sum(sin(k x))
    return f
'''


def test_cached_derivatives_of_factory_closures_keep_their_own_helpers(tmp_path):
    """``grad(make(1.0))`` and ``grad(make(2.0))`` cached by two processes: both held the
    helper ``make.<locals>.h`` under one name (Numba counts compiles per process), and a
    third process loading both ran k=1's helper for k=2 (a zero gradient). Numba's count
    now starts at a random per-process offset (``kernel_cache``)."""
    (tmp_path / "factory.py").write_text(FACTORY)
    script = ("import json, sys, numpy as np, adjit, factory\n"
              "x = np.linspace(0.1, 0.5, 4)\n"
              "ks = [float(k) for k in sys.argv[1:]]\n"
              "print(json.dumps([adjit.grad(factory.make(k), cache=True)(x, 3).tolist()"
              " for k in ks]))\n")
    _run_script(tmp_path, script, "1")
    _run_script(tmp_path, script, "2")
    x = np.linspace(0.1, 0.5, 4)
    for k, got in zip((1.0, 2.0), _run_script(tmp_path, script, "1", "2")):
        np.testing.assert_allclose(got, k * np.cos(k * x), rtol=1e-12)
