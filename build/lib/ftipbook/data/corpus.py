"""Documents and the data sources of the book's toy pretraining corpus (ftip-0015, ftip-0016, ftip-0072).

A *source* ``s`` is a document law ``Q_s``: ``source.sample(rng)`` draws one :class:`Document`
from it with a ``random.Random``, and ``source.documents(n, seed)`` draws ``n`` of them, so a
corpus is a function of its seed. A document's ``doc_id`` names the element of the document
space it is (``"add2:17+58"``, ``"prose:0412"``), so two draws of the same document carry the
same id: corpora are multisets, and duplicates are real. Sources whose support is small also
expose it exactly (:class:`FiniteSource`: ``support()`` and ``probability(event)`` in exact
``Fraction`` arithmetic).

Nothing is downloaded. The generated sources are verifiable tasks (:class:`ArithmeticSource`:
``"17+58=75"``; :class:`ModularAdditionSource`; :class:`ReverseSource`), templated English
(:class:`TemplateSource`) and small Python-like code (:class:`CodeSource`); the real-text source
(:class:`ProseSource`) is a public-domain snapshot shipped with the package (``texts/`` beside
this module holds its licence and the script that produced it). :class:`BenchmarkSource` is a
*protected* evaluation collection: decontamination removes its n-grams from training data, and
:class:`~ftipbook.data.mixture.SourceMixture` refuses it as a training source.
:func:`toy_sources` lists the sources of the book's standard mixture.
"""
from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from importlib import resources

#: SHA-256 of ``texts/devils_dictionary.txt`` (checked each time the file is read).
PROSE_SHA256 = "bc17ddc61f394c4fd562650a5bafa6eea20acc5458f4a53c08ebfc60b4694b84"
#: An entry of the dictionary starts at a line ``HEADWORD, part-of-speech.``.
_ENTRY_START = re.compile(r"(?m)^(?=[A-Z][A-Z'\- .]*[A-Z.]?, [a-z]+\.)")


@dataclass(frozen=True)
class Document:
    """One document: its ``text``, the ``source`` it came from and its ``doc_id``.

    For a verifiable task the text ends with the reference ``answer``; :attr:`prompt` is the
    rest, so a model is scored on producing ``answer`` after ``prompt``.
    """

    text: str
    source: str
    doc_id: str
    answer: str | None = None

    def __post_init__(self) -> None:
        for name in ("text", "source", "doc_id"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"Document.{name} must be a str, got {type(getattr(self, name)).__name__}")
        if self.answer is not None and not (self.answer and self.text.endswith(self.answer)):
            raise ValueError(f"the answer {self.answer!r} must be a nonempty suffix of the text {self.text!r}")

    @property
    def prompt(self) -> str:
        """The text before the answer (the whole text when there is no answer)."""
        return self.text if self.answer is None else self.text[: len(self.text) - len(self.answer)]


def _check_rng(rng: random.Random) -> None:
    if not isinstance(rng, random.Random):
        raise TypeError(f"sources draw from a random.Random, got {type(rng).__name__}")


class Source:
    """A document law ``Q_s`` (ftip-0016); subclasses implement :meth:`sample`."""

    name: str
    #: Protected evaluation collections are never training sources.
    protected: bool = False

    def sample(self, rng: random.Random) -> Document:
        """One document drawn from ``Q_s`` with ``rng``."""
        raise NotImplementedError

    def documents(self, n: int, seed: int) -> list[Document]:
        """``n`` independent draws from ``Q_s`` with ``random.Random(seed)``."""
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"n must be an int >= 0, got {n!r}")
        rng = random.Random(seed)
        return [self.sample(rng) for _ in range(n)]


class FiniteSource(Source):
    """A source with a finite, enumerable support: ``support()`` lists ``(document, probability)``."""

    def support(self) -> Iterator[tuple[Document, Fraction]]:
        """Every document of positive probability with its probability, in a fixed order."""
        raise NotImplementedError

    def probability(self, event: Callable[[Document], bool]) -> Fraction:
        """``Q_s(A) = sum of Q_s(d) over documents d in A``, exactly; ``event`` is A's indicator."""
        return sum((p for d, p in self.support() if event(d)), Fraction(0))


# --- verifiable tasks ---------------------------------------------------------------------------
_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
_OP_WORDS = {"+": "plus", "-": "minus", "*": "times"}


