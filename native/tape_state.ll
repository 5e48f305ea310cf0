; adjit tape runtime -- STATE module (compiled exactly once per process).
;
; Tape layout (shared with tape_fast.ll; keep the two in sync):
;
;   %adjit.tape = type { ptr top, ptr limit, ptr base }
;     field 0  top    next free 8-byte word slot; depth = (top - base) / 8
;     field 1  limit  one past the last allocated word; capacity = (limit - base) / 8
;     field 2  base   start of the malloc/realloc'ed word buffer
;
;   A record of n scalars occupies n consecutive words.  A push writes them at
;   [top, top + n) and bumps top; a pop moves top back by n and reads them.  The
;   buffer starts at @adjit_tape_initial_words words, doubles when a push does not
;   fit (adjit_tape_grow, realloc) and never shrinks, so after warm-up push/pop
;   performs no heap allocation.
;
; Threading scheme: one tape per OS thread.  llvmlite's JIT cannot allocate
; thread_local globals, so the calling thread's tape is found with
; pthread_getspecific(@adjit_tape_key).  The key is created once, at
; `import adjit.runtime` (adjit_state_init), with adjit_tape_destroy as destructor
; so a tape is freed when its (Python, prange worker, ...) thread exits.  A tape is
; only ever touched by its own thread; the process-wide statistics counters are
; updated with atomic read-modify-write.
;
; Why a separate module: the symbols here (the key, the counters, the slow paths)
; must exist once per process.  The Python loader JIT-compiles this file in its own
; engine and publishes every symbol with llvmlite.binding.add_symbol, so code linked
; from tape_fast.ll (and numba's cached object code) resolves them by name;
; no address is ever baked into generated IR.
;
; pthread_key_t is `unsigned int` (i32) on Linux (glibc and musl).

%adjit.tape = type { ptr, ptr, ptr }

@adjit_tape_key = global i32 0, align 4
@adjit_tape_growths = global i64 0, align 8
@adjit_tape_created = global i64 0, align 8
@adjit_tape_freed = global i64 0, align 8
@adjit_tape_initial_words = constant i64 4096, align 8

declare ptr @malloc(i64) nounwind
declare ptr @realloc(ptr, i64) nounwind
declare void @free(ptr) nounwind
declare i32 @pthread_key_create(ptr, ptr) nounwind
declare ptr @pthread_getspecific(i32) nounwind
declare i32 @pthread_setspecific(i32, ptr) nounwind

; Create the thread-specific key; called once from Python at import. Returns 0 on success.
define i32 @adjit_state_init() nounwind {
entry:
  %rc = call i32 @pthread_key_create(ptr @adjit_tape_key, ptr @adjit_tape_destroy)
  ret i32 %rc
}

; Key destructor: free a tape when its thread exits.
define void @adjit_tape_destroy(ptr %tape) nounwind {
entry:
  %isnull = icmp eq ptr %tape, null
  br i1 %isnull, label %done, label %release

release:
  %basep = getelementptr inbounds %adjit.tape, ptr %tape, i64 0, i32 2
  %base = load ptr, ptr %basep, align 8
  call void @free(ptr %base)
  call void @free(ptr %tape)
  %old = atomicrmw add ptr @adjit_tape_freed, i64 1 monotonic
  br label %done

done:
  ret void
}

; Slow path of tape acquisition: allocate the calling thread's tape and register it
; under the key. Returns null if memory (or the key) is unavailable.
define ptr @adjit_tape_create() noinline cold nounwind {
entry:
  %tape = call ptr @malloc(i64 24)
  %tnull = icmp eq ptr %tape, null
  br i1 %tnull, label %fail, label %alloc_words

alloc_words:
  %words = load i64, ptr @adjit_tape_initial_words, align 8
  %bytes = shl i64 %words, 3
  %base = call ptr @malloc(i64 %bytes)
  %bnull = icmp eq ptr %base, null
  br i1 %bnull, label %fail_tape, label %init

init:
  %limit = getelementptr inbounds i8, ptr %base, i64 %bytes
  store ptr %base, ptr %tape, align 8
  %limitp = getelementptr inbounds %adjit.tape, ptr %tape, i64 0, i32 1
  store ptr %limit, ptr %limitp, align 8
  %basep = getelementptr inbounds %adjit.tape, ptr %tape, i64 0, i32 2
  store ptr %base, ptr %basep, align 8
  %key = load i32, ptr @adjit_tape_key, align 4
  %rc = call i32 @pthread_setspecific(i32 %key, ptr %tape)
  %ok = icmp eq i32 %rc, 0
  br i1 %ok, label %done, label %fail_all

done:
  %old = atomicrmw add ptr @adjit_tape_created, i64 1 monotonic
  ret ptr %tape

fail_all:
  call void @free(ptr %base)
  br label %fail_tape

fail_tape:
  call void @free(ptr %tape)
  br label %fail

fail:
  ret ptr null
}

; Slow path of a push that does not fit: double the capacity until `n` more words fit,
; realloc, reserve the n words (bump top) and return their address.  Returns null
; (tape unchanged) when out of memory.
define ptr @adjit_tape_grow(ptr %tape, i64 %n) noinline cold nounwind {
entry:
  %top = load ptr, ptr %tape, align 8
  %limitp = getelementptr inbounds %adjit.tape, ptr %tape, i64 0, i32 1
  %limit = load ptr, ptr %limitp, align 8
  %basep = getelementptr inbounds %adjit.tape, ptr %tape, i64 0, i32 2
  %base = load ptr, ptr %basep, align 8
  %topi = ptrtoint ptr %top to i64
  %limiti = ptrtoint ptr %limit to i64
  %basei = ptrtoint ptr %base to i64
  %usedb = sub i64 %topi, %basei
  %capb = sub i64 %limiti, %basei
  %depth = lshr i64 %usedb, 3
  %cap = lshr i64 %capb, 3
  %need = add i64 %depth, %n
  ; refuse sizes whose byte count would overflow (also catches a negative n)
  %huge = icmp ugt i64 %need, 1152921504606846975
  br i1 %huge, label %fail, label %start

start:
  %capzero = icmp eq i64 %cap, 0
  %cap0 = select i1 %capzero, i64 1, i64 %cap
  br label %double

double:
  %c = phi i64 [ %cap0, %start ], [ %c2, %double ]
  %c2 = shl i64 %c, 1
  %enough = icmp uge i64 %c2, %need
  br i1 %enough, label %realloc, label %double

realloc:
  %newbytes = shl i64 %c2, 3
  %nb = call ptr @realloc(ptr %base, i64 %newbytes)
  %nbnull = icmp eq ptr %nb, null
  br i1 %nbnull, label %fail, label %commit

commit:
  %newlimit = getelementptr inbounds i8, ptr %nb, i64 %newbytes
  %slot = getelementptr inbounds i64, ptr %nb, i64 %depth
  %newtop = getelementptr inbounds i64, ptr %nb, i64 %need
  store ptr %newtop, ptr %tape, align 8
  store ptr %newlimit, ptr %limitp, align 8
  store ptr %nb, ptr %basep, align 8
  %old = atomicrmw add ptr @adjit_tape_growths, i64 1 monotonic
  ret ptr %slot

fail:
  ret ptr null
}

; Python-side helper: depth in words of the calling thread's tape (0 without a tape).
define i64 @adjit_tape_current_depth() nounwind {
entry:
  %key = load i32, ptr @adjit_tape_key, align 4
  %tape = call ptr @pthread_getspecific(i32 %key)
  %isnull = icmp eq ptr %tape, null
  br i1 %isnull, label %none, label %some

some:
  %top = load ptr, ptr %tape, align 8
  %basep = getelementptr inbounds %adjit.tape, ptr %tape, i64 0, i32 2
  %base = load ptr, ptr %basep, align 8
  %topi = ptrtoint ptr %top to i64
  %basei = ptrtoint ptr %base to i64
  %usedb = sub i64 %topi, %basei
  %depth = lshr i64 %usedb, 3
  ret i64 %depth

none:
  ret i64 0
}

; Python-side helper: drop the calling thread's tape back to `depth` words (error
; recovery after an exception unwound generated code).  Returns 0 on success, -1 if
; `depth` exceeds the current depth or is negative.
define i32 @adjit_tape_truncate_current(i64 %depth) nounwind {
entry:
  %cur = call i64 @adjit_tape_current_depth()
  %bad = icmp ugt i64 %depth, %cur
  br i1 %bad, label %fail, label %check

check:
  %same = icmp eq i64 %depth, %cur
  br i1 %same, label %ok, label %cut

cut:
  %key = load i32, ptr @adjit_tape_key, align 4
  %tape = call ptr @pthread_getspecific(i32 %key)
  %basep = getelementptr inbounds %adjit.tape, ptr %tape, i64 0, i32 2
  %base = load ptr, ptr %basep, align 8
  %newtop = getelementptr inbounds i64, ptr %base, i64 %depth
  store ptr %newtop, ptr %tape, align 8
  br label %ok

ok:
  ret i32 0

fail:
  ret i32 -1
}

