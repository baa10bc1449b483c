"""BFCL's backend classes, from a copy of BFCL's code the user has, never from ocllm (docs/scoring/tool_use.md,
"BFCL's multi-turn files"): where that copy is, which copy it is, and its modules made anew for each replay.

Which copy: a suite names it by `digest`, the sha256 over the nine files the multi-turn classes need (each file's
name and bytes, in the order of FILES), taken when the suite was imported. A replay runs only code of that digest:
the folder is looked for where `OCLLM_BFCL_BACKENDS` says, then in an installed `bfcl_eval` (found, not imported),
and the bytes that are hashed are the bytes compiled.

Fresh modules: the classes keep state in their modules' globals (long context's shared card and booking dicts,
`post_tweet`'s default lists, the weather extension one call extends), and the guarded child lives long and replays
one episode many times. So each replay executes the modules again into new module objects (compiled once per
child); the model's instances and the gold's share them within the replay, as they share BFCL's modules within the
evaluation of one entry. bfcl_eval's package `__init__` chain is never run: the modules are executed from their
files, and the one absolute import they make (`...func_source_code.long_context`) is answered, while they execute,
by this replay's long_context module.
"""

from __future__ import annotations

import ast
import decimal
import hashlib
import importlib.util
import os
import sys
import types
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple

# Each multi-turn class and the module (file) BFCL defines it in; MathAPI is stateless (BFCL never loads a scenario
# into it).
CLASS_MODULES = {
    "GorillaFileSystem": "gorilla_file_system", "MathAPI": "math_api", "MessageAPI": "message_api",
    "TwitterAPI": "posting_api", "TicketAPI": "ticket_api", "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking", "VehicleControlAPI": "vehicle_control",
}  # fmt: skip
STATELESS = ("MathAPI",)
SHARED = "long_context"  # data the other modules import: the long-context extensions
FILES = tuple(sorted({*CLASS_MODULES.values(), SHARED}))
ENV = "OCLLM_BFCL_BACKENDS"
# Where the backends sit inside the bfcl_eval package (and beside its data folder: data/../eval_checker/...).
INSIDE_PACKAGE = Path("eval_checker", "multi_turn_eval", "func_source_code")


def digest_of(sources: dict[str, bytes]) -> str:
    hashed = hashlib.sha256()
    for name in FILES:
        hashed.update(f"{name}.py\0{len(sources[name])}\0".encode())
        hashed.update(sources[name])
    return hashed.hexdigest()


def read_sources(folder: Path) -> dict[str, bytes] | None:
    """The nine files' bytes, or None when one is missing or unreadable."""
    try:
        return {name: (folder / f"{name}.py").read_bytes() for name in FILES}
    except OSError:
        return None


def folder_digest(folder: Path) -> str | None:
    sources = read_sources(folder)
    return None if sources is None else digest_of(sources)


class Candidate(NamedTuple):
    where: str  # how it was found, in words ("OCLLM_BFCL_BACKENDS", "bfcl-eval 2026.3.23 installed")
    folder: Path


def candidates() -> list[Candidate]:
    """The copies of the backends this machine offers, in the order they are tried."""
    found = []
    if os.environ.get(ENV):
        found.append(Candidate(ENV, Path(os.environ[ENV])))
    installed = installed_package()
    if installed is not None:
        found.append(Candidate(f"bfcl-eval {installed[1]} installed", installed[0] / INSIDE_PACKAGE))
    return found


def installed_package() -> tuple[Path, str] | None:
    """The installed bfcl_eval's folder and version, found without importing it (its __init__ chain may be heavy)."""
    try:
        spec = importlib.util.find_spec("bfcl_eval")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        version = metadata.version("bfcl-eval")
    except metadata.PackageNotFoundError:
        version = "(version unknown)"
    return Path(next(iter(spec.submodule_search_locations))), version


