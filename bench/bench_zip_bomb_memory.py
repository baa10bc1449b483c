"""Peak memory of `ocllm rescore --from inspect` on zip bombs: an inspect_ai .eval of a megabyte or two whose
header.json, or one sample, inflates to SIZE (default 1 GiB), deflated and zstd-compressed.

    .venv/bin/python bench/bench_zip_bomb_memory.py [SIZE_MB]

Each bomb is made by tests/zip_bombs.py (as the hostile-input test makes it), then rescored in a child
process, whose exit code, one line of error and peak resident memory (ru_maxrss) are printed. The bounds a
member is read to (32 MB for header.json, 128 MB for a sample) should set the memory, not SIZE.
"""

from __future__ import annotations

import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from zip_bombs import DEFLATE, ZSTD, bomb_log  # beside the tests, not an installed module


def measure(path: Path, out: Path) -> tuple[int, str, float, float]:
    """Exit code, the error's last line, peak MB and seconds of one rescore in a child of a child (so that
    RUSAGE_CHILDREN holds that one process only)."""
    probe = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "print(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else '')\n"
    )
    command = [sys.executable, "-m", "ocllm", "rescore", "--from", "inspect", str(path), "-o", str(out)]
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", probe, *command], capture_output=True, text=True, check=True)
    seconds = time.monotonic() - start
    first, error = [*done.stdout.splitlines(), "", ""][:2]
    code, peak_kb = first.split()
    return int(code), error, int(peak_kb) / 1024, seconds


def main() -> None:
    size = int(sys.argv[1]) << 20 if len(sys.argv) > 1 else 1 << 30
    machine = platform.processor() or platform.machine()
    print(f"# {machine}, Python {platform.python_version()}, bombs of {size >> 20} MB")
    with tempfile.TemporaryDirectory() as tmp:
        for member in ("header.json", "samples/q2_epoch_1.json"):
            for declared in (None, 1000):  # its true size, or a lie
                for method, name in ((DEFLATE, "deflate"), (ZSTD, "zstd")):
                    path = bomb_log(Path(tmp) / f"{name}.eval", member, method, size, declared)
                    code, error, peak, seconds = measure(path, Path(tmp) / "out.json")
                    said = f"declares {declared}" if declared else "declares its size"
                    print(f"{member:<24} {name:<8} {said:<17} {path.stat().st_size / 1e6:5.2f} MB  exit {code}  "
                          f"peak {peak:6.1f} MB  {seconds:5.1f} s  {error.split(': ', 2)[-1]}")  # fmt: skip


if __name__ == "__main__":
    main()
