"""adjit's LLVM options (``compile/llvm_options.py``) hold while adjit compiles a
derivative, nested compiles included, and are LLVM's defaults again afterwards."""
import numpy as np

import adjit
from adjit.compile import llvm_options


def _record_set_option(monkeypatch):
    calls = []
    monkeypatch.setattr(llvm_options.ll, "set_option",
                        lambda name, option: calls.append(option))
    return calls


def test_options_are_set_once_and_restored_after_the_outermost_block(monkeypatch):
    calls = _record_set_option(monkeypatch)
    with llvm_options.adjit_codegen_options():
        assert calls == ["-cgpp-huge-func=0"]
        with llvm_options.adjit_codegen_options():
            pass
        assert calls == ["-cgpp-huge-func=0"]  # the nested block kept them
    assert calls == ["-cgpp-huge-func=0", "-cgpp-huge-func=10000"]
    assert llvm_options._depth == 0


def test_options_are_restored_when_a_compile_raises(monkeypatch):
    calls = _record_set_option(monkeypatch)
    try:
        with llvm_options.adjit_codegen_options():
            raise RuntimeError("a compile failed")
    except RuntimeError:
        pass
    assert calls[-1] == "-cgpp-huge-func=10000" and llvm_options._depth == 0


def test_a_first_gradient_compiles_under_the_options(monkeypatch):
    calls = _record_set_option(monkeypatch)

    def straight_line(x):
        y = x[0] * x[1]
        y = y * x[1]
        y = y * x[1]
        return y * x[0]

    x = np.array([1.5, -0.5])
    g = adjit.grad(straight_line)(x)
    a, b = x
    np.testing.assert_allclose(g, [2 * a * b ** 3, 3 * a * a * b ** 2], rtol=1e-12)
    assert calls and calls[0] == "-cgpp-huge-func=0"
    assert calls[-1] == "-cgpp-huge-func=10000"
