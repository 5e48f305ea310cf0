"""The rule-author API: everything needed to teach adjit about a function, in one place.

Escalation order, from least to most work:

1. **Let adjit derive the rule.** Do nothing: a ``@numba.njit`` function called from
   differentiated code gets a derived rule (its own forward/reverse programs), built once per
   signature and shared by every call site.
2. **Mark it non-differentiable** with ``nondiff(f)``: its result carries no derivative
   (think ``np.sign``, a random draw, an integer-valued helper).
3. **Write a one-line rule** with ``defderiv(f, *partials)``: one partial derivative per
   positional argument, each a small function of the primal arguments (optionally led by
   ``ans``, the primal result), or ``ONE`` / ``MINUS_ONE`` / ``ZERO`` / ``arg(k)``::

       defderiv(my_softplus, lambda x: 1.0 / (1.0 + math.exp(-x)))
       defderiv(my_hypot, lambda ans, x, y: x / ans, lambda ans, x, y: y / ans)

   The same partials serve reverse mode (``a_k_bar += g * d_k``) and forward mode
   (``dy = sum_k d_k * da_k``), so one line gives both. Partials are compiled with
   ``numba.njit`` and inlined by LLVM; only the arguments a partial reads are saved on the
   tape.
4. **Write a full rule**: give the function a body adjit can differentiate, calling
   primitives that have rules, and keep it ``@njit`` (step 1); or give it a hand-written
   forward and backward pass, as ``jax.custom_vjp`` does: ``@custom_vjp`` on the
   function, then ``f.defvjp(fwd, bwd)`` (``rules/custom_vjp.py``; functions returning a
   float, of float or float-array arguments).

``deflinear(f, *positions)`` declares a helper linear in some arguments (its tangent is the
same call on their tangents), for helpers that index or add into arrays.

Functions that return arrays take the array rule shapes of ``adjit/rules/registry.py``,
the same helpers adjit's own NumPy rules use (both modes ask the same registry):

- ``defview([f])``: ``f(a, ...)`` returns a view of ``a``; shadows and tangents are the
  same view of ``a``'s.
- ``deflinear_array([f], transpose)``: ``f`` is linear in its first argument;
  ``transpose(g, shadow)`` adds the adjoint ``g`` of the result into ``a``'s shadow
  (forward mode applies ``f`` to the tangent).
- ``defbilinear([f], vjp_a, vjp_b)``: ``f(a, b)`` is bilinear; ``vjp_a(g, b, shadow_a)``
  and ``vjp_b(g, a, shadow_b)`` add the transposed products.
- ``defnonlinear([f], vjps, jvps)``: any differentiable ``f`` of its leading array
  arguments; ``vjps[k](g, ans, *args, shadow_k)`` adds argument k's adjoint and
  ``jvps[k](ans, *args, da_k)`` returns its tangent term (``np.linalg.cholesky``).
- ``defkernel([f], kernel)``: ``f`` acts elementwise by the scalar ``@njit`` ``kernel``
  (``np.where``, ``np.clip``); adjit loops over the kernel and derives it.

Functions from arrays to a float (reductions) take the shapes of ``adjit/rules/arrays.py``:

- ``defelementwise([f], *partials)``: ``f(a[, b])`` whose derivative with respect to each
  element depends on that element only: ``partial(g, ans, n, a_i[, b_i])``, linear in
  the adjoint ``g`` (``ans`` is the result, ``n`` the size): ``np.sum`` is
  ``lambda g, ans, n, a: g``.
- ``defarrayvjp([f], updates, tangents)``: whole functions, one per argument:
  ``update(g, ans, *args, shadow)`` adds the adjoint into the shadow and
  ``tangent(ans, *args, da) -> float`` gives forward mode's term.

Every shape registers a ``Primitive`` in the one registry (``adjit/rules/primitive.py``),
which reverse mode, forward mode and forward-over-reverse all ask through the same
classifier; registering replaces the earlier rule of the same shape family for ``f``.

Check every rule with ``adjit.testing.check_grad``, ``check_jvp`` and ``check_hvp`` on its
own domain. ``defderiv`` rules apply to scalar primitives; a call with array arguments
needs a derived rule, an array rule, or raises ``UnsupportedError``.
"""
from .rules.core import (MINUS_ONE, ONE, ZERO, arg, defderiv, defderivs, deflinear, lookup,
                         nondiff)
from .rules.arrays import defarrayvjp, defelementwise
from .rules.registry import defbilinear, defkernel, deflinear_array, defnonlinear, defview
from .rules.custom_vjp import custom_vjp, defvjp

__all__ = ["defderiv", "defderivs", "deflinear", "nondiff", "lookup", "ONE", "MINUS_ONE",
           "ZERO", "arg", "defview", "deflinear_array", "defbilinear", "defnonlinear",
           "defkernel", "defelementwise", "defarrayvjp", "custom_vjp", "defvjp"]
