"""Workloads: the built-in suite (``adjit.suite``) and user functions given on the command line."""
import importlib
import importlib.util
import inspect
import os
import pkgutil
import re
import sys
from dataclasses import dataclass, field
from typing import Callable, Optional

from .specs import SpecError, order_specs

SUITE_PACKAGE = "adjit.suite"


@dataclass
class Workload:
    """One benchmark: a primal, how to build its inputs, and what to differentiate."""

    name: str
    primal: Callable
    make_inputs: Callable
    argnums: object = 0
    hand_grad: Optional[Callable] = None
    reference: dict = field(default_factory=dict)
    origin: str = ""

    @property
    def argnums_tuple(self):
        """ARGNUMS as a tuple, whatever form it was given in."""
        return tuple(self.argnums) if isinstance(self.argnums, (tuple, list)) else (self.argnums,)


def workload_from_module(mod):
    """Build a :class:`Workload` from a suite-style module (NAME, primal, make_inputs, ...)."""
    missing = [a for a in ("NAME", "primal", "make_inputs") if not hasattr(mod, a)]
    if missing:
        raise AttributeError(f"benchmark module {mod.__name__} lacks {', '.join(missing)}")
    argnums = getattr(mod, "ARGNUMS", 0)
    if isinstance(argnums, list):
        argnums = tuple(argnums)
    return Workload(name=mod.NAME, primal=mod.primal, make_inputs=mod.make_inputs,
                    argnums=argnums, hand_grad=getattr(mod, "hand_grad", None),
                    reference=dict(getattr(mod, "REFERENCE", {}) or {}), origin=mod.__name__)


def suite_module_names(package=SUITE_PACKAGE):
    """Names of the workload modules in ``package``, in the package's ORDER then alphabetical."""
    pkg = importlib.import_module(package)
    found = sorted(m.name for m in pkgutil.iter_modules(pkg.__path__)
                   if not m.name.startswith("_") and not m.ispkg)
    order = [n for n in getattr(pkg, "ORDER", ()) if n in found]
    return order + [n for n in found if n not in order]


def discover(pattern=None, package=SUITE_PACKAGE):
    """Import every suite module and return the workloads whose NAME matches ``pattern``."""
    rx = re.compile(pattern) if pattern else None
    out = []
    for modname in suite_module_names(package):
        mod = importlib.import_module(f"{package}.{modname}")
        w = workload_from_module(mod)
        if rx is None or rx.search(w.name):
            out.append(w)
    return out


def _import_target_module(modpart):
    """Import ``modpart``: a path to a .py file, or a dotted module name."""
    if modpart.endswith(".py") or os.sep in modpart or os.path.isfile(modpart):
        path = os.path.abspath(modpart)
        if not os.path.isfile(path):
            raise SpecError(f"no such file: {modpart}")
        stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
        modname = f"_adjit_bench_user_{stem}"
        spec = importlib.util.spec_from_file_location(modname, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[modname] = mod
        directory = os.path.dirname(path)
        if directory not in sys.path:
            sys.path.insert(0, directory)  # so the file can import its neighbours
        spec.loader.exec_module(mod)
        return mod
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    return importlib.import_module(modpart)


def load_user(target, specs):
    """Build a Workload from ``MODULE_OR_FILE:FUNCTION`` and parsed :class:`ArgSpec` list.

    The function is differentiated with respect to all its float/array arguments.
    """
    if ":" not in target:
        raise SpecError(f"target {target!r} must be MODULE_OR_FILE:FUNCTION")
    modpart, funcname = target.rsplit(":", 1)
    mod = _import_target_module(modpart)
    try:
        func = getattr(mod, funcname)
    except AttributeError:
        raise SpecError(f"{modpart} has no function {funcname!r}") from None
    pyfunc = getattr(func, "py_func", func)
    params = list(inspect.signature(pyfunc).parameters)
    ordered = order_specs(specs, params, funcname)
    diff = tuple(i for i, s in enumerate(ordered) if s.differentiable)
    if not diff:
        raise SpecError(f"{funcname} has no float or array argument to differentiate")
    argnums = diff[0] if len(diff) == 1 else diff

    def make_inputs(rng, _specs=tuple(ordered)):
        """One input tuple built from the argument specs."""
        return tuple(s.make(rng) for s in _specs)

    return Workload(name=target, primal=func, make_inputs=make_inputs, argnums=argnums,
                    origin=" ".join(str(s) for s in ordered))