@dataclass(frozen=True)
class ArithmeticSource(FiniteSource):
    """``digits``-digit operands ``a, b`` drawn uniformly; the answer is ``a op b`` in decimal.

    ``style="symbolic"`` writes ``"17+58=75"`` (prompt ``"17+58="``); ``style="words"`` writes
    ``"What is 17 plus 58? Answer: 75"``, the same task in a paraphrased format.
    """

    digits: int = 2
    op: str = "+"
    style: str = "symbolic"
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.digits, int) or not 1 <= self.digits <= 6:
            raise ValueError(f"digits must be an int in 1..6, got {self.digits!r}")
        if self.op not in _OPS:
            raise ValueError(f"op must be one of {sorted(_OPS)}, got {self.op!r}")
        if self.style not in ("symbolic", "words"):
            raise ValueError(f"style must be 'symbolic' or 'words', got {self.style!r}")
        if not self.name:
            kind = {"+": "add", "-": "sub", "*": "mul"}[self.op]
            object.__setattr__(self, "name", f"{kind}{self.digits}" + ("w" if self.style == "words" else ""))

    @property
    def low(self) -> int:
        return 1 if self.digits == 1 else 10 ** (self.digits - 1)

    def document(self, a: int, b: int) -> Document:
        """The document of the item ``a op b``."""
        answer = str(_OPS[self.op](a, b))
        if self.style == "symbolic":
            prompt = f"{a}{self.op}{b}="
        else:
            prompt = f"What is {a} {_OP_WORDS[self.op]} {b}? Answer: "
        return Document(prompt + answer, self.name, f"{self.name}:{a}{self.op}{b}", answer)

    def sample(self, rng: random.Random) -> Document:
        _check_rng(rng)
        high = 10**self.digits
        return self.document(rng.randrange(self.low, high), rng.randrange(self.low, high))

    def support(self) -> Iterator[tuple[Document, Fraction]]:
        operands = range(self.low, 10**self.digits)
        p = Fraction(1, len(operands) ** 2)
        return ((self.document(a, b), p) for a in operands for b in operands)


@dataclass(frozen=True)
class ModularAdditionSource(FiniteSource):
    """``"a+b=c"`` with ``a, b`` uniform in ``0..modulus-1`` and ``c = (a + b) mod modulus``."""

    modulus: int = 97
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.modulus, int) or self.modulus < 2:
            raise ValueError(f"modulus must be an int >= 2, got {self.modulus!r}")
        if not self.name:
            object.__setattr__(self, "name", f"mod{self.modulus}")

    def document(self, a: int, b: int) -> Document:
        answer = str((a + b) % self.modulus)
        return Document(f"{a}+{b}={answer}", self.name, f"{self.name}:{a}+{b}", answer)

    def sample(self, rng: random.Random) -> Document:
        _check_rng(rng)
        return self.document(rng.randrange(self.modulus), rng.randrange(self.modulus))

    def support(self) -> Iterator[tuple[Document, Fraction]]:
        p = Fraction(1, self.modulus**2)
        return ((self.document(a, b), p) for a in range(self.modulus) for b in range(self.modulus))


@dataclass(frozen=True)
class ReverseSource(Source):
    """``"reverse abcd: dcba"``: a word of ``min_len..max_len`` letters drawn from ``alphabet``."""

    min_len: int = 3
    max_len: int = 8
    alphabet: str = "abcdefghij"
    name: str = "reverse"

    def __post_init__(self) -> None:
        if not (isinstance(self.min_len, int) and isinstance(self.max_len, int) and 1 <= self.min_len <= self.max_len):
            raise ValueError(f"need 1 <= min_len <= max_len, got {self.min_len!r}, {self.max_len!r}")
        if not self.alphabet or len(set(self.alphabet)) != len(self.alphabet) or not self.alphabet.isalpha():
            raise ValueError(f"alphabet must be distinct letters, got {self.alphabet!r}")

    def sample(self, rng: random.Random) -> Document:
        _check_rng(rng)
        word = "".join(rng.choice(self.alphabet) for _ in range(rng.randint(self.min_len, self.max_len)))
        return Document(f"reverse {word}: {word[::-1]}", self.name, f"{self.name}:{word}", word[::-1])


