"""Matrix products producing arrays in reverse mode: ``C = A @ B``, ``np.dot(A, B)`` with
``A`` a 2-D float array and ``B`` a 2-D or 1-D one, and ``np.kron(A, B)`` with both 1-D or
both 2-D.

Like an elementwise result (``elementwise.py``), ``C`` is a new array with a zeroed shadow
``C%shadow``; when the reverse pass needs its values it recomputes the product from
readable ``A`` and ``B``. The reverse adds ``C%shadow @ B.T`` into ``A``'s shadow and
``A.T @ C%shadow`` into ``B``'s, or the Kronecker contractions (``rules/matmul.py``).
"""
from ...rules.matmul import lookup_product
from ...rules.classify import matmul_parts


def rev_matmul(ctx, stmt, e):
    """fwd: ``C = A @ B`` or ``kron(A, B)`` (a new array) / rev: ``A%shadow +=
    C%shadow @ B.T``, ``B%shadow += A.T @ C%shadow`` (or the Kronecker contractions)."""
    prim, (a, b) = matmul_parts(ctx.fn, stmt.value)
    into_a, into_b = lookup_product(prim).reverse
    target = stmt.target
    for v in (a, b):
        if v.name in ctx.act.carriers and not ctx.is_active(v):
            raise ctx.unsupported(f"a matrix product of {ctx.typeof(v.name)}", stmt.loc)
    if not ctx.active_array(target):
        if ctx.is_active(a) or ctx.is_active(b):
            raise ctx.unsupported("a matrix product with an inactive result", stmt.loc)
        return
    g = ctx.shadow_of(target, stmt.loc, e)
    if ctx.active_array(a):
        e.call(into_a, [g, b, ctx.shadow_of(a, stmt.loc, e)], hint="void")
    if ctx.active_array(b):
        e.call(into_b, [g, a, ctx.shadow_of(b, stmt.loc, e)], hint="void")