; Python-side helper: fill out[0..5] with growths, tapes created, tapes freed,
; capacity and depth (words) of the calling thread's tape, initial capacity.
define void @adjit_runtime_stats(ptr %out) nounwind {
entry:
  %g = load atomic i64, ptr @adjit_tape_growths monotonic, align 8
  store i64 %g, ptr %out, align 8
  %c = load atomic i64, ptr @adjit_tape_created monotonic, align 8
  %o1 = getelementptr inbounds i64, ptr %out, i64 1
  store i64 %c, ptr %o1, align 8
  %f = load atomic i64, ptr @adjit_tape_freed monotonic, align 8
  %o2 = getelementptr inbounds i64, ptr %out, i64 2
  store i64 %f, ptr %o2, align 8
  %key = load i32, ptr @adjit_tape_key, align 4
  %tape = call ptr @pthread_getspecific(i32 %key)
  %isnull = icmp eq ptr %tape, null
  br i1 %isnull, label %none, label %some

some:
  %limitp = getelementptr inbounds %adjit.tape, ptr %tape, i64 0, i32 1
  %limit = load ptr, ptr %limitp, align 8
  %basep = getelementptr inbounds %adjit.tape, ptr %tape, i64 0, i32 2
  %base = load ptr, ptr %basep, align 8
  %limiti = ptrtoint ptr %limit to i64
  %basei = ptrtoint ptr %base to i64
  %capb = sub i64 %limiti, %basei
  %cap = lshr i64 %capb, 3
  %depth = call i64 @adjit_tape_current_depth()
  br label %tail

none:
  br label %tail

tail:
  %capv = phi i64 [ %cap, %some ], [ 0, %none ]
  %depthv = phi i64 [ %depth, %some ], [ 0, %none ]
  %o3 = getelementptr inbounds i64, ptr %out, i64 3
  store i64 %capv, ptr %o3, align 8
  %o4 = getelementptr inbounds i64, ptr %out, i64 4
  store i64 %depthv, ptr %o4, align 8
  %init = load i64, ptr @adjit_tape_initial_words, align 8
  %o5 = getelementptr inbounds i64, ptr %out, i64 5
  store i64 %init, ptr %o5, align 8
  ret void
}
