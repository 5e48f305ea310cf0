"""What every on-disk cache entry of adjit depends on beyond its own function."""
import functools
import hashlib
import os
import pathlib
import sys

import numpy as np


def _sources(root):
    """adjit's ``.py`` files, without walking ``__pycache__``: the rule kernels cached
    there (thousands of files after a while) made every process's stamp slower, 10 to
    35 ms of a cached first gradient."""
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if d != "__pycache__"]
        yield from (pathlib.Path(directory, f) for f in files if f.endswith(".py"))


@functools.lru_cache(maxsize=1)
def environment_stamp():
    """Hash of adjit's own sources and runtime, and the versions of what compiles it: a
    changed rule or pass invalidates every cached derivative."""
    import llvmlite
    import numba
    root = pathlib.Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(_sources(root)) + sorted(root.parent.glob("native/*.ll")):
        h.update(str(path.relative_to(root.parent)).encode())
        h.update(path.read_bytes())
    try:
        from importlib import resources
        for entry in sorted(resources.files("adjit.native").iterdir(), key=str):
            if str(entry).endswith(".ll"):
                h.update(entry.read_bytes())
    except Exception:  # a checkout without the package data installed
        pass
    for version in (numba.__version__, llvmlite.__version__, np.__version__, sys.version):
        h.update(version.encode())
    return h.hexdigest()
