"""Read text and JSON with errors a user can act on: which file, which line, what is wrong.

A JSON file is read a piece at a time (ijson), so that reading it costs the memory of what the reader keeps,
not of the file: a metrics file of 100,000 tasks is a quarter of a gigabyte of one JSON document.

ijson's C parser (yajl) cannot hand over a lone UTF-16 surrogate escape (`"\\udc00"`, valid JSON): a lone high one
becomes "?" without a word, a lone low one a UnicodeDecodeError. The bytes are watched for them on the way in; a
file that holds one is read on by ijson's Python parser, which keeps the escape as Python's json module does, so
that the reader's rule for what is not text (formats/not_text.py) sees what the file says.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import re
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any, BinaryIO

# ijson chose its fastest backend on import: the C one (yajl2_c) its wheels bundle, else a slower one.
import ijson

from ocllm.errors import InputError
from ocllm.files.file_kind import LFS_POINTER, refuse_lfs_pointer

# Deeper than any real file, and far enough from Python's recursion limit (1,000) that everything which later
# walks a value recursively (msgspec's encoder, the report templates) can.
MAX_DEPTH = 512
_PIECE = 64 * 1024  # bytes handed to the parser at a time (ijson's own default)
# ijson's C parser costs by the pieces one value spans times that value's length: an answer of 15 MB (one JSON
# string) took 11 s of CPU in 64 KB pieces, 50 MB took 20 s, and it grows with the square. So while the pieces hold
# no quote that could end a string (every quote inside a string follows a backslash), the parse is inside one long
# value, and the next piece is twice as large, up to _LARGEST_PIECE: a value of n bytes spans O(log n) pieces.
# Any other piece resets the size, so an ordinary file is read in pieces of _PIECE (its memory stays that of one
# record). Only the speed depends on this guess, never what is read.
_LARGEST_PIECE = 16 * 1024 * 1024
_OPENS = ("start_map", "start_array")
_CLOSES = ("end_map", "end_array")
_CONTINUATION = bytes(range(0x80, 0xC0))  # UTF-8 bytes that are no character's first
# A high surrogate escape not followed by a low one, or a low one not preceded by a high one. (An escaped
# backslash before "ud800" matches too: the file is then read by the slower parser, which reads it right.)
_LONE_ESCAPE = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_PAIR = 12  # bytes of an escaped pair: a match is sure once this many bytes from its start are in view
_BEHIND = 6  # bytes the look-behind needs before a match
_PYTHON_PARSER = ijson.get_backend("python")  # slower than yajl, but keeps a lone surrogate as it is


def read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise unreadable(path, exc) from None
    if raw.startswith(LFS_POINTER):
        refuse_lfs_pointer(path)
    try:
        return raw.decode("utf-8-sig")  # a byte-order mark, as some editors write, is not part of the text
    except UnicodeDecodeError as exc:
        at = exc.start + (len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0)  # counted after the mark
        raise not_utf8(path, raw[at], at) from None


def text_lines(path: Path, max_bytes: int, bound: str, digest: Any = None) -> Iterator[tuple[int, str]]:
    """A text file's lines, numbered from 1, read one at a time (split at "\\n", as JSON Lines are; the line end
    and a byte-order mark left out): what it costs is one line, never the file. A line of more than `max_bytes`
    is refused as soon as that many bytes of it are read, in one line naming it and `bound` (what the bound is and
    where it is documented). `digest` (a hashlib object), when given, is fed the file's bytes after the mark."""
    refuse_lfs_pointer(path)  # a suite kept in Git LFS and never pulled: said as what it is, not as bad JSON
    try:
        with open(path, "rb") as fh:
            first = fh.read(len(codecs.BOM_UTF8))
            if first != codecs.BOM_UTF8:
                fh.seek(0)  # a byte-order mark, as some editors write, is no part of the text; all else is
            offset = fh.tell()
            number = 0
            while raw := fh.readline(max_bytes + 1):
                number += 1
                if len(raw) > max_bytes and not raw.endswith(b"\n"):  # max_bytes and its end fit; more did not
                    raise InputError(f"{path}:{number}: a line of more than {max_bytes:,} bytes; {bound}")
                if digest is not None:
                    digest.update(raw)
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise not_utf8(path, raw[exc.start], offset + exc.start) from None
                offset += len(raw)
                yield number, line.rstrip("\r\n")
    except OSError as exc:
        raise unreadable(path, exc) from None


