"""Benchmark harness behind ``adjit bench``: gradient/primal time ratios, checked first.

- :mod:`.workloads` finds the built-in suite (``adjit.suite``) and loads user functions;
- :mod:`.specs` parses ``NAME=SPEC`` argument specs such as ``x=randn(1000)``;
- :mod:`.checks` verifies gradients (hand-written or finite differences) before timing;
- :mod:`.drivers` times callables inside generated ``@njit`` driver loops;
- :mod:`.runner` runs a workload end to end and produces one row;
- :mod:`.report` prints the table and writes JSON, CSV and the plot.
"""
from .runner import ROW_KEYS, Config, machine_info, run_workloads
from .specs import ArgSpec, SpecError, parse_spec
from .workloads import Workload, discover, load_user

__all__ = ["ROW_KEYS", "Config", "machine_info", "run_workloads", "ArgSpec", "SpecError",
           "parse_spec", "Workload", "discover", "load_user"]
