"""Rebuild ``devils_dictionary.txt`` from Debian's ``dict-devil`` package (run by hand; no network at run time).

    apt-get download dict-devil                    # dict-devil_1.0-13.1_all.deb
    dpkg-deb -x dict-devil_1.0-13.1_all.deb deb
    python make_devils_dictionary.py deb/usr/share/dictd/devil.dict.dz devils_dictionary.txt

The package stores Ambrose Bierce's *The Devil's Dictionary* (1911; public domain) in dictd
format. This keeps the Internet Wiretap edition's text from its title notice to the last entry,
dropping dictfmt's ``00-database-*`` header records before it and the alphabet line after it.
It also drops the entries named in ``EXCLUDED`` (definitions built on a racial, ethnic or
religious slur or stereotype), and prints the SHA-256 that ``ftipbook.data.corpus.PROSE_SHA256``
records.
"""
from __future__ import annotations

import gzip
import hashlib
import re
import sys
from pathlib import Path

START = "            The Internet Wiretap 1st Online Edition of"
ALPHABET_LINE = " abcdefghijklmnopqrstuvwxyz\n"
#: An entry starts at a line "HEADWORD, part-of-speech." (the same rule ftipbook.data.corpus uses).
ENTRY_START = re.compile(r"(?m)^(?=[A-Z][A-Z'\- .]*[A-Z.]?, [a-z]+\.)")
EXCLUDED = ("AFRICAN", "HEBREW", "MINSTREL", "NEGRO", "RAZOR", "RED-SKIN", "RUSSIAN", "WHANGDEPOOTENAWAH")


def snapshot(dict_dz: bytes) -> str:
    """The kept text of a gzip-compressed dictd data file (ASCII, ``\\n`` line ends)."""
    text = gzip.decompress(dict_dz).decode("ascii")
    if START not in text:
        raise ValueError("this is not the dict-devil data file: its title notice is missing")
    body = text[text.index(START):]
    if body.endswith(ALPHABET_LINE):
        body = body[: -len(ALPHABET_LINE)]
    parts = ENTRY_START.split(body.rstrip("\n") + "\n\n")
    kept = [parts[0]] + [p for p in parts[1:] if p.split(",", 1)[0] not in EXCLUDED]
    if len(parts) - len(kept) != len(EXCLUDED):
        raise ValueError("the excluded headwords were not all found: is this a different edition?")
    return "".join(kept).rstrip("\n") + "\n"


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        raise SystemExit("usage: make_devils_dictionary.py DEVIL.DICT.DZ OUTPUT.TXT")
    out = snapshot(Path(argv[0]).read_bytes())
    Path(argv[1]).write_text(out, encoding="ascii", newline="\n")
    print(hashlib.sha256(out.encode("ascii")).hexdigest())


if __name__ == "__main__":
    main(sys.argv[1:])
