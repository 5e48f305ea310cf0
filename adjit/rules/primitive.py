"""The one registry of primitives: every rule adjit knows about a called object.

A ``Primitive`` is one rule, registered through the helper of its rule shape
(``defderiv``, ``nondiff``, ``deflinear``, ``defelementwise``/``defarrayvjp`` for
reductions, ``defview``/``deflinear_array``/``defbilinear``/``defnonlinear`` for
array-valued calls, ``defkernel``, the NumPy allocations and the composites). Each
primitive answers the same four questions, whichever mode asks:

1. ``matches(argtypes, result_type)``: does it cover a call with these types?
2. ``effects()``: is it pure, does it allocate its result, which arguments does it write?
3. ``reverse``: the helpers reverse mode's handler for ``kind`` emits calls to;
4. ``forward``: the helpers forward mode's handler for ``kind`` emits calls to.

``kind`` names the handler: ``classify_call`` (``rules/classify.py``) answers it for
both modes, and each mode maps every kind to exactly one handler, so forward and reverse
mode cannot disagree about a call.

A called object may have one primitive per *family* (``np.sum`` is a scalar reduction of
a whole array and a linear map for ``np.sum(x, axis)``); registering a primitive replaces
the one of its family for that key (``nondiff`` after ``defderiv`` is a redefinition).
"""
from dataclasses import dataclass

from ..compile.caches import (invalidate_if_consulted, note_consulted,
                              record_user_registration)


@dataclass(frozen=True)
class Effects:
    """What a call does besides computing its result."""

    allocates: bool = False  # its result is a new array, whatever its arguments hold
    writes: tuple = ()       # positions of the arguments it writes into

    @property
    def pure(self):
        """Whether dead-code removal may drop the call when its result is unread."""
        return not self.writes


PURE = Effects()
ALLOCATES = Effects(allocates=True)


class Primitive:
    """One rule. Subclasses set ``family`` and ``kind`` and answer the four questions."""

    family = "primitive"   # the registry slot it occupies for a key
    kind = "unsupported"   # the ``classify_call`` kind whose handler emits it
    # (every primitive also has a ``name``: the call as users write it)

    def matches(self, argtypes, result_type):
        """Whether this rule covers a call with these argument and result types."""
        return True

    def effects(self):
        """What the call does besides computing its result (default: pure)."""
        return PURE

    @property
    def reverse(self):
        """The helpers the reverse handler of ``kind`` emits calls to."""
        return ()

    @property
    def forward(self):
        """The helpers the forward handler of ``kind`` emits calls to."""
        return ()


class PrimitiveRegistry:
    """Primitives keyed by the called object (or a method's typing key), one per family.

    Lookups are remembered (``note_consulted``), so registering a rule for a key some
    derivation already asked about invalidates what was built from the old answer.
    Unhashable keys (a callee Numba could not name) have no rules."""

    def __init__(self):
        self._slots = {}

    def register(self, keys, primitive):
        """Make ``primitive`` the rule of its family for every key in ``keys``."""
        keys = list(keys)
        invalidate_if_consulted(keys)
        record_user_registration(keys, primitive)
        for key in keys:
            self._slots.setdefault(key, {})[primitive.family] = primitive
        return primitive

    def get(self, key, family):
        """The primitive of ``family`` registered for ``key``, or None."""
        note_consulted(key)
        try:
            slot = self._slots.get(key)
        except TypeError:
            return None
        return slot.get(family) if slot else None

    def remove(self, key, family):
        """Drop the primitive of ``family`` for ``key`` (tests, redefinitions)."""
        try:
            return self._slots.get(key, {}).pop(family, None)
        except TypeError:
            return None

    def keys(self, family=None):
        """Every key with a primitive (of ``family``, when given)."""
        return [k for k, slot in self._slots.items() if family is None or family in slot]

    def primitives(self, family):
        """Every distinct primitive of ``family``, in registration order."""
        seen = []
        for slot in self._slots.values():
            p = slot.get(family)
            if p is not None and not any(p is q for q in seen):
                seen.append(p)
        return seen


#: the registry: every rule file registers into it through its rule-shape helpers
PRIMITIVES = PrimitiveRegistry()
