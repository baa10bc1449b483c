"""What a path that is neither a regular file nor a folder is, said in words: a link to /dev/zero exists, and is
a character device, not "no such file". Reading a device or a FIFO never ends (or waits for a writer), so every
input is checked to be a regular file before it is opened."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ocllm.errors import InputError

_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of(mode: int) -> str:
    for test, words in _KINDS:
        if test(mode):
            return words
    return "not a regular file"


def not_regular(path: Path) -> InputError | None:
    """None for a regular file or a folder; else the one-line error saying what the path is."""
    try:
        mode = path.stat().st_mode  # follows links: what a reader would open
    except FileNotFoundError:
        if path.is_symlink():
            return InputError(f"{path}: a link to {os.readlink(path)}, which does not exist")
        return InputError(f"{path}: no such file or folder")
    except OSError as exc:
        return InputError(f"{path}: cannot read ({exc.strerror or exc})")
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    link = f"a link to {os.path.realpath(path)}, " if path.is_symlink() else ""
    return InputError(f"{path}: not a regular file ({link}{kind_of(mode)})")


# The first line of every Git LFS pointer file (https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md): a
# repository cloned without Git LFS holds these ~130-byte text files where its datasets should be.
LFS_POINTER = b"version https://git-lfs.github.com/spec/v1"


def lfs_pointer(path: Path) -> InputError | None:
    """The one-line error for a Git LFS pointer given where a data file was expected, else None (a file that
    cannot be read is left to its reader, which says why)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(LFS_POINTER))
    except OSError:
        return None
    if head != LFS_POINTER:
        return None
    return InputError(
        f"{path}: a Git LFS pointer, not the file itself (the repository was cloned without its LFS files): run "
        "`git lfs pull` in that repository, or download the file"
    )


def refuse_lfs_pointer(path: Path) -> None:
    """Raise the error of `lfs_pointer` for a regular file that is one."""
    if path.is_file() and (problem := lfs_pointer(path)) is not None:
        raise problem
