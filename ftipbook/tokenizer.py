"""Tokenizers and detokenizers (ftip-000D, ftip-000E, ftip-000F).

A tokenizer package here is a tuple ``(N, tau, delta)``: a declared normalization rule ``N``
(:class:`Normalizer`), a tokenizer ``tau: text -> ids`` and a detokenizer ``delta: ids -> text``
over a finite :class:`Vocab` whose control tokens (``eos``, ``pad``, ``bos``, ...) are named
elements of the vocabulary. The promise every tokenizer of this module keeps is the
normalized round trip ``delta(tau(s)) == N(s)`` (ftip-000E), not that ``tau`` and ``delta``
are inverse bijections.

:class:`ByteLevelBPE` is a byte-level byte-pair encoder (Sennrich et al., sec. 3.2) whose base
alphabet is the 256 byte values, so every Unicode string has an encoding:

* ids ``0..255`` are the bytes, ids ``256..256+M-1`` are the ``M`` learned merges in the
  order they were learned, and the named control tokens follow;
* text is normalized, then split into chunks by :data:`PRETOKENIZE_PATTERN` (letters,
  digits, other symbols and whitespace runs, each with at most one leading space); merges
  never cross a chunk boundary;
* training picks, at every step, the adjacent pair with the highest count over the corpus
  chunks; ties go to the smallest ``(left id, right id)``;
* encoding applies, inside each chunk, the lowest-ranked learned merge present, all its
  non-overlapping occurrences left to right, until no learned merge applies (the GPT-2 and
  Hugging Face rule); results are cached per chunk.

:class:`ToyTokenizer` is the lossy four-stage toy of ftip-000F, and :class:`HFTokenizer` /
:class:`TiktokenTokenizer` adapt a Hugging Face ``tokenizers`` tokenizer or a ``tiktoken``
encoding to the same :class:`TokenizerLike` protocol.
"""
from __future__ import annotations

import hashlib
import heapq
import json
import operator
import re
import unicodedata

try:  # Python >= 3.11
    import re._constants as _sre
    import re._parser as _sre_parse
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _sre
    import sre_parse as _sre_parse
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ftipbook.atomic import write_text
from ftipbook.file_records import read_json

#: Pre-tokenization rule of :class:`ByteLevelBPE`. A chunk is an optional space followed by a run
#: of letters, of decimal digits or of other non-space symbols, or a run of whitespace (a run
#: followed by a non-space character leaves its last space to that character's chunk).
#: ``[^\W\d_]`` is a letter in Python's Unicode ``re``; every character falls in one class.
PRETOKENIZE_PATTERN = r" ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+"

#: The longest byte string one merge may build, and the most bytes all tokens together may spell:
#: a merge table is checked against both before anything is built (41 "doubling" merges would
#: otherwise ask for 2**41 bytes).
MAX_TOKEN_BYTES, MAX_TOTAL_TOKEN_BYTES = 4096, 2**27

#: Control tokens a :class:`ByteLevelBPE` gets unless told otherwise, in id order after the merges.
DEFAULT_SPECIALS = ("eos", "pad", "bos")

_WHITESPACE_RUN = re.compile(r"\s+")


def special_piece(name: str) -> str:
    """The vocabulary entry of the control token ``name``: ``<|name|>``."""
    return f"<|{name}|>"


# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Normalizer:
    """A declared text normalization rule ``N`` (ftip-000E); the identity when every flag is off.

    The steps run in this order: Unicode NFKC; lowercasing (``str.lower``); NFKC again when
    both are on (lowercasing can leave combining marks out of canonical order, e.g.
    ``"\\u0130\\u0316"``); then every maximal run of whitespace characters (``str.isspace``)
    becomes one space. The rule is idempotent: ``N(N(s)) == N(s)``.
    """

    nfkc: bool = False
    lowercase: bool = False
    collapse_whitespace: bool = False

    def __post_init__(self) -> None:
        for name in ("nfkc", "lowercase", "collapse_whitespace"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"Normalizer.{name} must be a bool, got {getattr(self, name)!r}")

    def __call__(self, text: str) -> str:
        if not isinstance(text, str):
            raise TypeError(f"Normalizer takes a str, got {type(text).__name__}")
        if self.nfkc:
            text = unicodedata.normalize("NFKC", text)
        if self.lowercase:
            text = text.lower()
            if self.nfkc:
                text = unicodedata.normalize("NFKC", text)
        if self.collapse_whitespace:
            text = _WHITESPACE_RUN.sub(" ", text)
        return text

    def to_dict(self) -> dict[str, bool]:
        return {"nfkc": self.nfkc, "lowercase": self.lowercase, "collapse_whitespace": self.collapse_whitespace}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Normalizer:
        unknown = set(data) - {"nfkc", "lowercase", "collapse_whitespace"}
        if unknown:
            raise ValueError(f"unknown Normalizer fields {sorted(unknown)}; allowed: nfkc, lowercase, collapse_whitespace")
        return cls(**data)


# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Vocab:
    """A finite vocabulary (ftip-000D): ids ``0..len-1``, each with a unique string piece.

    ``special`` names the control tokens: ``special["eos"]`` is the id of ``eos``, whose piece
    is ``<|eos|>``. Names are Python identifiers, so a control token is always named rather
    than assumed.
    """

    pieces: tuple[str, ...]
    special: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pieces", tuple(self.pieces))
        object.__setattr__(self, "special", dict(self.special))
        if not self.pieces:
            raise ValueError("a vocabulary must be nonempty")
        if not all(isinstance(p, str) for p in self.pieces):
            raise TypeError("vocabulary pieces must be str")
        if len(set(self.pieces)) != len(self.pieces):
            dup = next(p for p, n in Counter(self.pieces).items() if n > 1)
            raise ValueError(f"vocabulary pieces must be unique; {dup!r} appears more than once")
        for name, i in self.special.items():
            if not (isinstance(name, str) and name.isidentifier()):
                raise ValueError(f"control token names must be identifiers, got {name!r}")
            if not (isinstance(i, int) and 0 <= i < len(self.pieces)):
                raise ValueError(f"control token {name!r} has id {i!r}, outside [0, {len(self.pieces)})")
            if self.pieces[i] != special_piece(name):
                raise ValueError(f"control token {name!r} must have piece {special_piece(name)!r}, not {self.pieces[i]!r}")
        object.__setattr__(self, "_index", {p: i for i, p in enumerate(self.pieces)})

    @classmethod
    def with_specials(cls, regular: Sequence[str], specials: Sequence[str] = DEFAULT_SPECIALS) -> Vocab:
        """``regular`` pieces at ids ``0..n-1``, then one control token per name in ``specials``."""
        n = len(regular)
        return cls(tuple(regular) + tuple(special_piece(s) for s in specials), {s: n + j for j, s in enumerate(specials)})

    def __len__(self) -> int:
        return len(self.pieces)

    def __hash__(self) -> int:
        return hash((self.pieces, tuple(sorted(self.special.items()))))

    def __contains__(self, piece: object) -> bool:
        return piece in self._index

    def id_of(self, piece: str) -> int:
        """The id of ``piece``; ``KeyError`` naming it if it is not in the vocabulary."""
        try:
            return self._index[piece]
        except KeyError:
            raise KeyError(f"{piece!r} is not in the vocabulary") from None

    def piece(self, token_id: int) -> str:
        """The piece of ``token_id``."""
        if not (isinstance(token_id, int) and 0 <= token_id < len(self.pieces)):
            raise ValueError(f"token_id={token_id!r} is outside [0, {len(self.pieces)})")
        return self.pieces[token_id]

    def special_id(self, name: str) -> int:
        """The id of the control token ``name``; ``KeyError`` listing the names that exist."""
        if name not in self.special:
            raise KeyError(f"this vocabulary has no control token {name!r}; it has {sorted(self.special)}")
        return self.special[name]

    @property
    def eos_id(self) -> int:
        return self.special_id("eos")

    @property
    def special_ids(self) -> frozenset[int]:
        return frozenset(self.special.values())


# ----------------------------------------------------------------------------------------------
@runtime_checkable
class TokenizerLike(Protocol):
    """What the rest of ftipbook needs from a tokenizer: ``N``, ``tau``, ``delta`` and the sizes.

    :class:`ByteLevelBPE`, :class:`ToyTokenizer`, :class:`HFTokenizer` and
    :class:`TiktokenTokenizer` implement it. ``eos_id`` is ``None`` when the tokenizer has none.
    """

    @property
    def vocab_size(self) -> int: ...

    @property
    def eos_id(self) -> int | None: ...

    def normalize(self, text: str) -> str: ...

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: Sequence[int]) -> str: ...


