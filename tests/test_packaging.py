"""Every adjit package is listed in pyproject.toml, so a non-editable install has it all."""
import pathlib
import tomllib

ROOT = pathlib.Path(__file__).parent.parent


def test_every_package_is_declared():
    declared = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                   ["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for p in (ROOT / "adjit").rglob("__init__.py")}
    assert found <= declared, sorted(found - declared)
    assert {"adjit.native", "adjit.suite"} <= declared
