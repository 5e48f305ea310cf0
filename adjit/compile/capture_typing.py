"""Typing a call without compiling the callee, while adjit only captures typed IR.

``hvp(f)`` types the body of ``grad(f)`` to transform it in forward mode. Numba types a
call of a dispatcher by compiling the callee, but the code that calls it is never
lowered: only its JVP is. So while a capture runs (``typing_only``), adjit's generated
functions and its internal rule kernels (``internal_jit``) are typed from their own
captured typed IR, which the forward transform reads anyway, and compiled only if code
that is really lowered calls them (``get_overload``).
"""
import threading
from contextlib import contextmanager

from numba.core import sigutils, typing
from numba.core.errors import TypingError

#: whether this thread is typing for a capture only, not compiling (``typing_only``)
_typing_state = threading.local()
#: ``[return_type(dispatcher, argtypes)]``, registered by ``capture``: the return type of
#: a callee's typed IR, or None while that IR is being captured (recursion)
_captured_return_type = []


def set_captured_return_type(return_type):
    """Register how a callee is typed without compiling it (``TypedFromCapture``)."""
    _captured_return_type[:] = [return_type]


@contextmanager
def typing_only(active=True):
    """Within this block, calls of adjit's functions are typed from their captured IR
    (``active``), or compiled as Numba does (not ``active``)."""
    before = getattr(_typing_state, "active", False)
    _typing_state.active = active
    try:
        yield
    finally:
        _typing_state.active = before


class TypedFromCapture:
    """Mixin for a Numba dispatcher of adjit's: typed from its captured IR under
    ``typing_only``, compiled when lowered code needs it."""

    def compile(self, sig):
        """Numba's compile, with ``typing_only`` off: the callee's own body is compiled,
        so the functions it calls must be too."""
        with typing_only(False):
            return super().compile(sig)

    def get_call_template(self, args, kws):
        """Numba's call template, but under ``typing_only`` the callee is typed, not
        compiled (see the module)."""
        if not getattr(_typing_state, "active", False) or not _captured_return_type:
            return super().get_call_template(args, kws)
        pysig, args = self._compiler.fold_argument_types(args, kws)
        return_type = _captured_return_type[0](self, tuple(args))
        if return_type is None:  # already being captured: a recursive call
            return_type = _partial_return_type(self.py_func, tuple(args))
        template = typing.make_concrete_template(
            f"CallTemplate({self.py_func.__name__})", key=self.py_func.__name__,
            signatures=[return_type(*args)])
        return template, pysig, args, {}

    def get_overload(self, sig):
        """The compiled overload; compiled now if it was only typed (``typing_only``)
        and code that is being lowered calls it."""
        args, _ = sigutils.normalize_signature(sig)
        if tuple(args) not in self.overloads:
            self.compile(tuple(args))
        return super().get_overload(sig)


def _partial_return_type(py_func, args):
    """The return type of a recursive call met while its own capture is typed: the
    return statements typed so far, as Numba's type inference resolves a recursive call
    (compiling the callee here instead would re-enter the typing of the same signature).
    Within that partial typing the recursive call itself stays untyped."""
    from numba.core.registry import cpu_target
    key = (py_func, args)
    partial = _typing_state.__dict__.setdefault("partial", set())
    frame = cpu_target.typing_context.callstack.match(py_func, args)
    return_type = None
    if frame is not None and key not in partial:
        partial.add(key)
        try:
            return_type = frame.typeinfer.return_types_from_partial()
        finally:
            partial.discard(key)
            # the recursive call failed within the partial typing only: Numba's cache
            # of failed resolutions would replay that failure for the real call
            getattr(cpu_target.typing_context.callstack, "_fail_cache", {}).clear()
    if return_type is None:
        raise TypingError(f"cannot type the recursive call of {py_func.__name__}: no "
                          "return statement of it is typed before the call")
    frame.add_return_type(return_type)
    return return_type