def roundtrip_check(tokenizer: TokenizerLike, text: str) -> bool:
    """Whether ``decode(encode(text)) == normalize(text)``: the normalized round trip of ftip-000E."""
    return tokenizer.decode(tokenizer.encode(text)) == tokenizer.normalize(text)


def _as_id(i: object) -> int:
    """``i`` as an int if it is an integer (int, NumPy or 0-d integer tensor); ``TypeError`` otherwise."""
    if isinstance(i, bool):
        raise TypeError(f"ids must be integer token ids, got the bool {i!r}")
    try:
        return operator.index(i)
    except TypeError:
        raise TypeError(f"ids must be integer token ids, got {i!r} of type {type(i).__name__}") from None


def _check_ids(ids: Sequence[int], size: int) -> list[int]:
    """``ids`` as a list of ints in ``[0, size)``; ``TypeError``/``ValueError`` naming a bad id."""
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise TypeError(f"ids must be a sequence of integer token ids, got {type(ids).__name__}")
    out = [_as_id(i) for i in ids]
    bad = next((i for i in out if not 0 <= i < size), None)
    if bad is not None:
        raise ValueError(f"ids: token id {bad} is outside [0, {size})")
    return out


# ----------------------------------------------------------------------------------------------
_REPEATS = {_sre.MAX_REPEAT, _sre.MIN_REPEAT}


def _variable_repeat(op: Any, av: Any) -> bool:
    return op in _REPEATS and av[1] != av[0] and av[1] > 1


def _children(op: Any, av: Any) -> list:
    """The sub-patterns of one parsed node of a regular expression."""
    if op in _REPEATS or op == getattr(_sre, "POSSESSIVE_REPEAT", None):
        return [av[2]]
    if op == _sre.SUBPATTERN:
        return [av[3]]
    if op == _sre.BRANCH:
        return list(av[1])
    if op in (_sre.ASSERT, _sre.ASSERT_NOT):
        return [av[1]]
    if op == getattr(_sre, "ATOMIC_GROUP", None):
        return [av]
    if op == _sre.GROUPREF_EXISTS:
        return [p for p in av[1:] if p is not None]
    return []


def _nested_repeat(tree: Any, inside: bool = False) -> bool:
    """Whether a repeat that may match a variable number of times, or an alternation with an alternative
    that is not one character wide, sits inside such a repeat: the shapes (``(a+)+``,
    ``(a*b?)*``, ``(a|aa)+``) whose backtracking can take exponential time."""
    for op, av in tree:
        variable = _variable_repeat(op, av)
        wide_branch = op == _sre.BRANCH and any(alt.getwidth() != (1, 1) for alt in av[1])
        if inside and (variable or wide_branch):  # (a+)+, or (a|aa)+: many ways to split one text
            return True
        if any(_nested_repeat(sub, inside or variable) for sub in _children(op, av)):
            return True
    return False


def compile_pattern(pattern: object) -> re.Pattern:
    """The compiled pre-tokenization ``pattern``; ``ValueError`` naming it when it is not a string, does
    not compile, or nests a variable repeat or an alternation inside a variable repeat (catastrophic
    backtracking, e.g. ``(a+)+$``, ``(a|aa)+$``)."""
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str (a regular expression), got {type(pattern).__name__}")
    try:
        compiled = re.compile(pattern)
        tree = _sre_parse.parse(pattern)
    except (re.error, OverflowError, RecursionError) as err:
        raise ValueError(f"pattern={pattern!r} is not a valid regular expression: {err}") from None
    if _nested_repeat(tree):
        raise ValueError(f"pattern={pattern!r} nests a repeat or an alternation inside a repeat (like '(a+)+' or "
                         "'(a|aa)+'), whose matching can take exponential time; write it without nested quantifiers")
    return compiled


