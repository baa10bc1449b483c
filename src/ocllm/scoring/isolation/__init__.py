"""Isolation: running code ocllm does not trust (a model's programs, a dataset's tests) where it cannot reach the host,
and watching it by what it uses (docs/scoring/code.md, C9-C10 and "Trust").

- `procfs`: the /proc readers (CPU seconds, time spent waiting for a CPU, a process's descendants), shared by the
  guarded checks (`scoring/guarded.py`), the sandboxes' watch and the run side's server watchdog.
- `sandboxes`: which sandbox runs here (bubblewrap, else a container engine, else none) and the command that starts
  one, with nothing of the host's environment and a seccomp filter (`seccomp`).
- `boxes`: a group of sandboxes started together, joined by pipes, watched under one CPU and wall budget, ended
  together (`watch`), within the machine's memory budget (`memory_budget`).

Nothing here knows what a task is: the code room (and later the conversation rooms' tool environments) says what
runs in each box and reads what came back.
"""
