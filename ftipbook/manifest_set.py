"""A directory of built files and its ``MANIFEST.json``: written as one crash-safe set, read and
verified through one reader (the committed study, depth and JEPA builds).

:func:`write_manifest_set` writes every file and ``MANIFEST.json`` (``{"format": ..., "files":
{name: sha256}}``) with :func:`ftipbook.atomic.write_file_set`, the manifest last (the commit
record), so a process killed at any moment leaves the old build or the new one.
:func:`read_manifest_set` reads the manifest and each listed file once into memory, checks that the
names stay inside the directory, that no other file is there and that every buffer has its recorded
SHA-256, and returns those very buffers for the caller to parse; after an interrupted write it falls
back to the previous set.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ftipbook.atomic import FileSet, read_file_set, sha256, write_file_set
from ftipbook.file_records import json_record

MANIFEST_FILE = "MANIFEST.json"


def manifest_bytes(files: Mapping[str, bytes], format: str) -> bytes:
    """The ``MANIFEST.json`` bytes of ``files`` (name -> bytes), names in sorted order."""
    return (json.dumps({"format": format, "files": {n: sha256(files[n]) for n in sorted(files)}}, indent=1)
            + "\n").encode()


def write_manifest_set(directory: str | Path, files: Mapping[str, bytes], format: str) -> Path:
    """Write ``files`` (name -> bytes, names relative to ``directory``) and their ``MANIFEST.json`` as
    one crash-safe set (:func:`ftipbook.atomic.write_file_set`, the manifest last)."""
    return write_file_set(directory, {**files, MANIFEST_FILE: manifest_bytes(files, format)})


def built_files(directory: Path) -> list[str]:
    """The names of the regular files under ``directory`` but the manifest, skipping hidden entries
    (the ``.partial``/``.previous`` siblings of an interrupted write)."""
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*")
                  if p.is_file() and p.name != MANIFEST_FILE
                  and not any(part.startswith(".") for part in p.relative_to(directory).parts))


def _verified(files: FileSet, directory: Path, format: str, build_command: str) -> dict[str, bytes]:
    path = directory / MANIFEST_FILE
    if isinstance(files[MANIFEST_FILE], Path):
        raise FileNotFoundError(f"{path} is missing: build it with `{build_command}`")
    manifest = json_record(files[MANIFEST_FILE], path)
    listed = manifest.get("files")
    if manifest.get("format") != format or not isinstance(listed, dict) or not all(
            isinstance(v, str) for v in listed.values()):
        raise ValueError(f"{path} has format {manifest.get('format')!r}; expected {format!r} with a 'files' map "
                         "of SHA-256 strings")
    unlisted = sorted(set(built_files(directory)) - set(listed))
    if unlisted:
        raise ValueError(f"{directory / unlisted[0]} is not listed in {MANIFEST_FILE}; the set holds only built files")
    out = {}
    for name, expected in listed.items():
        data = files[name]  # checks that the name stays inside the directory
        if isinstance(data, Path):
            raise ValueError(f"{directory / name} is missing; rebuild with `{build_command}`")
        actual = sha256(data)
        if actual != expected:
            raise ValueError(f"{directory / name} has SHA-256 {actual[:16]}..., but {MANIFEST_FILE} records "
                             f"{expected[:16]}...: the file was changed or damaged; rebuild with `{build_command}`")
        out[name] = data
    return out


def read_manifest_set(directory: str | Path, format: str, build_command: str) -> dict[str, bytes]:
    """The verified bytes of every file ``MANIFEST.json`` of ``directory`` lists (name -> bytes), each
    read once; ``ValueError`` naming a changed, missing, unlisted or escaping file,
    ``FileNotFoundError`` when there is no manifest. Parse the returned buffers, not the files."""
    return read_file_set(directory, (MANIFEST_FILE,),
                         lambda files, d: _verified(files, d, format, build_command))


__all__ = ["MANIFEST_FILE", "manifest_bytes", "write_manifest_set", "built_files", "read_manifest_set"]
