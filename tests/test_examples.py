"""Every script in examples/ runs to completion (they assert their own results)."""
import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(script):
    env = dict(os.environ, ADJIT_CHECKS="1", NUMBA_OPT="3")  # as users run them
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
