"""The built-in benchmark suite, one workload per module. Installed as ``adjit.suite``."""