# --- templated text and code ---------------------------------------------------------------------
_NAMES = ("Ada", "Ben", "Cleo", "Dev", "Emil", "Fay", "Gus", "Hana")
_ADJECTIVES = ("small", "red", "quiet", "old", "bright", "heavy", "quick", "round")
_NOUNS = ("cat", "lamp", "river", "stone", "robot", "garden", "letter", "kettle")
_VERBS = ("sees", "moves", "finds", "paints", "counts", "follows", "lifts", "hides")
_PLACES = ("market", "library", "harbor", "kitchen", "forest", "station")
_TEMPLATES = (
    "The {adj} {noun} {verb} the {noun2}.",
    "{name} {verb} a {adj} {noun} near the {place}.",
    "{name} has {k} {noun}s and gives {j} to {name2}, so {name} keeps {rest}.",
    "If the {noun} is {adj}, then the {noun2} is not {adj2}.",
    "Every morning {name} walks to the {place} with a {adj} {noun}.",
)


@dataclass(frozen=True)
class TemplateSource(Source):
    """Templated English: ``min_sentences..max_sentences`` sentences per document, each one of five
    templates filled with names, nouns, adjectives, verbs, places and small counts.

    The counting template is verifiable in place: ``keeps {rest}`` with ``rest = k - j``.
    """

    min_sentences: int = 1
    max_sentences: int = 4
    name: str = "templates"

    def __post_init__(self) -> None:
        if not (isinstance(self.min_sentences, int) and isinstance(self.max_sentences, int)
                and 1 <= self.min_sentences <= self.max_sentences):
            raise ValueError(f"need 1 <= min_sentences <= max_sentences, got {self.min_sentences!r}, {self.max_sentences!r}")

    @staticmethod
    def sentence(rng: random.Random) -> str:
        k = rng.randint(2, 9)
        j = rng.randint(1, k - 1)
        name, name2 = rng.sample(_NAMES, 2)
        noun, noun2 = rng.sample(_NOUNS, 2)
        adj, adj2 = rng.sample(_ADJECTIVES, 2)
        return rng.choice(_TEMPLATES).format(
            adj=adj, adj2=adj2, noun=noun, noun2=noun2, verb=rng.choice(_VERBS), name=name, name2=name2,
            place=rng.choice(_PLACES), k=k, j=j, rest=k - j,
        )

    def sample(self, rng: random.Random) -> Document:
        _check_rng(rng)
        n = rng.randint(self.min_sentences, self.max_sentences)
        text = " ".join(self.sentence(rng) for _ in range(n))
        return Document(text, self.name, f"{self.name}:{_digest(text)}")


_FUNCS = ("total", "scale", "shift", "mix", "clip", "step", "blend", "score")
_VARS = ("x", "y", "z", "n", "k")
_CODE_OPS = ("+", "-", "*")


@dataclass(frozen=True)
class CodeSource(Source):
    """Small Python functions: ``def name(x, y):``, ``min_lines..max_lines`` assignments, ``return``.

    Every generated function is valid Python and its value is checkable by running it.
    """

    min_lines: int = 1
    max_lines: int = 5
    name: str = "code"

    def __post_init__(self) -> None:
        if not (isinstance(self.min_lines, int) and isinstance(self.max_lines, int) and 1 <= self.min_lines <= self.max_lines):
            raise ValueError(f"need 1 <= min_lines <= max_lines, got {self.min_lines!r}, {self.max_lines!r}")

    def sample(self, rng: random.Random) -> Document:
        _check_rng(rng)
        args = rng.sample(_VARS[:3], 2)
        known = list(args)
        lines = [f"def {rng.choice(_FUNCS)}({', '.join(args)}):"]
        for i in range(rng.randint(self.min_lines, self.max_lines)):
            target = f"t{i}"
            left, right = rng.choice(known), rng.choice(known + [str(rng.randint(1, 9))])
            lines.append(f"    {target} = {left} {rng.choice(_CODE_OPS)} {right}")
            known.append(target)
        lines.append(f"    return {known[-1]}")
        text = "\n".join(lines) + "\n"
        return Document(text, self.name, f"{self.name}:{_digest(text)}")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


# --- real text -------------------------------------------------------------------------------------
@cache
def prose_text() -> str:
    """The shipped public-domain text (Bierce, *The Devil's Dictionary*, 1911), hash-checked."""
    data = resources.files("ftipbook.data").joinpath("texts/devils_dictionary.txt").read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != PROSE_SHA256:
        raise ValueError(f"texts/devils_dictionary.txt has SHA-256 {digest}, expected {PROSE_SHA256}: the file is damaged")
    return data.decode("ascii")