def too_deep(where: object) -> str:
    return f"{where}: nested too deeply to read (brackets inside brackets hundreds of levels down)"


def json_events(path: Path) -> Generator[tuple[str, Any], None, None]:  # a generator: its readers close it
    """A JSON file's parse events, in order (ijson's `basic_parse`: `start_map`, `map_key`, `string`, ...,
    numbers as int or float, as `json.loads` gives them), read a piece at a time. Every problem is one line:
    not UTF-8, empty, invalid JSON (with its line and column), nested deeper than MAX_DEPTH."""
    done = 0  # events handed out: a parse begun again by the Python parser passes over them
    for parser in (ijson, _PYTHON_PARSER):
        with _source(path, watch=parser is ijson, grow=True) as source:
            depth = 0
            try:
                for number, (event, value) in enumerate(parser.basic_parse(source, buf_size=_PIECE, use_float=True)):
                    if event in _OPENS:
                        depth += 1
                        if depth > MAX_DEPTH:
                            raise InputError(too_deep(path))
                    elif event in _CLOSES:
                        depth -= 1
                    if number >= done:
                        done += 1
                        yield event, value
                return
            except _LoneSurrogate:
                continue  # every event so far came from the bytes before it: the same from either parser
            except ijson.JSONError as exc:
                raise _invalid(source, exc) from None


def json_items(path: Path, prefix: str) -> Iterator[Any]:
    """The values at `prefix` in a JSON file (ijson's prefixes: `item` is each element of a top-level list,
    `tasks.item` each element of a top-level object's `tasks`), built one at a time, with the errors of
    `json_events`. It does not count the depth: read a file `json_events` has been through first."""
    done = 0  # values handed out (as json_events)
    for parser in (ijson, _PYTHON_PARSER):
        with _source(path, watch=parser is ijson, grow=True) as source:
            try:
                for number, item in enumerate(parser.items(source, prefix, buf_size=_PIECE, use_float=True)):
                    if number >= done:
                        done += 1
                        yield item
                return
            except _LoneSurrogate:
                continue
            except ijson.JSONError as exc:
                raise _invalid(source, exc) from None


def outline(path: Path, list_key: str) -> tuple[str | None, dict[str, Any], list[str]]:
    """The first pass over a file whose records are a long list under `list_key` of a top-level object (or
    the elements of a top-level list): the event that opens the file's value (`start_map`, `start_array`, or
    a lone value's), the object's other fields (built), and how each `list_key` value opens (skipped: the
    records are built by a second pass, `json_items`). The whole file is read, so that a file which is not
    JSON, or is nested too deeply, is refused before its first record is used."""
    events = json_events(path)
    top = next(events, (None, None))[0]
    fields: dict[str, Any] = {}
    lists: list[str] = []
    if top == "start_map":
        for event, key in events:
            if event == "end_map":
                break
            if key == list_key:
                lists.append(_value(events, keep=False)[0])
            else:
                fields[key] = _value(events, keep=True)[1]  # a key given twice: the last value, as json.loads
    for _ in events:
        pass  # the rest: all of a list, or whatever follows the object (only an error can)
    return top, fields, lists


def _value(events: Iterator[tuple[str, Any]], keep: bool) -> tuple[str, Any]:
    """Read one value from `events`: how it opens, and the value itself if `keep`."""
    builder = ijson.ObjectBuilder() if keep else None
    first = ""
    depth = 0
    for event, value in events:
        first = first or event
        if builder is not None:
            builder.event(event, value)
        if event in _OPENS:
            depth += 1
        elif event in _CLOSES:
            depth -= 1
        if not depth:
            break
    return first, builder.value if builder is not None else None


