"""Shrinking a failing program: delete lines, blocks and return terms while it still fails
the same way (``python -m adjit.fuzz --seed S --only I --shrink MODE``).

It works on source lines, so its result is a starting point for a hand-made reproducer,
not a minimal one: it never rewrites expressions.
"""
import ast
import json
import re
import tempfile
from dataclasses import replace

from .programs import Program
from .check import check_program


def signature(outcome):
    """What must stay the same while shrinking: status and message (or kind of mismatch)."""
    if outcome.status == "wrong":
        return ("wrong", outcome.detail.split(":", 1)[-1].strip())
    return (outcome.status, outcome.message)


def _valid(lines):
    """True when the lines parse as Python."""
    try:
        ast.parse("\n".join(lines))
        return True
    except SyntaxError:
        return False


def _indent_of(line):
    """Leading spaces of a line."""
    return len(line) - len(line.lstrip(" "))


def _block_end(lines, i):
    """Index after the block that starts at line ``i`` (its header and indented body)."""
    j = i + 1
    while j < len(lines) and (not lines[j].strip() or _indent_of(lines[j]) > _indent_of(lines[i])):
        j += 1
    return j


def _at(lines, i):
    """Smaller variants of ``lines`` that change line ``i``: drop its block, the line, or
    one term of a ``return a + b + ...``; ``pass`` stands in where a body would be empty."""
    ln, s, out = lines[i], lines[i].strip(), []
    if not s or s.startswith(("import", "@", "def ")) or s == "pass":
        return out
    pad = " " * _indent_of(ln)
    if s.endswith(":"):
        end = _block_end(lines, i)
        out += [lines[:i] + lines[end:], lines[:i] + [pad + "pass"] + lines[end:]]
    out += [lines[:i] + lines[i + 1:], lines[:i] + [pad + "pass"] + lines[i + 1:]]
    m = re.match(r"(\s*return )(.*)$", ln)
    if m and " + " in m.group(2):
        terms = m.group(2).split(" + ")
        for k in range(len(terms)):
            out.append(lines[:i] + [m.group(1) + " + ".join(terms[:k] + terms[k + 1:])]
                       + lines[i + 1:])
    return [c for c in out if _valid(c)]


def _without_helpers(lines):
    """Variants with one helper function (not ``f``) removed."""
    out = []
    for i, ln in enumerate(lines):
        if ln.startswith("def ") and not ln.startswith("def f("):
            start = i - 1 if i and lines[i - 1].startswith("@") else i
            out.append(lines[:start] + lines[_block_end(lines, i):])
    return out


def program_from_record(rec):
    """The Program of a JSON record (``--jsonl``), with its arguments rebuilt."""
    import numpy as np
    args = eval(f"dict({rec['args']})", {"np": np})          # our own exact repr
    return Program(rec["seed"], rec["index"], rec["kind"], rec["source"], list(args),
                   tuple(args.values()))


def find_record(path, seed, index):
    """The record of program ``index`` of run ``seed`` in a ``--jsonl`` file."""
    with open(path) as fh:
        for line in fh:
            rec = json.loads(line)
            if rec["seed"] == seed and rec["index"] == index:
                return rec
    raise SystemExit(f"no record of seed {seed} program {index} in {path}")


def shrink(program, mode, log=print, passes=3):
    """A smaller source that still fails ``mode`` like ``program`` does."""
    modes = ("grad", mode) if mode == "hvp" else (mode,)
    directory = tempfile.mkdtemp(prefix="adjit-fuzz-shrink-")

    def fails(lines):
        """True when the variant fails the same way (loaded under a fresh module name)."""
        variant = replace(program, source="\n".join(lines) + "\n")
        return signature(check_program(variant, directory, modes)[mode]) == target

    target = signature(check_program(program, directory, modes)[mode])
    log(f"target: {target}")
    lines = [ln.rstrip() for ln in program.source.splitlines()]
    if target[0] in ("ok", "nondifferentiable", "invalid"):
        return "\n".join(lines) + "\n"
    changed = True
    while changed:
        changed = False
        for cand in _without_helpers(lines):
            if fails(cand):
                lines, changed = cand, True
                break
    for _ in range(passes):
        before, i = len(lines), 0
        while i < len(lines):
            for cand in _at(lines, i):
                if fails(cand):
                    log(f"  {len(lines)} -> {len(cand)} lines")
                    lines = cand
                    break
            else:
                i += 1
        if len(lines) == before:
            break
    return "\n".join(lines) + "\n"