def _bytes_to_unicode() -> list[str]:
    """GPT-2's printable stand-in for each byte (the display form Hugging Face ByteLevel uses)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return [table[b] for b in range(256)]


BYTE_DISPLAY = _bytes_to_unicode()


def _display(data: bytes) -> str:
    return "".join(BYTE_DISPLAY[b] for b in data)


def _merge_word(word: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Replace the non-overlapping occurrences of ``pair`` in ``word``, left to right."""
    a, b = pair
    out, i, n = [], 0, len(word)
    while i < n:
        if i + 1 < n and word[i] == a and word[i + 1] == b:
            out.append(new_id)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def _pairs(word: Sequence[int]) -> Counter:
    return Counter(zip(word, word[1:]))


class ByteLevelBPE:
    """Byte-level BPE tokenizer package ``(N, tau, delta)`` (ftip-000E); rules in the module docstring.

    Build one with :meth:`train` or from an explicit merge list (merges are part of the
    specification: a different list gives a different ``tau`` on the same text).
    """

    FORMAT = "ftipbook.ByteLevelBPE/1"

    def __init__(
        self,
        merges: Sequence[tuple[int, int]] = (),
        *,
        normalizer: Normalizer = Normalizer(),
        specials: Sequence[str] = DEFAULT_SPECIALS,
        pattern: str = PRETOKENIZE_PATTERN,
    ) -> None:
        if not isinstance(normalizer, Normalizer):
            raise TypeError(f"normalizer must be a Normalizer, got {type(normalizer).__name__}")
        self.normalizer = normalizer
        self._splitter = compile_pattern(pattern)
        self.pattern = pattern
        self.merges: tuple[tuple[int, int], ...] = ()
        merged, lengths = [], [1] * 256
        for k, pair in enumerate(merges):
            if not (isinstance(pair, Sequence) and len(pair) == 2):
                raise ValueError(f"merge {k} must be a pair of ids, got {pair!r}")
            a, b = int(pair[0]), int(pair[1])
            if not (0 <= a < 256 + k and 0 <= b < 256 + k):
                raise ValueError(f"merge {k} = {pair!r} uses an id that is not yet defined (ids < {256 + k} exist)")
            merged.append((a, b))
            lengths.append(lengths[a] + lengths[b])
            if lengths[-1] > MAX_TOKEN_BYTES:
                raise ValueError(f"merge {k} = {pair!r} builds a token of {lengths[-1]} bytes, more than "
                                 f"MAX_TOKEN_BYTES={MAX_TOKEN_BYTES}; the merge table is damaged or hostile")
        if sum(lengths) > MAX_TOTAL_TOKEN_BYTES:
            raise ValueError(f"the merges spell {sum(lengths)} token bytes in all, more than "
                             f"MAX_TOTAL_TOKEN_BYTES={MAX_TOTAL_TOKEN_BYTES}")
        token_bytes = [bytes([b]) for b in range(256)]
        for a, b in merged:
            token_bytes.append(token_bytes[a] + token_bytes[b])
        if len(set(merged)) != len(merged):
            raise ValueError("the merge list repeats a pair")
        self.merges = tuple(merged)
        self._ranks = {pair: k for k, pair in enumerate(self.merges)}
        self._token_bytes = token_bytes
        self.vocab = Vocab.with_specials([_display(t) for t in token_bytes], tuple(specials))
        self._cache: dict[str, tuple[int, ...]] = {}

    # -- training --------------------------------------------------------------------------------
    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        num_merges: int,
        *,
        normalizer: Normalizer = Normalizer(),
        specials: Sequence[str] = DEFAULT_SPECIALS,
        pattern: str = PRETOKENIZE_PATTERN,
        min_count: int = 2,
    ) -> ByteLevelBPE:
        """Learn up to ``num_merges`` merges from ``texts`` (deterministic; see the module docstring).

        Training stops early when the best pair occurs fewer than ``min_count`` times.
        """
        if not isinstance(num_merges, int) or isinstance(num_merges, bool) or num_merges < 0:
            raise ValueError(f"num_merges must be an int >= 0, got {num_merges!r}")
        if not isinstance(min_count, int) or min_count < 1:
            raise ValueError(f"min_count must be an int >= 1, got {min_count!r}")
        if isinstance(texts, str) or not isinstance(texts, Iterable):
            raise TypeError(f"texts must be an iterable of str (a corpus), got {type(texts).__name__}")
        splitter = compile_pattern(pattern)
        chunks: Counter = Counter()
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] must be a str, got {type(text).__name__}")
            chunks.update(splitter.findall(normalizer(text)))
        words = [list(c.encode("utf-8")) for c in chunks]
        counts = list(chunks.values())
        stats: Counter = Counter()
        where: dict[tuple[int, int], set[int]] = {}
        for w, (word, n) in enumerate(zip(words, counts)):
            for pair, k in _pairs(word).items():
                stats[pair] += k * n
                where.setdefault(pair, set()).add(w)
        heap = [(-c, pair) for pair, c in stats.items()]
        heapq.heapify(heap)
        merges: list[tuple[int, int]] = []
        while len(merges) < num_merges and heap:
            neg, pair = heapq.heappop(heap)
            if stats.get(pair, 0) != -neg:
                continue  # stale entry: the count changed after it was pushed
            if -neg < min_count:
                break
            new_id = 256 + len(merges)
            merges.append(pair)
            changed = set()
            for w in sorted(where.pop(pair)):
                old = words[w]
                new = _merge_word(old, pair, new_id)
                for p, k in _pairs(old).items():
                    stats[p] -= k * counts[w]
                    changed.add(p)
                for p, k in _pairs(new).items():
                    stats[p] += k * counts[w]
                    where.setdefault(p, set()).add(w)
                    changed.add(p)
                words[w] = new
            for p in changed:
                if stats[p] > 0:
                    heapq.heappush(heap, (-stats[p], p))
                else:
                    del stats[p]
            stats.pop(pair, None)
        return cls(merges, normalizer=normalizer, specials=specials, pattern=pattern)

    # -- the maps ------------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @property
    def eos_id(self) -> int:
        return self.vocab.special_id("eos")

    @property
    def pad_id(self) -> int:
        return self.vocab.special_id("pad")

    @property
    def bos_id(self) -> int:
        return self.vocab.special_id("bos")

    def normalize(self, text: str) -> str:
        """The declared normalization ``N``."""
        return self.normalizer(text)

    def pretokenize(self, text: str) -> list[str]:
        """The chunks of ``N(text)`` that merges never cross."""
        return self._splitter.findall(self.normalize(text))

    def _encode_chunk(self, chunk: str) -> tuple[int, ...]:
        cached = self._cache.get(chunk)
        if cached is not None:
            return cached
        try:
            word = list(chunk.encode("utf-8"))
        except UnicodeEncodeError as err:
            raise ValueError(f"text is not valid Unicode (lone surrogate {chunk[err.start]!r}); it has no UTF-8 bytes") from None
        ranks = self._ranks
        while len(word) > 1:
            best = min(zip(word, word[1:]), key=lambda p: ranks.get(p, len(ranks)))
            rank = ranks.get(best)
            if rank is None:
                break
            word = _merge_word(word, best, 256 + rank)
        out = tuple(word)
        if len(self._cache) >= 1 << 18:
            self._cache.clear()
        self._cache[chunk] = out
        return out

    def encode(self, text: str, *, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """``tau(text)``: ids of ``N(text)``; control tokens only where ``add_bos``/``add_eos`` ask.

        Text that spells a control token (``"<|eos|>"``) is encoded as ordinary bytes.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        ids = [self.bos_id] if add_bos else []
        for chunk in self.pretokenize(text):
            ids.extend(self._encode_chunk(chunk))
        if add_eos:
            ids.append(self.eos_id)
        return ids

    def decode(self, ids: Sequence[int], *, skip_special: bool = False, errors: str = "replace") -> str:
        """``delta(ids)``: the bytes of the ids, read as UTF-8; control tokens as their pieces.

        A canonical encoding always holds valid UTF-8. Any other sequence (e.g. a generated one
        that stops inside a character) is decoded with ``errors`` (``"replace"``, ``"strict"``, ...).
        """
        ids = _check_ids(ids, self.vocab_size)
        parts, run = [], bytearray()
        for i in ids:
            if i < len(self._token_bytes):
                run += self._token_bytes[i]
                continue
            parts.append(run.decode("utf-8", errors))
            run = bytearray()
            if not skip_special:
                parts.append(self.vocab.pieces[i])
        parts.append(run.decode("utf-8", errors))
        return "".join(parts)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes a regular token stands for (``ValueError`` for a control token)."""
        if not (isinstance(token_id, int) and 0 <= token_id < len(self._token_bytes)):
            raise ValueError(f"token id {token_id!r} is not a regular token id in [0, {len(self._token_bytes)})")
        return self._token_bytes[token_id]

    def tokenize(self, text: str) -> list[str]:
        """The pieces of ``encode(text)`` (bytes shown in GPT-2's printable form, ``Ġ`` = space)."""
        return [self.vocab.pieces[i] for i in self.encode(text)]

    # -- serialization ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-serializable description from which :meth:`from_dict` rebuilds the same maps."""
        specials = sorted(self.vocab.special, key=self.vocab.special.get)
        return {
            "format": self.FORMAT,
            "normalizer": self.normalizer.to_dict(),
            "pattern": self.pattern,
            "merges": [list(m) for m in self.merges],
            "specials": specials,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ByteLevelBPE:
        """The tokenizer a :meth:`to_dict` description specifies; ``ValueError`` naming the first
        field that is missing or of the wrong kind."""
        if not isinstance(data, Mapping):
            raise ValueError(f"a tokenizer description is a mapping, got {type(data).__name__}")
        if data.get("format") != cls.FORMAT:
            raise ValueError(f"not a {cls.FORMAT} description (format={data.get('format')!r})")
        fields = {"format", "normalizer", "pattern", "merges", "specials"}
        if set(data) != fields:
            raise ValueError(f"tokenizer description fields {sorted(data)}; expected exactly {sorted(fields)}")
        merges, specials, normalizer = data["merges"], data["specials"], data["normalizer"]
        if not (isinstance(merges, (list, tuple)) and all(
                isinstance(m, (list, tuple)) and len(m) == 2
                and all(isinstance(x, int) and not isinstance(x, bool) for x in m) for m in merges)):
            raise ValueError("tokenizer description 'merges' must be a list of [left, right] token-id pairs")
        if not (isinstance(specials, (list, tuple)) and all(isinstance(x, str) for x in specials)):
            raise ValueError(f"tokenizer description 'specials' must be a list of names, got {specials!r}")
        if not (isinstance(normalizer, Mapping) and all(isinstance(v, bool) for v in normalizer.values())):
            raise ValueError(f"tokenizer description 'normalizer' must map flags to booleans, got {normalizer!r}")
        if not isinstance(data["pattern"], str):
            raise ValueError(f"tokenizer description 'pattern' must be a string, got {data['pattern']!r}")
        compile_pattern(data["pattern"])
        return cls([tuple(m) for m in merges], normalizer=Normalizer.from_dict(normalizer),
                   specials=tuple(specials), pattern=data["pattern"])

    def canonical_json(self) -> str:
        """:meth:`to_dict` as JSON with sorted keys and no spaces: the text :meth:`sha256` hashes."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=True)

    def sha256(self) -> str:
        """SHA-256 of the canonical JSON: equal hashes mean equal tokenizer specifications."""
        return hashlib.sha256(self.canonical_json().encode("ascii")).hexdigest()

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_dict` and its :meth:`sha256` (key ``"sha256"``) to ``path`` as JSON, atomically
        (:func:`ftipbook.atomic.write_text`)."""
        write_text(path, json.dumps({**self.to_dict(), "sha256": self.sha256()}, indent=1, sort_keys=True) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> ByteLevelBPE:
        """Read a tokenizer written by :meth:`save`, checked against its recorded SHA-256; ``ValueError``
        naming ``path`` when it is not one or differs from what was saved."""
        data = read_json(path)
        recorded = data.pop("sha256", None)
        try:
            tok = cls.from_dict(data)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{path}: {err}") from None
        if recorded != tok.sha256():
            raise ValueError(f"{path} records SHA-256 {str(recorded)[:16]}..., but its tokenizer hashes to "
                             f"{tok.sha256()[:16]}...: the file was changed or damaged (or has no 'sha256' record)")
        return tok

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ByteLevelBPE) and self.to_dict() == other.to_dict()

    __hash__ = None  # mutable cache inside; compare with == or sha256()

    def __repr__(self) -> str:
        return f"ByteLevelBPE(merges={len(self.merges)}, vocab_size={self.vocab_size}, normalizer={self.normalizer})"

    # -- interop ---------------------------------------------------------------------------------
    def to_hf(self) -> Any:
        """The same tokenizer as a Hugging Face ``tokenizers.Tokenizer`` (same ids on ASCII text).

        Two differences remain: Hugging Face runs :data:`PRETOKENIZE_PATTERN` with Oniguruma,
        whose ``\\w`` also counts combining marks (so ``"İ\\u0316"`` is one chunk there, two
        here), and it matches the text of a control token (``"<|eos|>"``) as that token, which
        :meth:`encode` never does.
        """
        try:
            from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers
        except ImportError as err:
            raise ImportError("to_hf() needs the Hugging Face 'tokenizers' package (pip install tokenizers)") from err
        regular = len(self._token_bytes)
        vocab = {p: i for i, p in enumerate(self.vocab.pieces[:regular])}
        merges = [(self.vocab.pieces[a], self.vocab.pieces[b]) for a, b in self.merges]
        tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=False))
        steps = []
        if self.normalizer.nfkc:
            steps.append(normalizers.NFKC())
        if self.normalizer.lowercase:
            steps.append(normalizers.Lowercase())
            if self.normalizer.nfkc:
                steps.append(normalizers.NFKC())
        if self.normalizer.collapse_whitespace:
            steps.append(normalizers.Replace(Regex(r"\s+"), " "))
        if steps:
            tok.normalizer = normalizers.Sequence(steps)
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(self.pattern), behavior="isolated"),
             pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
        )
        tok.decoder = decoders.ByteLevel()
        specials = sorted(self.vocab.special.values())
        tok.add_special_tokens([self.vocab.pieces[i] for i in specials])
        return tok

    def to_tiktoken(self) -> Any:
        """The same tokenizer (ftip-000E) as a ``tiktoken.Encoding`` (same ids on ASCII text, when
        the normalizer is the identity: tiktoken has no normalization step).

        tiktoken ranks a merge by the id of the token it makes; here that id is ``256 + `` the
        merge's place in :attr:`merges`, so both apply merges in the same order. It runs
        :data:`PRETOKENIZE_PATTERN` with Rust's regex engine, whose Unicode classes need not
        split every script as Python's ``re`` does, so equality is only claimed for ASCII text.
        """
        try:
            import tiktoken
        except ImportError as err:
            raise ImportError("to_tiktoken() needs the optional 'tiktoken' package (pip install tiktoken)") from err
        if self.normalizer != Normalizer():
            raise ValueError(f"tiktoken has no normalization step; this tokenizer declares {self.normalizer}, "
                             "so only one with Normalizer() (the identity) converts")
        ranks = {piece: i for i, piece in enumerate(self._token_bytes)}
        if len(ranks) != len(self._token_bytes):
            raise ValueError("two token ids spell the same bytes; tiktoken needs one id per byte string")
        specials = {self.vocab.pieces[i]: i for i in self.vocab.special.values()}
        return tiktoken.Encoding(f"ftipbook-bpe-{self.sha256()[:12]}", pat_str=self.pattern,
                                 mergeable_ranks=ranks, special_tokens=specials)


