; adjit tape runtime -- FAST PATH module (linked into, and inlined by, generated code).
;
; Tape layout (owned by tape_state.ll; keep the two in sync):
;
;   %adjit.tape = type { ptr top, ptr limit, ptr base }
;     field 0  top    next free 8-byte word slot; depth = (top - base) / 8
;     field 1  limit  one past the last allocated word; capacity = (limit - base) / 8
;     field 2  base   start of the word buffer
;
;   Every scalar of a record is stored in one 8-byte word (floats bit-cast, narrow
;   integers and booleans zero-extended); a record of n words costs one capacity check.
;
; Threading scheme: one tape per OS thread, found with pthread_getspecific on the key
; @adjit_tape_key created at import.  A thread without a tape gets one from
; adjit_tape_create.  Only the owning thread ever touches a tape, so no atomics here.
;
; Linking: the Python loader adds this module to a numba CodeLibrary and every
; intrinsic links that library into the function being compiled.  numba re-marks these
; external definitions linkonce_odr in each user, LLVM inlines them (alwaysinline) and
; drops the copies.  Everything defined once per process (the key, the counters, the
; slow paths below) lives in tape_state.ll and is resolved by symbol name
; (llvmlite add_symbol), never by a baked-in address.
;
; TBAA: tape header fields and tape words get distinct type tags, so LLVM knows a word
; store never clobbers `top`/`limit` and can keep them in registers inside loops.

%adjit.tape = type { ptr, ptr, ptr }

@adjit_tape_key = external global i32, align 4

declare ptr @pthread_getspecific(i32) nounwind willreturn memory(inaccessiblemem: read)
declare ptr @adjit_tape_create() nounwind cold
declare ptr @adjit_tape_grow(ptr, i64) nounwind cold

; The calling thread's tape, created on first use (null only if out of memory).
define ptr @adjit_tape_acquire() alwaysinline nounwind {
entry:
  %key = load i32, ptr @adjit_tape_key, align 4, !invariant.load !0
  %tape = call ptr @pthread_getspecific(i32 %key)
  %isnull = icmp eq ptr %tape, null
  br i1 %isnull, label %create, label %done, !prof !1

create:
  %new = call ptr @adjit_tape_create()
  br label %done

done:
  %res = phi ptr [ %tape, %entry ], [ %new, %create ]
  ret ptr %res
}

; Reserve n words with a single capacity check; returns their address (null only if
; growing failed).  The caller writes the words with adjit_tape_put.
define ptr @adjit_tape_reserve(ptr %tape, i64 %n) alwaysinline nounwind {
entry:
  %top = load ptr, ptr %tape, align 8, !tbaa !10, !nonnull !0
  %limitp = getelementptr inbounds %adjit.tape, ptr %tape, i64 0, i32 1
  %limit = load ptr, ptr %limitp, align 8, !tbaa !11
  %topi = ptrtoint ptr %top to i64
  %limiti = ptrtoint ptr %limit to i64
  %room = sub i64 %limiti, %topi
  %bytes = shl i64 %n, 3
  %fits = icmp ule i64 %bytes, %room
  br i1 %fits, label %fast, label %slow, !prof !2

fast:
  %newtop = getelementptr inbounds i8, ptr %top, i64 %bytes
  store ptr %newtop, ptr %tape, align 8, !tbaa !10
  ret ptr %top

slow:
  %grown = call ptr @adjit_tape_grow(ptr %tape, i64 %n)
  ret ptr %grown
}

; Release the last n words (pop); returns their address for adjit_tape_get.
define ptr @adjit_tape_release(ptr %tape, i64 %n) alwaysinline nounwind {
entry:
  %top = load ptr, ptr %tape, align 8, !tbaa !10, !nonnull !0
  %neg = sub i64 0, %n
  %newtop = getelementptr inbounds i64, ptr %top, i64 %neg
  store ptr %newtop, ptr %tape, align 8, !tbaa !10
  ret ptr %newtop
}

; Write word i of a reserved record.
define void @adjit_tape_put(ptr %slot, i64 %i, i64 %word) alwaysinline nounwind {
entry:
  %p = getelementptr inbounds i64, ptr %slot, i64 %i
  store i64 %word, ptr %p, align 8, !tbaa !12
  ret void
}

; Read word i of a released record.
define i64 @adjit_tape_get(ptr %slot, i64 %i) alwaysinline nounwind {
entry:
  %p = getelementptr inbounds i64, ptr %slot, i64 %i
  %word = load i64, ptr %p, align 8, !tbaa !12
  ret i64 %word
}

; Number of words currently on the tape.
define i64 @adjit_tape_depth(ptr %tape) alwaysinline nounwind {
entry:
  %top = load ptr, ptr %tape, align 8, !tbaa !10
  %basep = getelementptr inbounds %adjit.tape, ptr %tape, i64 0, i32 2
  %base = load ptr, ptr %basep, align 8, !tbaa !13
  %topi = ptrtoint ptr %top to i64
  %basei = ptrtoint ptr %base to i64
  %used = sub i64 %topi, %basei
  %depth = lshr i64 %used, 3
  ret i64 %depth
}

; Drop the tape back to `depth` words (<= current depth): discard records on unwind.
define void @adjit_tape_set_depth(ptr %tape, i64 %depth) alwaysinline nounwind {
entry:
  %basep = getelementptr inbounds %adjit.tape, ptr %tape, i64 0, i32 2
  %base = load ptr, ptr %basep, align 8, !tbaa !13
  %newtop = getelementptr inbounds i64, ptr %base, i64 %depth
  store ptr %newtop, ptr %tape, align 8, !tbaa !10
  ret void
}

!0 = !{}
!1 = !{!"branch_weights", i32 1, i32 2000}
!2 = !{!"branch_weights", i32 2000, i32 1}
; TBAA: root, scalar type nodes, access tags
!3 = !{!"adjit tape tbaa"}
!4 = !{!"adjit tape header ptr", !3, i64 0}
!5 = !{!"adjit tape word", !3, i64 0}
!6 = !{!"adjit.tape", !4, i64 0, !4, i64 8, !4, i64 16}
!10 = !{!6, !4, i64 0}
!11 = !{!6, !4, i64 8}
!12 = !{!5, !5, i64 0}
!13 = !{!6, !4, i64 16}
