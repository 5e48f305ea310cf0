"""``compile/lowering_memo.py`` answers Numba's "does this implementation take loc?"
as Numba does, once per implementation."""
from numba.core import base

from adjit.compile import lowering_memo


def test_the_patched_question_gives_numbas_answers_and_remembers_them():
    def with_loc(context, builder, sig, args, loc=None):
        return None

    def without_loc(context, builder, sig, args):
        return None

    assert base._has_loc is lowering_memo._remembered_has_loc
    assert base._has_loc(with_loc) is True and base._has_loc(without_loc) is False
    assert lowering_memo._answers[with_loc] is True
    assert lowering_memo._answers[without_loc] is False
    assert base._has_loc(with_loc) is True  # from memory, same answer


def test_an_implementation_without_weak_references_is_still_answered():
    class Slotted:
        __slots__ = ()

        def __call__(self, context, builder, sig, args, loc=None):
            return None

    impl = Slotted()
    assert base._has_loc(impl) is True
    assert impl not in list(lowering_memo._answers.keys())