# ----------------------------------------------------------------------------------------------
class ToyTokenizer:
    """The four-stage toy of ftip-000F: ``N`` lowercases and collapses whitespace, ``T`` splits
    ``N(s)`` at spaces into words of a fixed word list, ``D`` joins words with one space.

    ``D(T(N("A  B"))) == "a b" != "A  B"`` while ``T(N(D(T(N(s))))) == T(N(s))``: the token
    sequence is stable although case and the repeated space are lost.
    """

    def __init__(self, words: Sequence[str], *, specials: Sequence[str] = ("eos",),
                 normalizer: Normalizer = Normalizer(lowercase=True, collapse_whitespace=True)) -> None:
        for w in words:
            if not isinstance(w, str) or not w or any(ch.isspace() for ch in w):
                raise ValueError(f"toy words must be nonempty strings without whitespace, got {w!r}")
        self.normalizer = normalizer
        self.vocab = Vocab.with_specials(list(words), specials)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @property
    def eos_id(self) -> int | None:
        return self.vocab.special.get("eos")

    def normalize(self, text: str) -> str:
        """``N``."""
        return self.normalizer(text)

    def tokenize(self, text: str) -> tuple[str, ...]:
        """``T``: the words of already-normalized ``text``, split at whitespace."""
        words = tuple(text.split())
        unknown = [w for w in words if w not in self.vocab or self.vocab.id_of(w) in self.vocab.special_ids]
        if unknown:
            raise ValueError(f"word {unknown[0]!r} is not in the toy vocabulary {list(self.vocab.pieces)}")
        return words

    def detokenize(self, words: Sequence[str]) -> str:
        """``D``: join words with one space."""
        return " ".join(words)

    def encode(self, text: str) -> list[int]:
        """``tau = T o N`` as ids."""
        return [self.vocab.id_of(w) for w in self.tokenize(self.normalize(text))]

    def decode(self, ids: Sequence[int]) -> str:
        """``delta``: ids to pieces, then ``D``."""
        return self.detokenize([self.vocab.pieces[i] for i in _check_ids(ids, self.vocab_size)])


