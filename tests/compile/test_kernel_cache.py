"""adjit's internal functions (rule kernels, scalar partials) are compiled once per
signature on a machine: a second process loads them from Numba's disk cache
(``compile/kernel_cache.py``), and a stale, foreign or corrupt entry is never used."""
import json
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from adjit.compile.kernel_cache import kernel_digest
from adjit.errors import Uncacheable

ROOT = pathlib.Path(__file__).resolve().parents[2]

RUN = '''
import json, math, warnings
import numpy as np
from numba.core import event
import adjit

compiled = []

class Listener(event.Listener):
    def on_start(self, ev):
        func = ev.data["dispatcher"].py_func
        if func.__module__.startswith("adjit."):
            compiled.append(func.__qualname__)
    def on_end(self, ev):
        pass

def f(x):
    return np.sum(np.sin(x) * np.exp(x))

x = np.linspace(-1.0, 1.0, 7)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with event.install_listener("numba:compile", Listener()):
        g = adjit.grad(f)(x)
        h = adjit.hvp(f)(x, np.ones(7))
print(json.dumps({"grad": g.tolist(), "hvp": h.tolist(), "compiled": compiled,
                  "warnings": [str(w.message) for w in caught if "adjit" in str(w.message)]}))
'''


def _run(cache_dir):
    # the array rules' kernels, not a fused loop (``capture/fused_sums.py``)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), PYTHONPATH=str(ROOT),
               ADJIT_FUSE_SUMS="0")
    proc = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _expected(x):
    grad = np.exp(x) * (np.cos(x) + np.sin(x))
    return grad, 2.0 * np.exp(x) * np.cos(x)


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A cache directory a first process wrote, and that process's output."""
    cache = tmp_path_factory.mktemp("kernels")
    return cache, _run(cache)


def test_a_second_process_loads_the_kernels_it_needs(warm):
    cache, first = warm
    x = np.linspace(-1.0, 1.0, 7)
    for out in (first, _run(cache)):
        grad, hess_diag = _expected(x)
        np.testing.assert_allclose(out["grad"], grad, rtol=1e-12)
        np.testing.assert_allclose(out["hvp"], hess_diag, rtol=1e-12)
        assert not out["warnings"]
    # the kernels and the JVP programs hvp derives from them, not the overloads that
    # hvp's capture of a kernel (to type grad's body) types again
    kernels = ("elementwise_update.<locals>.update", "_scalar_partial.<locals>.<lambda>",
               "update_jvp")
    second = _run(cache)
    assert all(k in first["compiled"] for k in kernels), first["compiled"]
    assert not any(k in second["compiled"] for k in kernels), second["compiled"]
    assert list(pathlib.Path(cache).rglob("adjit-kernel-*"))


def test_a_corrupt_kernel_entry_warns_and_is_compiled_again(warm, tmp_path):
    cache, _ = warm
    copy = tmp_path / "cache"
    subprocess.run(["cp", "-r", str(cache), str(copy)], check=True)
    for path in copy.rglob("adjit-kernel-*.nbc"):
        path.write_bytes(b"not a pickle")
    out = _run(copy)
    grad, hess_diag = _expected(np.linspace(-1.0, 1.0, 7))
    np.testing.assert_allclose(out["grad"], grad, rtol=1e-12)
    np.testing.assert_allclose(out["hvp"], hess_diag, rtol=1e-12)
    assert any("unreadable disk-cache entry" in w for w in out["warnings"])
    assert "elementwise_update.<locals>.update" in out["compiled"]


def test_kernels_of_different_partials_have_different_digests():
    """Two kernels from the same source line differ by the partial in their closure: the
    digest follows the closure, so neither is ever served the other's code."""
    from adjit.rules.core import FuncPartial
    from adjit.rules.elementwise import elementwise_update

    def sin_partial(x):
        return math.cos(x)

    def cos_partial(x):
        return -math.sin(x)

    for partial in (sin_partial, cos_partial):
        partial.__module__ = "adjit.rules.scalar_math"
    a = elementwise_update(FuncPartial(sin_partial), 1).py_func
    b = elementwise_update(FuncPartial(cos_partial), 1).py_func
    assert a.__code__.co_code == b.__code__.co_code
    assert kernel_digest(a) != kernel_digest(b)
    assert kernel_digest(a) == kernel_digest(a)


def test_a_kernel_holding_a_users_function_is_not_cached():
    """A partial registered by the user (``adjit.extend``) can change without adjit's
    sources changing: a kernel built on it is compiled in each process."""
    def users_partial(x):
        return 2.0 * x

    def kernel(x):
        return users_partial(x)

    kernel.__module__ = "adjit.rules.elementwise"
    with pytest.raises(Uncacheable):
        kernel_digest(kernel)

    class UsersClass:  # known only by its name, which another process may reuse
        pass

    def holds_a_class(x):
        return UsersClass, x

    holds_a_class.__module__ = "adjit.rules.elementwise"
    with pytest.raises(Uncacheable):
        kernel_digest(holds_a_class)


