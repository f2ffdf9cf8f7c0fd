"""Opening files a pull request may have planted: one place for every check.

A checkout is untrusted input, and so are the folders inside it that
toolproof reads and writes (run folders, ``.toolproof/``). A pull request can
commit a symbolic link where toolproof will write (``runs/smoke`` pointing at
a folder elsewhere, ``records.jsonl`` pointing at a file elsewhere), and a
FIFO, a link to ``/dev/zero`` or a huge file where it will read. So:

- :func:`enter_folder` creates or enters a folder toolproof writes in, and
  refuses it when the folder, or a folder between the working folder and it,
  is a symbolic link or not a folder;
- :func:`open_write` opens a file for writing with ``O_NOFOLLOW`` (a link is
  refused, never written through), without blocking on a FIFO, and checks it
  is a regular file; :func:`write_bytes` and :func:`replace_bytes` use it;
- :func:`read_capped` reads a regular file of at most a given size, refusing
  devices, FIFOs, sockets and folders before opening them;
  :func:`read_inside` also refuses a file whose real location is outside its
  folder, and :func:`open_read` does the same checks for a file read line by
  line (a records file), capped in size too.

Refusals are :class:`UnsafePath` (a ``ValueError`` whose message says why);
:func:`refused` turns one into the located one-line error of the command line.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

from toolproof.errors import UserError

__all__ = [
    "MAX_LINE_CHARS",
    "MAX_RUN_FILE_BYTES",
    "UnsafePath",
    "enter_folder",
    "open_read",
    "open_write",
    "read_capped",
    "read_inside",
    "refused",
    "replace_bytes",
    "save",
    "save_report",
    "unless_run_file",
    "write_bytes",
]

#: The largest file toolproof reads from a run folder or the store line by line
#: (records, events): far above any real run, far below what ends in a MemoryError.
MAX_RUN_FILE_BYTES = 4 * 1024 * 1024 * 1024
#: The longest line read from such a file: far above a record with a long transcript.
MAX_LINE_CHARS = 256 * 1024 * 1024

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class UnsafePath(ValueError):
    """A path toolproof will not read or write. The message says why."""


def refused(path: str | Path, exc: UnsafePath) -> UserError:
    """The command-line error for a refused path: ``PATH: why``."""
    return UserError(f"{path}: {exc}")


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "a device, FIFO or socket"


def enter_folder(folder: str | Path, *, create: bool = True) -> Path:
    """``folder``, created if missing, once no part of it is a symbolic link.

    The parts checked are those below the working folder when ``folder`` is
    inside it (a checkout's ``runs/`` or ``.toolproof/``), else the folder
    itself and the parts toolproof creates: the command line chose the rest.
    ``create``: make the missing parts (else ``FileNotFoundError``).
    Raises :class:`UnsafePath`.
    """
    path = Path(os.path.abspath(folder))
    cwd = Path(os.path.abspath(os.getcwd()))
    if path.is_relative_to(cwd):
        anchor = cwd
    else:  # outside the working folder: the command line chose the existing parents
        anchor = path.parent
        while not os.path.lexists(anchor) and anchor != anchor.parent:
            anchor = anchor.parent
    if path == anchor:
        return path
    parts = path.relative_to(anchor).parts
    current = anchor
    for part in parts:
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(current)
            info = os.lstat(current)
        if stat.S_ISLNK(info.st_mode):
            raise UnsafePath(
                f"'{current}' is a symbolic link; toolproof does not write through links "
                "(a link committed in a checkout could point anywhere)"
            )
        if not stat.S_ISDIR(info.st_mode):
            raise UnsafePath(f"'{current}' is not a folder")
    return path


def open_write(
    path: str | Path, *, append: bool = False, exclusive: bool = False, mode: int = 0o644
) -> BinaryIO:
    """``path`` opened for writing (binary), never through a link and never a FIFO.

    Its folder is entered with :func:`enter_folder`. ``append`` adds to the
    file, else it is truncated (or, with ``exclusive``, must not exist).
    """
    path = Path(path)
    enter_folder(path.parent)
    flags = os.O_RDWR | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC
    flags |= os.O_APPEND if append else (os.O_EXCL if exclusive else 0)
    try:
        fd = os.open(path, flags, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise UnsafePath(
                f"'{path}' is a symbolic link; toolproof does not write through links"
            ) from None
        if exc.errno == errno.ENXIO:  # a FIFO with no reader
            raise UnsafePath(f"'{path}' is a device, FIFO or socket, not a regular file") from None
        if exc.errno == errno.EISDIR:
            raise UnsafePath(f"'{path}' is a folder, not a regular file") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(f"'{path}' is {_kind(info.st_mode)}, not a regular file")
        if not append and not exclusive:
            os.ftruncate(fd, 0)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "ab" if append else "wb", buffering=0)
    except BaseException:
        os.close(fd)
        raise


def write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (replacing its content), never through a link."""
    with open_write(path) as fh:
        fh.write(data)


def replace_bytes(path: str | Path, data: bytes, *, sync: bool = False) -> None:
    """Replace ``path`` atomically with ``data`` (a temporary file, then a rename).

    The rename replaces a link planted at ``path`` rather than following it.
    """
    path = Path(path)
    folder = enter_folder(path.parent)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _regular(path: Path, shown: str, limit: int | None) -> os.stat_result:
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePath(f"'{shown}' is {_kind(info.st_mode)}, not a regular file")
    if limit is not None and info.st_size > limit:
        raise UnsafePath(_too_big(shown, info.st_size, limit))
    return info


def _open_checked(path: Path, shown: str) -> int:
    real = Path(os.path.realpath(path))
    fd = os.open(real, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for a FIFO since the check
        os.close(fd)
        raise UnsafePath(f"'{shown}' is not a regular file")
    os.set_blocking(fd, True)
    return fd


def read_capped(path: str | Path, limit: int, label: str | None = None) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    Raises :class:`UnsafePath` for a device, FIFO, socket or folder, and for a
    file over the limit; ``FileNotFoundError`` and ``OSError`` pass through.
    The size is checked before and while reading (``/proc`` files report 0).
    """
    path = Path(path)
    shown = label or str(path)
    _regular(path, shown, limit)
    with os.fdopen(_open_checked(path, shown), "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise UnsafePath(_too_big(shown, None, limit))
    return data


def _inside(root: Path, path: Path, shown: str) -> None:
    real_root = Path(os.path.realpath(root))
    try:
        real = Path(os.path.realpath(path, strict=True))
    except FileNotFoundError:
        raise
    except (OSError, RuntimeError):
        raise UnsafePath(f"'{shown}' cannot be resolved (a symbolic link loop?)") from None
    if real != real_root and not real.is_relative_to(real_root):
        raise UnsafePath(f"'{shown}' leads outside its folder ({root}) through a symbolic link")


def read_inside(root: str | Path, path: str | Path, limit: int, label: str | None = None) -> bytes:
    """:func:`read_capped`, once ``path``'s real location is inside ``root``."""
    _inside(Path(root), Path(path), label or str(path))
    return read_capped(path, limit, label)


def open_read(
    path: str | Path,
    *,
    root: str | Path | None = None,
    limit: int = MAX_RUN_FILE_BYTES,
    label: str | None = None,
) -> BinaryIO:
    """``path`` opened for reading line by line, with the checks of :func:`read_inside`.

    ``root``: the folder the file must really be in (default: its own folder,
    so a link to a file elsewhere is refused).
    """
    path = Path(path)
    shown = label or str(path)
    _inside(Path(root) if root is not None else path.parent, path, shown)
    _regular(path, shown, limit)
    return os.fdopen(_open_checked(path, shown), "rb")


def _too_big(shown: str, size: int | None, limit: int) -> str:
    have = f" ({size:,} bytes)" if size is not None else ""
    return (
        f"'{shown}' is larger than the limit of {limit:,} bytes{have}; "
        "raise max_file_mib in your toolproof.yaml if it is meant to be"
    )


def save(path: str | Path, data: bytes | str, *, atomic: bool = False) -> None:
    """Write a report or output file for the command line: a refusal is a :class:`UserError`."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    try:
        if atomic:
            replace_bytes(path, raw)
        else:
            write_bytes(path, raw)
    except UnsafePath as exc:
        raise refused(path, exc) from None
    except OSError as exc:  # no permission, a read-only or full disk: one line, no traceback
        raise UserError(f"{path}: cannot write: {exc.strerror or exc}") from None


#: The files of a run folder (one holding ``manifest.json``) that only ``toolproof run``,
#: ``judge`` and the history write: a report named there would replace a run's data.
RUN_FILES = frozenset(
    {
        "records.jsonl",
        "manifest.json",
        "summary.json",
        "events.jsonl",
        "judgements.jsonl",
        "tools.json",
    }
)


def unless_run_file(path: str | Path) -> None:
    """Refuse a report path that names one of a run folder's own files (a
    :class:`UserError`): ``--html runs/x/records.jsonl`` would replace a run's records."""
    p = Path(path)
    if p.name in RUN_FILES and (p.parent / "manifest.json").is_file():
        raise UserError(
            f"{p}: this is a file of the run folder {p.parent} (it holds a manifest.json), "
            "and a report is never written over a run's own files; give another path"
        )


def save_report(path: str | Path, data: bytes | str) -> None:
    """:func:`save` for a report the user named (``--html``, ``--markdown``, ``--json``…),
    once it is not one of a run folder's own files."""
    unless_run_file(path)
    save(path, data)