@cache
def _prose_entries() -> tuple[str, ...]:
    parts = _ENTRY_START.split(prose_text())
    return tuple(p.strip("\n") + "\n" for p in parts[1:])


@dataclass(frozen=True)
class ProseSource(FiniteSource):
    """Real English prose available offline: one document per entry of the shipped dictionary,
    drawn uniformly (the title page and preface are not documents)."""

    name: str = "prose"

    @property
    def entries(self) -> tuple[str, ...]:
        return _prose_entries()

    def document(self, index: int) -> Document:
        return Document(self.entries[index], self.name, f"{self.name}:{index:04d}")

    def sample(self, rng: random.Random) -> Document:
        _check_rng(rng)
        return self.document(rng.randrange(len(self.entries)))

    def support(self) -> Iterator[tuple[Document, Fraction]]:
        p = Fraction(1, len(self.entries))
        return ((self.document(i), p) for i in range(len(self.entries)))


# --- protected evaluation collection ---------------------------------------------------------------
class BenchmarkSource(FiniteSource):
    """A protected evaluation collection ``E`` (ftip-0072): a fixed list of distinct documents.

    It samples uniformly from its items (for evaluation), but it is ``protected``: a training
    mixture refuses it, and :class:`~ftipbook.data.cleaning.Decontaminator` removes its matches.
    """

    protected = True

    def __init__(self, name: str, items: Sequence[Document]) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError("a benchmark needs a nonempty name")
        items = tuple(items)
        if not items:
            raise ValueError(f"benchmark {name!r} has no items")
        if not all(isinstance(d, Document) for d in items):
            raise TypeError("benchmark items must be Documents")
        if len({d.text for d in items}) != len(items):
            raise ValueError(f"benchmark {name!r} lists the same text twice")
        self.name = name
        self.items = items
        self._texts = frozenset(d.text for d in items)

    @classmethod
    def from_source(cls, name: str, source: Source, n: int, seed: int) -> BenchmarkSource:
        """``n`` distinct documents drawn from ``source`` with ``random.Random(seed)`` (in draw order)."""
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be an int >= 1, got {n!r}")
        rng, seen, items = random.Random(seed), set(), []
        for _ in range(100 * n):
            d = source.sample(rng)
            if d.text not in seen:
                seen.add(d.text)
                items.append(d)
                if len(items) == n:
                    return cls(name, items)
        raise ValueError(f"could not draw {n} distinct documents from {source.name!r} in {100 * n} tries")

    def __len__(self) -> int:
        return len(self.items)

    def __contains__(self, doc: object) -> bool:
        return isinstance(doc, Document) and doc.text in self._texts

    def sample(self, rng: random.Random) -> Document:
        _check_rng(rng)
        return self.items[rng.randrange(len(self.items))]

    def support(self) -> Iterator[tuple[Document, Fraction]]:
        p = Fraction(1, len(self.items))
        return ((d, p) for d in self.items)

    def __repr__(self) -> str:
        return f"BenchmarkSource({self.name!r}, {len(self.items)} items)"


@dataclass(frozen=True)
class Excluding(Source):
    """``source`` conditioned on not being an item of ``benchmark`` (rejection sampling).

    Training data drawn from it shares no document text with the benchmark by construction.
    """

    source: Source
    benchmark: BenchmarkSource

    def __post_init__(self) -> None:
        if not isinstance(self.benchmark, BenchmarkSource):
            raise TypeError(f"Excluding needs a BenchmarkSource, got {type(self.benchmark).__name__}")

    @property
    def name(self) -> str:
        return self.source.name

    def sample(self, rng: random.Random) -> Document:
        _check_rng(rng)
        for _ in range(10_000):
            d = self.source.sample(rng)
            if d not in self.benchmark:
                return d
        raise ValueError(f"{self.source.name!r} keeps proposing items of benchmark {self.benchmark.name!r}")


def toy_sources() -> tuple[Source, ...]:
    """The sources of the book's standard mixture, in a fixed order (weights: ``mixture.TOY_WEIGHTS``)."""
    return (
        ArithmeticSource(digits=2),
        ArithmeticSource(digits=3),
        TemplateSource(),
        CodeSource(),
        ProseSource(),
    )
