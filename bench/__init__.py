"""The built-in benchmark suite, one workload per module. Installed as ``adjit.suite``.

Each module defines:

- ``NAME``: the workload name shown in tables;
- ``primal``: the function, a plain Python function written the way a Numba user would;
- ``make_inputs(rng)``: a tuple of arguments built from a ``numpy.random.Generator``;
- ``ARGNUMS``: the argument index (int) or indices (tuple) to differentiate;
- optionally ``hand_grad``: a hand-written, numba-compatible gradient with the same
  arguments, returning what ``adjit.grad(primal, argnums=ARGNUMS)`` returns;
- optionally ``REFERENCE``: published gradient/primal ratios of other AD tools;
- optionally ``COMPILE_WEIGHT``: the relative cost of its first compile (default 1), so
  that ``adjit bench --jobs`` starts the heaviest workloads first.

``ORDER`` lists the modules in table order; modules not listed follow alphabetically.
"""

ORDER = (
    "sum_1000",
    "while_sum_1000",
    "sum_sin_1000",
    "while_sum_sin_1000",
    "kron_sum",
    "naive_map_sin_cos_exp",
    "broadcast_sin_cos_exp",
    "simple_mlp",
    "gp_lml",
    "large_single_block",
    "rosenbrock_loop",
    "scalar_loop_branch",
    "logsumexp_loop",
)