def test_clear_cache_without_a_function_removes_the_kernel_files(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    code = ("import adjit, numpy as np\n"
            "adjit.grad(lambda x: np.sum(np.sin(x) * x))(np.ones(3))\n"
            "print(adjit.clear_cache())")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.split()[-1]) >= 2  # at least one index and one data file
    assert not list(tmp_path.rglob("adjit-kernel-*"))


THIRD = '''
import json, math
import numba, numpy as np
import adjit

def f_sin(x):
    return math.sin(x)

def f_exp(x):
    return math.exp(x)

def f_cos(x):
    return math.cos(x)

out = {}
for name, f in (("sin", f_sin), ("exp", f_exp), ("cos", f_cos)):
    h = adjit.hvp(f)
    second = numba.njit(lambda x: h(x, 1.0))
    out[name] = adjit.jvp(second)(0.3, 1.0)[1]
print(json.dumps(out))
'''


def test_derived_programs_of_different_kernels_never_share_an_entry(tmp_path):
    """Third derivatives go through the JVP of the JVP of each scalar partial. Those
    programs' stubs all have the same code: the key follows the kernel they were
    derived from (a key from the stub gave sin's partial the program of cos's, in the
    same process and in the next)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    want = {"sin": -math.cos(0.3), "exp": math.exp(0.3), "cos": math.sin(0.3)}
    for _ in range(2):  # writing the cache, then reading it
        proc = subprocess.run([sys.executable, "-c", THIRD], capture_output=True,
                              text=True, env=env, timeout=600)
        assert proc.returncode == 0, proc.stderr
        got = json.loads(proc.stdout.strip().splitlines()[-1])
        for name, value in want.items():
            assert got[name] == pytest.approx(value, rel=1e-12), (name, got)


def test_only_signatures_known_by_their_printed_form_are_cached():
    """A function-typed argument prints as its name: two functions of one name would
    share an entry, so a kernel called with one is compiled, not cached."""
    import numba
    from numba.core import types

    from adjit.compile.kernel_cache import static_signature
    matrix = types.Array(types.float64, 2, "C")
    assert static_signature((types.float64, matrix, types.UniTuple(types.intp, 2),
                             types.Omitted(None), types.boolean))
    assert not static_signature((matrix, types.Dispatcher(numba.njit(lambda v: v))))


def test_a_data_file_swapped_with_another_entrys_is_not_loaded(warm, tmp_path):
    """Each data file carries its entry's key: one renamed or copied over another's
    (both valid pickles) is refused with a warning, never loaded as that entry."""
    cache, _ = warm
    copy = tmp_path / "cache"
    subprocess.run(["cp", "-r", str(cache), str(copy)], check=True)
    files = sorted(copy.rglob("adjit-kernel-*.nbc"))
    assert len(files) >= 2
    first, second = files[0].read_bytes(), files[1].read_bytes()
    files[0].write_bytes(second)
    files[1].write_bytes(first)
    out = _run(copy)
    grad, hess_diag = _expected(np.linspace(-1.0, 1.0, 7))
    np.testing.assert_allclose(out["grad"], grad, rtol=1e-12)
    np.testing.assert_allclose(out["hvp"], hess_diag, rtol=1e-12)
    assert any("another entry" in w for w in out["warnings"]), out["warnings"]


KERNEL_OF = '''
import itertools, sys
import numpy as np
from numba.core.bytecode import FunctionIdentity
import adjit

def with_logaddexp(x, b):
    return np.sum(np.logaddexp(x, b))

def with_arctan2(x, b):
    return np.sum(np.arctan2(x, b))

def both(x, b):
    return np.sum(np.logaddexp(x, b)) + np.sum(np.arctan2(x, b))

x = np.array([0.5, -1.0, 2.0])
f = {"log": with_logaddexp, "atan": with_arctan2, "both": both}[sys.argv[1]]
# Numba numbers its compiles per process: both writers number them alike from here
FunctionIdentity._unique_ids = itertools.count(1000)
print(adjit.grad(f)(x, 0.3).tolist())
'''


def test_kernels_written_by_two_processes_keep_their_own_code_in_one_caller(tmp_path):
    """Two processes, each compiling the x-kernel of one function (logaddexp's, then
    arctan2's) as its n-th compile, wrote entries whose code had one symbol name; a
    third process loading both into one gradient kept one kernel for both, silently
    (the logaddexp term's gradient was arctan2's). Kernels are named by content."""
    def run(cache, which):
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
        proc = subprocess.run([sys.executable, "-c", KERNEL_OF, which], capture_output=True,
                              text=True, env=env, timeout=600)
        assert proc.returncode == 0, proc.stderr
        return np.array(json.loads(proc.stdout.strip().splitlines()[-1]))

    first, second = tmp_path / "first", tmp_path / "second"
    run(first, "atan")
    run(second, "log")
    for path in second.rglob("*"):  # the two processes' entries in one directory
        if path.is_file():
            target = first / path.relative_to(second)
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                target.write_bytes(path.read_bytes())
    x = np.array([0.5, -1.0, 2.0])
    expected = 1.0 / (1.0 + np.exp(0.3 - x)) + 0.3 / (x * x + 0.09)
    np.testing.assert_allclose(run(first, "both"), expected, rtol=1e-12)