class _Source:
    """A JSON file's bytes as the parser asks for them: checked to be UTF-8 on the way (so that a bad byte
    is named as `read_text` names it, whichever ijson backend reads), and counted, so that a parse error
    can be placed afterwards."""

    def __init__(self, path: Path, fh: BinaryIO, watch: bool = False, grow: bool = False) -> None:
        self.path = path
        self._fh = fh
        self._watch = watch  # for a lone surrogate escape, which yajl cannot hand over (_LoneSurrogate)
        self._grow = grow  # larger pieces inside one long value (_LARGEST_PIECE)
        self._next = _PIECE
        self._tail = b""  # the last bytes of the piece before, an escape split between pieces seen whole
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self.offset = fh.tell()  # the file's bytes read so far (a byte-order mark counted)
        self.last = self.offset  # where the last piece read began
        self.content = False  # anything but white space handed out yet

    def read(self, size: int = -1) -> bytes:
        if self._grow and size > 0:
            size = max(size, self._next)
        try:
            data = self._fh.read(size)
        except OSError as exc:
            raise unreadable(self.path, exc) from None
        if not size:
            return data  # ijson's look at what kind of file this is
        self.last, self.offset = self.offset, self.offset + len(data)
        pending = self._utf8.getstate()[0]
        if pending or not data.isascii():  # ASCII, the bulk of most files, is UTF-8 as it stands
            try:
                self._utf8.decode(data, final=not data)
            except UnicodeDecodeError as exc:
                at = self.offset - len(data) - len(pending) + exc.start  # the decoder counts from what it held
                raise not_utf8(self.path, exc.object[exc.start], at) from None
        if not self.content and data.strip():
            self.content = True
        if self._watch:
            self._look_for_lone_escapes(data)
        if self._grow:
            inside = data and data.count(b'"') == data.count(b'\\"')  # every quote after a backslash, or none
            self._next = min(2 * len(data), _LARGEST_PIECE) if inside else _PIECE
        return data

    def _look_for_lone_escapes(self, data: bytes) -> None:
        """Raise _LoneSurrogate before the parser is given a piece holding a lone surrogate escape. A high one at
        the end of a piece is judged by a look at the bytes after it; the last bytes of a piece are kept to be
        looked at again with the next, so that an escape split between two pieces is seen whole."""
        window = self._tail + data
        # The positions of the kept bytes before the last _PAIR were judged already, with all they needed.
        start = _BEHIND if len(self._tail) == _PAIR + _BEHIND else 0
        if b"\\u" in window:
            for match in _LONE_ESCAPE.finditer(window, start):
                if match.start() < len(window) - _PAIR or not data or self._lone_at_the_end(window, match.start()):
                    raise _LoneSurrogate(self.path)
        self._tail = window[-(_PAIR + _BEHIND) :]

    def _lone_at_the_end(self, window: bytes, at: int) -> bool:
        """Is the escape at `at`, near the end of `window`, lone once the bytes after the window are seen?"""
        try:
            after = self._fh.read(_PAIR)
            self._fh.seek(-len(after), 1)
        except (OSError, ValueError):
            return True  # cannot look ahead: read by the Python parser, which reads either case right
        return _LONE_ESCAPE.match(window + after, at) is not None


class _LoneSurrogate(InputError):
    """The file holds a lone surrogate escape: read again by the Python parser. (An InputError, so that a reader
    which does not read again, `_locate`, takes it as it takes a file that cannot be read.)"""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path}: holds a lone UTF-16 surrogate escape, which yajl cannot read")


@contextlib.contextmanager
def _source(path: Path, watch: bool = False, grow: bool = False) -> Iterator[_Source]:
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise unreadable(path, exc) from None
    with fh:
        refuse_lfs_pointer(path)  # every JSON reader opens here: a pointer is said as one, not as bad JSON
        try:
            if fh.read(len(codecs.BOM_UTF8)) != codecs.BOM_UTF8:
                fh.seek(0)  # a byte-order mark, as some editors write, is no part of the text; all else is
        except OSError as exc:
            raise unreadable(path, exc) from None
        yield _Source(path, fh, watch, grow)