# ----------------------------------------------------------------------------------------------
class HFTokenizer:
    """A Hugging Face ``tokenizers.Tokenizer`` (or a ``transformers`` fast tokenizer) as a
    :class:`TokenizerLike`. ``eos_token`` names its end-of-sequence token, if it has one."""

    def __init__(self, tokenizer: Any, *, eos_token: str | None = None) -> None:
        tokenizer = getattr(tokenizer, "backend_tokenizer", tokenizer)
        if not all(hasattr(tokenizer, a) for a in ("encode", "decode", "get_vocab_size", "token_to_id")):
            raise TypeError(f"expected a tokenizers.Tokenizer, got {type(tokenizer).__name__}")
        self.tokenizer = tokenizer
        self._eos_id = None
        if eos_token is not None:
            self._eos_id = tokenizer.token_to_id(eos_token)
            if self._eos_id is None:
                raise ValueError(f"eos_token {eos_token!r} is not in this tokenizer's vocabulary")

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size(with_added_tokens=True)

    @property
    def eos_id(self) -> int | None:
        return self._eos_id

    def normalize(self, text: str) -> str:
        norm = self.tokenizer.normalizer
        return text if norm is None else norm.normalize_str(text)

    def encode(self, text: str) -> list[int]:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(_check_ids(ids, self.vocab_size), skip_special_tokens=False)


