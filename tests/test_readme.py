"""The README is true: every ```python block in it runs as written (in order, each in a
fresh namespace), and the first one's results are the numbers it claims."""
import math
import pathlib
import re

import numpy as np

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_has_python_blocks():
    assert len(BLOCKS) >= 2


def test_every_python_block_runs(capsys):
    spaces = []
    for block in BLOCKS:
        space = {"__name__": "readme"}
        exec(compile(block, str(README), "exec"), space)
        spaces.append(space)
    first = spaces[0]
    x, y = first["x"], first["y"]
    gx, gy = first["adjit"].grad(first["f"], argnums=(0, 1))(x, y)
    assert math.isclose(gx, math.cos(x) * y + 2 * x * y, rel_tol=1e-12)
    assert math.isclose(gy, math.sin(x) + x * x, rel_tol=1e-12)
    assert np.shape(spaces[1]["g"]) == (8,)


def test_adjit_testing_is_reachable_after_a_plain_import():
    """The README's snippets call ``adjit.testing.check_grad`` after ``import adjit``
    only (they passed here because another test had imported the submodule)."""
    import subprocess
    import sys
    code = "import adjit; print(adjit.testing.check_grad.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "check_grad"
