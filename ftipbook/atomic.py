"""Crash-safe writes and bounded reads: a file, or a set of files under one directory, is replaced all
at once or not at all, and every loader reads it through the same reader.

:func:`write_bytes` writes a temporary sibling, flushes and ``os.fsync``-s it, then ``os.replace``-s
it over the target, so a reader sees the old bytes or the new ones, never a mix.

:func:`write_file_set` replaces several files under one directory (an artifact's weights and
``artifact.json``, a checkpoint's files and its manifest, a study's files and its ``MANIFEST.json``,
zoo entries and the zoo manifest) so that a process killed at any moment leaves a set that
:func:`file_sets` and :func:`read_file_set` can still read completely. A name may lie in a
subdirectory (``"checkpoints/x/artifact.json"``). Each new file is first written as a hidden
``.NAME.partial`` sibling (opened with ``O_CREAT | O_EXCL | O_NOFOLLOW`` after removing whatever had
that name, so a planted link cannot redirect the write) and fsync-ed; the current files are then
hard-linked to ``.NAME.previous`` (an empty ``.NAME.absent`` marks a name that had no file); only
then are the partials renamed over the current names, the last name last (the set's *commit
record*), and the markers removed, the commit record's first. A kill between two renames leaves a
mixed current set but a complete previous one, recognised by the commit record's marker. Entries of
the directory that are not in the set are never touched.

One writer per directory: :func:`write_file_set` holds an advisory ``fcntl.flock`` on the directory
itself (no lock file is left behind) and a second writer gets :class:`ConcurrentWriteError` at once.

Every read goes through :func:`read_bounded`: the file is opened once, ``fstat``-ed, refused above a
declared size (:data:`MAX_JSON_BYTES`, :data:`MAX_FILE_BYTES`) before anything is read, and read into
memory; the loaders then verify and parse that same buffer.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

PARTIAL, PREVIOUS, ABSENT = ".partial", ".previous", ".absent"
#: The largest JSON file (manifests, configs, tokenizers, ``artifact.json``) any loader reads.
MAX_JSON_BYTES = 256 * 2**20
#: The largest other file (weights, optimizer state) any loader reads; the default shard size limit
#: ``transformers`` used for years; larger checkpoints are sharded (``model.safetensors.index.json``).
MAX_FILE_BYTES = 10 * 2**30


class ConcurrentWriteError(RuntimeError):
    """Another process (or another open handle of this one) is writing a file set into the same directory."""


def sha256(data: bytes) -> str:
    """SHA-256 hex digest of ``data``."""
    return hashlib.sha256(data).hexdigest()


def max_bytes(path: str | Path) -> int:
    """The declared size limit of the file ``path``: :data:`MAX_JSON_BYTES` for ``.json``, else
    :data:`MAX_FILE_BYTES`."""
    return MAX_JSON_BYTES if str(path).endswith(".json") else MAX_FILE_BYTES


def read_bounded(path: str | Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, read once into memory; ``ValueError`` naming the file
    when it is larger than ``limit`` (default :func:`max_bytes`) or not a regular file. The size is
    checked on the open descriptor before any byte is read, and a file that grows meanwhile is
    refused too."""
    path = Path(path)
    limit = max_bytes(path) if limit is None else limit
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{path} is not a regular file")
        if info.st_size > limit:
            raise ValueError(f"{path} holds {info.st_size} bytes, more than the {limit} bytes a loader reads "
                             f"(ftipbook.atomic.max_bytes); refusing to read it")
        with os.fdopen(os.dup(fd), "rb") as f:  # ask for what the file holds: read(n) allocates n bytes
            data = f.read(info.st_size + 1)
            if len(data) > info.st_size:
                data += f.read(limit + 1 - len(data)) if len(data) <= limit else b""
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ValueError(f"{path} grew past the {limit} bytes a loader reads while it was read")
    return data