class TiktokenTokenizer:
    """A ``tiktoken`` encoding (an ``Encoding`` object or its name, e.g. ``"gpt2"``) as a
    :class:`TokenizerLike`. tiktoken does not normalize, so ``N`` is the identity.
    ``eos_token`` names the special token that serves as ``eos`` (``None``: there is none)."""

    def __init__(self, encoding: Any, *, eos_token: str | None = "<|endoftext|>") -> None:
        if isinstance(encoding, str):
            try:
                import tiktoken
            except ImportError as err:
                raise ImportError(
                    "TiktokenTokenizer needs the optional 'tiktoken' package (pip install tiktoken); "
                    "ftipbook's own ByteLevelBPE or HFTokenizer need nothing extra"
                ) from err
            encoding = tiktoken.get_encoding(encoding)
        if not all(hasattr(encoding, a) for a in ("encode", "decode", "n_vocab", "special_tokens_set")):
            raise TypeError(f"expected a tiktoken Encoding or its name, got {type(encoding).__name__}")
        self.encoding = encoding
        self._eos_id = None
        if eos_token is not None:
            if eos_token not in encoding.special_tokens_set:
                raise ValueError(f"eos_token {eos_token!r} is not a special token of this encoding; "
                                 f"it has {sorted(encoding.special_tokens_set)}")
            self._eos_id = encoding.encode_single_token(eos_token)

    @property
    def vocab_size(self) -> int:
        return self.encoding.n_vocab

    @property
    def eos_id(self) -> int | None:
        return self._eos_id

    def normalize(self, text: str) -> str:
        return text

    def encode(self, text: str) -> list[int]:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return list(self.encoding.encode(text, disallowed_special=()))

    def decode(self, ids: Sequence[int]) -> str:
        return self.encoding.decode(_check_ids(ids, self.vocab_size))
