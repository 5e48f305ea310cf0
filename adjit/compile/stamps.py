"""What every on-disk cache entry of adjit depends on beyond its own function."""
import functools
import hashlib
import pathlib
import sys

import numpy as np


@functools.lru_cache(maxsize=1)
def environment_stamp():
    """Hash of adjit's own sources and runtime, and the versions of what compiles it: a
    changed rule or pass invalidates every cached derivative."""
    import llvmlite
    import numba
    root = pathlib.Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")) + sorted(root.parent.glob("native/*.ll")):
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
