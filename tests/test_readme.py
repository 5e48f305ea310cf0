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
    import adjit.testing  # noqa: F401  (the blocks use adjit.testing)
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
