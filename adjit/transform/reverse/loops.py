"""Loops whose reverse pass needs no block-stack traffic.

For a loop entered only from a preheader ``P``, closed by one latch ``L`` that jumps
straight back to the header ``H``, and left only from ``H`` to an exit block ``X`` that has
no other predecessor, the path through ``H`` is fully described by the trip count. The
forward pass counts latch traversals in ``H%trips`` (``0`` at the end of P, ``+1`` at the
end of L) and saves the count once, in X's record. Reversed, ``H`` goes back to ``L`` while
the count is positive (decrementing it) and to ``P`` when it reaches 0. This replaces one
block-id push and pop per iteration with a register decrement.
"""
from dataclasses import dataclass

from numba.core.analysis import compute_cfg_from_blocks


@dataclass(frozen=True)
class CountedLoop:
    header: int
    preheader: int
    latch: int
    exit: int

    @property
    def counter(self):
        return f"{self.header}%trips"


def counted_loops(blocks, cfg):
    """Map header label -> CountedLoop for every loop of the simple shape above."""
    out = {}
    for loop in compute_cfg_from_blocks(blocks).loops().values():
        h = loop.header
        preds = cfg.preds[h]
        inside = [p for p in preds if p in loop.body]
        outside = [p for p in preds if p not in loop.body]
        exits = list(loop.exits)
        if len(inside) != 1 or len(outside) != 1 or len(preds) != 2 or len(exits) != 1:
            continue
        latch, pre, x = inside[0], outside[0], exits[0]
        leaving = [b for b in loop.body if x in cfg.succs[b]]
        if cfg.succs[latch] != [h] or cfg.preds[x] != [h] or leaving != [h]:
            continue
        out[h] = CountedLoop(h, pre, latch, x)
    return out
