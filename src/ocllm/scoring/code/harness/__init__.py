"""The scripts that run inside the code room's sandboxes (docs/scoring/code.md, C7 and "Trust"). Each is copied into
its box and run by the sandbox's own interpreter, alone: they import the standard library and each other only, never
ocllm.

- `channel.py`: the codec of the one channel between the program's box and the tests' box: plain data only.
- `program_side.py`: a function task's program box: runs the model's program, then answers calls on the channel.
- `tests_side.py`: a function task's tests box: runs the task's code prefix and tests, which call the program
  through the channel, and writes the one report of the outcome.
- `stdin_side.py`: a standard-input task's program box: compiles the program, then runs it as `__main__`.
- `limits.py`: the rlimits every box sets on itself before anything else runs.
"""

from pathlib import Path

HERE = Path(__file__).parent


def script(name: str) -> str:
    """The text of one of these scripts, to copy into a box."""
    return (HERE / name).read_text(encoding="utf-8")
