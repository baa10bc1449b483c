"""Read a JSON file with errors a user can act on: which file, which line, what is wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from ocllm.errors import InputError


def read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, expected a file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        return raw.decode("utf-8-sig")  # a byte-order mark, as some editors write, is not part of the text
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None


def load_json(path: Path) -> Any:
    text = read_text(path)
    if not text.strip():
        raise InputError(f"{path}: the file is empty")
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError:
        pass
    except RecursionError:
        raise InputError(too_deep(path)) from None
    # msgspec is fast but reports byte offsets; the stdlib parser names line and column.
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise InputError(too_deep(path)) from None


def too_deep(where: object) -> str:
    return f"{where}: nested too deeply to read (brackets inside brackets hundreds of levels down)"
