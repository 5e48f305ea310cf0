"""The README's list of NumPy functions with rules is the one the registry generates."""
import pathlib

from adjit.rules.listing import numpy_functions

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_readme_lists_the_registered_numpy_functions():
    names = numpy_functions()
    header = f"{len(names)} NumPy functions and array methods have rules:"
    lines = README.read_text().splitlines()
    assert header in lines, "regenerate with: python -m adjit.rules.listing"
    listed = lines[lines.index(header) + 1]
    assert listed == ", ".join(f"`{n}`" for n in names)


def test_listing_names_functions_as_users_write_them():
    names = numpy_functions()
    for expected in ("np.sin", "np.linalg.cholesky", "np.concatenate", "np.kron", "x.sum",
                     "np.zeros", "np.argsort", "np.where"):
        assert expected in names
    assert not any(n.startswith(("math.", "operator.")) for n in names)
