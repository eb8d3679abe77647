"""Crash-safe writes: a file, or a set of files in one directory, is replaced all at once or not at all.

:func:`write_bytes` writes a temporary sibling, flushes and ``os.fsync``-s it, then ``os.replace``-s
it over the target, so a reader sees the old bytes or the new ones, never a mix.

:func:`write_file_set` replaces several files of one directory (an artifact's weights and
``artifact.json``, a checkpoint's files and its manifest) so that a process killed at any moment
leaves a set that :func:`file_sets` can still read completely. Each new file is first written as a
hidden ``.NAME.partial`` sibling and fsync-ed; the current files are then hard-linked to
``.NAME.previous``; only then are the partials renamed over the current names, the last name last
(the set's commit record), and the ``.previous`` links removed. A kill between two renames
leaves a mixed current set but a complete previous one. Entries of the directory that are not in
the set are never touched. One writer per directory at a time.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

PARTIAL, PREVIOUS = ".partial", ".previous"


def sha256(data: bytes) -> str:
    """SHA-256 hex digest of ``data``."""
    return hashlib.sha256(data).hexdigest()


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_synced(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
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


def _hidden(directory: Path, name: str, suffix: str) -> Path:
    return directory / f".{name}{suffix}"


def _keep_previous(current: Path, previous: Path) -> None:
    """Make ``previous`` name the bytes of ``current`` (a hard link; a synced copy where links are refused)."""
    try:
        os.link(current, previous)
    except OSError:
        shutil.copyfile(current, previous)
        with open(previous, "rb+") as f:
            os.fsync(f.fileno())


def _interrupted(directory: Path, names: list[str]) -> bool:
    """Whether a complete previous set is still needed: an earlier write stopped before its commit record
    (the last name) was renamed in, so the current set may be mixed."""
    previous = [_hidden(directory, n, PREVIOUS) for n in names]
    last = directory / names[-1]
    return all(p.is_file() for p in previous) and (
        not last.is_file() or last.read_bytes() == previous[-1].read_bytes())


def _drop_previous(directory: Path, names: list[str]) -> None:
    """Remove the ``.previous`` links, the commit record's first: the previous set is incomplete at once."""
    for name in reversed(names):
        with contextlib.suppress(FileNotFoundError):
            _hidden(directory, name, PREVIOUS).unlink()


def write_file_set(directory: str | Path, files: Mapping[str, bytes]) -> Path:
    """Replace the files ``files`` (name -> bytes) of ``directory`` (created if needed) as one set.

    The last name is the commit record: it is renamed into place last, and the set is complete
    once it is current.
    """
    directory, names = Path(directory), list(files)
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        _write_synced(_hidden(directory, name, PARTIAL), data)
    if not _interrupted(directory, names) and all((directory / n).is_file() for n in names):
        _drop_previous(directory, names)  # stale links left by a write killed after its commit
        for name in names:  # the commit record last: the previous set is complete once its link exists
            _keep_previous(directory / name, _hidden(directory, name, PREVIOUS))
    _fsync_dir(directory)
    for name in names:
        os.replace(_hidden(directory, name, PARTIAL), directory / name)
    _fsync_dir(directory)
    _drop_previous(directory, names)
    _fsync_dir(directory)
    return directory


def file_sets(directory: str | Path, names: tuple[str, ...]) -> list[dict[str, bytes | Path]]:
    """The readable versions of the file set ``names`` in ``directory``, newest first.

    The first entry is the current set, each value the file's bytes or, for a missing file, its
    path. A second entry, the previous set, exists only while (or after a kill during) a
    :func:`write_file_set`: a reader that finds the current set inconsistent should use it.
    """
    directory = Path(directory)
    current = {n: (directory / n).read_bytes() if (directory / n).is_file() else directory / n for n in names}
    previous = [_hidden(directory, n, PREVIOUS) for n in names]
    if all(p.is_file() for p in previous):
        return [current, {n: p.read_bytes() for n, p in zip(names, previous)}]
    return [current]

def read_file_set(directory: str | Path, names: tuple[str, ...],
                  parse: Callable[[dict[str, bytes | Path], Path], Any]) -> Any:
    """``parse(files, directory)`` of the current file set ``names``; when that raises ``ValueError`` or
    ``FileNotFoundError`` and a write was interrupted, ``parse`` of the previous set, and if that fails
    too, the current set's error."""
    directory = Path(directory)
    current, *previous = file_sets(directory, names)
    try:
        return parse(current, directory)
    except (ValueError, FileNotFoundError) as err:
        if not previous:
            raise
        try:
            return parse(previous[0], directory)
        except (ValueError, FileNotFoundError):
            raise err from None