def check_name(directory: str | Path, name: object, *, root: str | Path | None = None) -> Path:
    """``directory / name`` for a name read from a manifest or an index, after checking that it stays
    inside ``directory``: a relative POSIX path without ``..``, ``.``, empty or hidden parts, and
    whose existing links resolve inside ``root`` (default ``directory``). ``ValueError`` otherwise."""
    directory = Path(directory)
    parts = PurePosixPath(name).parts if isinstance(name, str) else ()
    if (not isinstance(name, str) or not name or "\\" in name or "\x00" in name or name.startswith("/")
            or any(p in ("", ".", "..") or p.startswith(".") for p in parts) or "/".join(parts) != name):
        raise ValueError(f"{directory}: the file name {name!r} leaves the directory or is not a plain relative "
                         f"name (allowed: 'a.json', 'sub/b.safetensors'; no '..', absolute or hidden parts)")
    path = directory / name
    inside = Path(root if root is not None else directory).resolve()
    if path.exists() and not path.resolve().is_relative_to(inside):
        raise ValueError(f"{path} is a link to {path.resolve()}, outside {inside}; refusing to read it")
    return path


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_synced(path: Path, data: bytes) -> None:
    """Write ``data`` to a new file ``path`` (whatever had that name, a planted link included, is removed
    first; the file is created with ``O_EXCL | O_NOFOLLOW``) and fsync it."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def write_bytes(path: str | Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` atomically (temporary sibling, fsync, ``os.replace``, fsync of the directory)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}{PARTIAL}-{os.getpid()}")
    try:
        _write_synced(tmp, data)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    _fsync_dir(path.parent)


def write_text(path: str | Path, text: str) -> None:
    """:func:`write_bytes` of ``text`` encoded as UTF-8."""
    write_bytes(path, text.encode())


@contextlib.contextmanager
def writer_lock(directory: str | Path) -> Iterator[None]:
    """Hold the advisory write lock of ``directory`` (``flock`` on the directory, non-blocking);
    :class:`ConcurrentWriteError` naming the directory when another writer holds it."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            raise ConcurrentWriteError(f"another process is writing into {directory} (one writer per directory); "
                                       "nothing was written: retry once it has finished") from None
        yield
    finally:
        os.close(fd)  # releases the lock


def _hidden(directory: Path, name: str, suffix: str) -> Path:
    path = directory / name
    return path.with_name(f".{path.name}{suffix}")


def _keep_previous(current: Path, previous: Path) -> None:
    """Make ``previous`` name the bytes of ``current`` (a hard link; a synced copy where links are refused)."""
    try:
        os.link(current, previous)
    except OSError:
        _write_synced(previous, current.read_bytes())


def _marker(directory: Path, name: str) -> str | None:
    """``"previous"``, ``"absent"`` or ``None``: what the previous set records for ``name``."""
    if _hidden(directory, name, PREVIOUS).is_file():
        return "previous"
    return "absent" if _hidden(directory, name, ABSENT).is_file() else None


def _interrupted(directory: Path, record: str) -> bool:
    """Whether a complete previous set is still needed: an earlier write made its markers (the commit
    record's marker is made last) and stopped before its commit record was renamed in, so the current
    set may be mixed."""
    marker, current = _marker(directory, record), directory / record
    if marker == "absent":
        return not current.is_file()
    return marker == "previous" and (
        not current.is_file() or current.read_bytes() == _hidden(directory, record, PREVIOUS).read_bytes())


def _drop_previous(directory: Path, names: list[str]) -> None:
    """Remove the markers, the commit record's first: the previous set is gone at once."""
    for name in reversed(names):
        for suffix in (PREVIOUS, ABSENT):
            with contextlib.suppress(FileNotFoundError):
                _hidden(directory, name, suffix).unlink()