def unreadable(path: Path, exc: OSError) -> InputError:
    if isinstance(exc, FileNotFoundError):
        return InputError(f"{path}: no such file")
    if isinstance(exc, IsADirectoryError):
        return InputError(f"{path}: is a directory, expected a file")
    return InputError(f"{path}: cannot read ({exc.strerror or exc})")


def not_utf8(path: Path, byte: int, offset: int) -> InputError:
    return InputError(f"{path}: not UTF-8 text (byte 0x{byte:02x} at offset {offset})")


class InvalidJSON(InputError):
    """A file that is not JSON (as opposed to one that cannot be read at all)."""


def _invalid(source: _Source, exc: ijson.JSONError) -> InputError:
    if not source.content:
        return InputError(f"{source.path}: the file is empty")
    found = _locate(source.path, source.last)
    if found is None:  # the file changed under us: say what the parser said, without a place
        return InvalidJSON(f"{source.path}: invalid JSON: {_reason(exc)}")
    line, column, reason = found
    return InvalidJSON(f"{source.path}: invalid JSON at line {line} column {column}: {reason}")


# Python's json module writes a float that is not a number as NaN or Infinity, which JSON has no words for.
_NON_STANDARD_NUMBER = re.compile(rb"(?<![\w\"])-?(?:NaN|Infinity)(?![\w\"])")


def has_non_standard_numbers(path: Path) -> bool:
    """Does the file hold NaN or Infinity outside strings (as far as a look at the words can tell)? Asked
    only of a file the parser refused, a piece at a time."""
    tail = b""
    with _source(path) as source:
        while data := source.read(_PIECE):
            if _NON_STANDARD_NUMBER.search(tail + data):
                return True
            tail = data[-16:]
    return False


def load_json_whole(path: Path) -> Any:
    """A JSON file read whole by Python's own json module, which accepts NaN and Infinity: for the files
    that module wrote with them. Costs the memory of the file; the same one-line errors."""
    text = read_text(path)
    try:
        return json.loads(text)
    except RecursionError:
        raise InputError(too_deep(path)) from None
    except json.JSONDecodeError as exc:
        raise InvalidJSON(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None


class _Discard:
    """Where the parse events of `_locate` go: only where the parser stops matters."""

    def send(self, event: object) -> None:
        pass


def _locate(path: Path, near: int) -> tuple[int, int, str] | None:
    """Where a file stops being JSON, as line and column (from 1, the column in characters, as `json.loads`
    counts them), and the parser's reason. ijson says what is wrong but not where, and the parser fails only
    at the end of the piece it was given: the file is parsed again, in whole pieces up to `near` (where the
    piece it failed in began), then a byte at a time. Only ever run on the way to an error."""
    parser = ijson.basic_parse_coro(_Discard(), use_float=True)
    line, column = 1, 1

    def advance(data: bytes) -> None:
        nonlocal line, column
        newline = data.rfind(b"\n")
        if newline >= 0:
            line += data.count(b"\n")
            column = 1
        column += len(data[newline + 1 :].translate(None, _CONTINUATION))

    with _source(path, watch=True) as source:
        try:
            while data := source.read(_PIECE if source.offset + _PIECE <= near else 1):
                parser.send(data)
                advance(data)
            parser.close()  # the end of the file: a document left open fails here
        except ijson.JSONError as exc:
            return line, column, _reason(exc)
        except InputError:
            return None
    return None


def _reason(exc: ijson.JSONError) -> str:
    """The parser's first line, without its jargon: yajl's are "parse error: premature EOF" and the like."""
    said = exc.args[0] if exc.args else ""
    # yajl2_c hands some messages over as bytes (those that quote the bytes of the file)
    lines = (said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said)).strip().splitlines()
    reason = (lines[0] if lines else "not JSON").removeprefix("parse error: ").removeprefix("lexical error: ")
    reason = reason.rstrip(".")
    return "the file ends inside a value" if reason in ("premature EOF", "Incomplete JSON content") else reason
