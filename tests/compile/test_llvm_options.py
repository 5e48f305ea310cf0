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


def _module_with_blocks(n):
    """An LLVM module holding one function of ``n`` basic blocks in a chain."""
    import llvmlite.binding as ll
    body = "\n".join(f"b{i}:\n  br label %b{i + 1}" for i in range(n - 1))
    return ll.parse_assembly(f"define void @f() {{\n{body}\nb{n - 1}:\n  ret void\n}}\n"
                             "declare void @g()\n")


def test_machine_sinking_is_kept_for_a_module_of_few_blocks(monkeypatch):
    calls = _record_set_option(monkeypatch)
    module = _module_with_blocks(5)
    assert llvm_options.most_blocks(module) == 5
    with llvm_options.machine_sinking_for(module):
        assert calls == []
    assert calls == []


def test_machine_sinking_is_off_for_a_very_branchy_module_and_on_again_after(monkeypatch):
    calls = _record_set_option(monkeypatch)
    module = _module_with_blocks(llvm_options.SINKING_BLOCK_LIMIT + 1)
    try:
        with llvm_options.machine_sinking_for(module):
            assert calls == ["-disable-machine-sink=1"]
            raise RuntimeError("code generation failed")
    except RuntimeError:
        pass
    assert calls == ["-disable-machine-sink=1", "-disable-machine-sink=0"]


def test_a_branchy_hvp_is_generated_without_machine_sinking_and_is_right(monkeypatch):
    """An hvp of straight-line code (its products in branch form) over the limit,
    lowered here so that a small function crosses it, against the closed form."""
    calls = _record_set_option(monkeypatch)
    monkeypatch.setattr(llvm_options, "SINKING_BLOCK_LIMIT", 4)

    def cube_chain(x):
        y = x[0] * x[1]
        y = y * x[1]
        y = y * x[0]
        return y * x[1]  # x0^2 x1^3

    x, v = np.array([1.5, -0.5]), np.array([0.3, 0.7])
    a, b = x
    hessian = np.array([[2 * b ** 3, 6 * a * b ** 2], [6 * a * b ** 2, 6 * a * a * b]])
    np.testing.assert_allclose(adjit.hvp(cube_chain)(x, v), hessian @ v, rtol=1e-12)
    assert "-disable-machine-sink=1" in calls and calls[-1] != "-disable-machine-sink=1"