def located(digest: str, origin: str = "") -> Path | str:
    """The folder of the backends whose digest this is, or why none is here (one line; `origin`: where the suite
    says they came from, "bfcl-eval 2026.3.23")."""
    seen = []
    for candidate in candidates():
        found = folder_digest(candidate.folder)
        if found == digest:
            return candidate.folder
        seen.append(f"{candidate.where} at {candidate.folder} {'is no copy of them' if found is None else 'differs'}")
    here = "; ".join(seen) or f"{ENV} is not set and no bfcl-eval is installed"
    return (
        f"BFCL's backends{' of ' + origin if origin else ''} (sha256 {digest[:12]}...) are not on this machine "
        f"({here}): install that bfcl-eval (pip install --no-deps) or set {ENV} to their folder"
    )


def missing(digest: str, origin: str = "") -> str | None:
    """Why the backends of this digest cannot be run here, or None; looked up once per process and setting (the
    parent's check before any replay; the child checks the bytes it compiles again)."""
    return _missing(digest, origin, os.environ.get(ENV, ""))


@lru_cache(maxsize=8)
def _missing(digest: str, origin: str, _setting: str) -> str | None:
    where = located(digest, origin)
    return where if isinstance(where, str) else None


# ---- in the guarded child -----------------------------------------------------------------------------------------


class Compiled(NamedTuple):
    folder: Path
    code: dict[str, types.CodeType]
    shared_names: tuple[str, ...]  # the absolute names the modules import long_context by


@lru_cache(maxsize=4)
def compiled(digest: str) -> Compiled:
    """The backends of this digest compiled, from the very bytes whose digest matched; ValueError when they are not
    here."""
    where = located(digest)
    if isinstance(where, str):
        raise ValueError(where)
    sources = read_sources(where)
    if sources is None or digest_of(sources) != digest:
        raise ValueError(f"BFCL's backends in {where} changed while they were read")
    code = {name: compile(sources[name], str(where / f"{name}.py"), "exec") for name in FILES}
    names = sorted({
        node.module
        for name in FILES
        for node in ast.walk(ast.parse(sources[name]))
        if isinstance(node, ast.ImportFrom) and node.module and node.module.rpartition(".")[2] == SHARED
    })  # fmt: skip
    return Compiled(where, code, tuple(names))


class ReplayModules:
    """The modules of one replay: long_context executed anew, and each class's module executed anew the first time
    the replay asks for the class; nothing of an earlier replay's module state survives in them."""

    def __init__(self, digest: str) -> None:
        self._made = compiled(digest)
        self._prefix = f"ocllm_bfcl_{digest[:12]}"
        self._shared = self._executed(SHARED)
        self._modules: dict[str, types.ModuleType] = {}

    def cls(self, name: str) -> Any:
        module_name = CLASS_MODULES[name]
        if module_name not in self._modules:
            # BFCL's modules import long_context by its absolute name: while one executes, that name is this
            # replay's module (and no bfcl_eval package is imported for it).
            names = self._made.shared_names
            before = {shared: sys.modules.get(shared) for shared in names}
            try:
                sys.modules.update(dict.fromkeys(names, self._shared))
                self._modules[module_name] = self._executed(module_name)
            finally:
                for shared, was in before.items():
                    if was is None:
                        sys.modules.pop(shared, None)
                    else:
                        sys.modules[shared] = was
        return getattr(self._modules[module_name], name)

    def _executed(self, name: str) -> types.ModuleType:
        fresh = types.ModuleType(f"{self._prefix}.{name}")
        fresh.__file__ = str(self._made.folder / f"{name}.py")
        exec(self._made.code[name], fresh.__dict__)  # BFCL's own module, from the bytes of the suite's digest
        return fresh


def reset_precision() -> None:
    """The process-wide precisions MathAPI sets (mpmath's dps, decimal's context) back to their defaults, so that no
    replay starts from where another left them."""
    decimal.setcontext(decimal.Context())
    mpmath = sys.modules.get("mpmath")
    if mpmath is not None:
        mpmath.mp.dps = 15
