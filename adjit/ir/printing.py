"""Render Numba IR with the source line each statement comes from.

Used by ``adjit.show`` and by the ``ADJIT_DUMP_IR`` switch.
"""
from numba.core import ir


def format_blocks(blocks, title=""):
    """Text of ``blocks`` (label -> ir.Block), one statement a line, each tagged ``# line N``."""
    out = [f"---- {title} ----"] if title else []
    for label in sorted(blocks):
        out.append(f"label {label}:")
        for stmt in blocks[label].body:
            line = getattr(getattr(stmt, "loc", None), "line", None)
            text = str(stmt)
            tag = f"  # line {line}" if line is not None else ""
            out.append(f"    {text:<60}{tag}")
    return "\n".join(out)


def format_function(func_ir, title=""):
    return format_blocks(func_ir.blocks, title)


def dump(blocks, title):
    """Print the blocks: the body of the ``ADJIT_DUMP_IR`` switch."""
    print(format_blocks(blocks, title), flush=True)


def is_terminator(stmt):
    return isinstance(stmt, (ir.Jump, ir.Branch, ir.Return, ir.Raise, ir.StaticRaise,
                             ir.DynamicRaise, ir.TryRaise, ir.StaticTryRaise,
                             ir.DynamicTryRaise))