def write_file_set(directory: str | Path, files: Mapping[str, bytes]) -> Path:
    """Replace the files ``files`` (name -> bytes; a name may lie in a subdirectory) under ``directory``
    (created if needed) as one set, holding the directory's write lock (:class:`ConcurrentWriteError`
    when another writer holds it).

    The last name is the commit record: it is renamed into place last, and the set is complete
    once it is current.
    """
    directory, names = Path(directory), list(files)
    if not names:
        raise ValueError("write_file_set needs at least one file")
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        check_name(directory, name)
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        check_name(directory, name)  # no link planted among the parents
    folders = sorted({(directory / n).parent for n in names})
    with writer_lock(directory):
        for name, data in files.items():
            _write_synced(_hidden(directory, name, PARTIAL), data)
        if not _interrupted(directory, names[-1]):
            _drop_previous(directory, names)  # stale markers left by a write killed after its commit
        for name in names:  # the commit record's marker last: the previous set is complete once it exists
            if _marker(directory, name) is None:  # kept from an interrupted write: that one is the previous set
                current = directory / name
                if current.is_file():
                    _keep_previous(current, _hidden(directory, name, PREVIOUS))
                else:
                    _write_synced(_hidden(directory, name, ABSENT), b"")
        for folder in folders:
            _fsync_dir(folder)
        for name in names:
            os.replace(_hidden(directory, name, PARTIAL), directory / name)
        for folder in folders:
            _fsync_dir(folder)
        _drop_previous(directory, names)
        for folder in folders:
            _fsync_dir(folder)
    return directory


class FileSet(Mapping):
    """One version of a file set (:func:`file_sets`): ``files[name]`` is the file's bytes, read once
    through :func:`read_bounded` when first asked for (any name inside the directory, checked with
    :func:`check_name`), or its path when the file is missing in this version. Iteration covers the
    names the set was opened with."""

    def __init__(self, directory: Path, names: tuple[str, ...], previous: bool, root: Path | None = None) -> None:
        self.directory, self.names, self.previous, self.root = directory, tuple(names), previous, root
        self._bytes: dict[str, bytes | Path] = {}

    def _path(self, name: str) -> Path:
        path = check_name(self.directory, name, root=self.root)
        if self.previous:
            marker = _marker(self.directory, name)
            if marker == "absent":
                return path
            if marker == "previous":
                return _hidden(self.directory, name, PREVIOUS)
        return path

    def __getitem__(self, name: str) -> bytes | Path:
        if name not in self._bytes:
            path = self._path(name)
            self._bytes[name] = read_bounded(path, max_bytes(name)) if path.is_file() else self.directory / name
        return self._bytes[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def file_sets(directory: str | Path, names: tuple[str, ...], *, root: str | Path | None = None) -> list[FileSet]:
    """The readable versions of the file set ``names`` in ``directory``, newest first; the last name is
    the set's commit record.

    The first entry is the current set, each value the file's bytes or, for a missing file, its
    path. A second entry, the previous set, exists only while (or after a kill during) a
    :func:`write_file_set` whose set held the commit record: a reader that finds the current set
    inconsistent should use it. ``root`` widens where links may point (default: ``directory``).
    """
    directory = Path(directory)
    root = Path(root) if root is not None else None
    current = FileSet(directory, names, False, root)
    if _marker(directory, names[-1]) is not None:
        return [current, FileSet(directory, names, True, root)]
    return [current]


def read_file_set(directory: str | Path, names: tuple[str, ...],
                  parse: Callable[[FileSet, Path], Any], *, root: str | Path | None = None) -> Any:
    """``parse(files, directory)`` of the current file set ``names`` (the last name its commit record);
    when that raises ``ValueError`` or ``FileNotFoundError`` and a write was interrupted, ``parse`` of
    the previous set, and if that fails too, the current set's error. ``parse`` may ask ``files`` for
    names beyond ``names`` (those a manifest lists): each is read once and checked to stay inside."""
    directory = Path(directory)
    current, *previous = file_sets(directory, names, root=root)
    try:
        return parse(current, directory)
    except (ValueError, FileNotFoundError) as err:
        if not previous:
            raise
        try:
            return parse(previous[0], directory)
        except (ValueError, FileNotFoundError):
            raise err from None


__all__ = ["MAX_JSON_BYTES", "MAX_FILE_BYTES", "ConcurrentWriteError", "FileSet", "sha256", "max_bytes",
           "read_bounded", "check_name", "write_bytes", "write_text", "writer_lock", "write_file_set", "file_sets",
           "read_file_set"]
