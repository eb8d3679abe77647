"""Documents and sources (ftip-0015, 0016, 0072): determinism, laws, the shipped real text."""
import ast
import hashlib
import importlib.util
import gzip
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from ftipbook.data.corpus import (
    PROSE_SHA256,
    ArithmeticSource,
    BenchmarkSource,
    CodeSource,
    Document,
    Excluding,
    ModularAdditionSource,
    ProseSource,
    ReverseSource,
    TemplateSource,
    prose_text,
    toy_sources,
)

TEXTS = Path(__file__).resolve().parents[2] / "ftipbook" / "data" / "texts"


def test_document_fields_and_answer_suffix():
    d = Document("17+58=75", "add2", "add2:17+58", "75")
    assert d.prompt == "17+58=" and Document("abc", "s", "s:1").prompt == "abc"
    with pytest.raises(ValueError, match="suffix"):
        Document("17+58=75", "add2", "x", "76")
    with pytest.raises(TypeError, match="text must be a str"):
        Document(5, "s", "i")


@pytest.mark.parametrize("source", list(toy_sources()) + [ModularAdditionSource(11), ReverseSource(),
                                                             ArithmeticSource(2, "*", "words")])
def test_sources_are_seeded_and_reproducible(source):
    a, b, c = source.documents(30, seed=5), source.documents(30, seed=5), source.documents(30, seed=6)
    assert a == b and a != c
    assert all(d.source == source.name and d.doc_id.startswith(source.name + ":") for d in a)
    ids = {}
    for d in a:  # one id names one text
        assert ids.setdefault(d.doc_id, d.text) == d.text


def test_arithmetic_answers_are_correct():
    for d in ArithmeticSource(3).documents(200, seed=0):
        a, rest = d.prompt.split("+")
        assert 100 <= int(a) <= 999 and int(a) + int(rest.rstrip("=")) == int(d.answer) and d.text.count("=") == 1
    w = ArithmeticSource(2, "-", "words").document(17, 58)
    assert w.text == "What is 17 minus 58? Answer: -41" and w.answer == "-41" and w.source == "sub2w"
    assert ModularAdditionSource(7).document(5, 4).text == "5+4=2"
    r = ReverseSource().documents(20, seed=1)
    assert all(d.prompt.split()[1].rstrip(":")[::-1] == d.answer for d in r)
    with pytest.raises(ValueError, match="op must be"):
        ArithmeticSource(op="/")
    with pytest.raises(ValueError, match="digits"):
        ArithmeticSource(digits=0)


def test_finite_support_is_a_law_and_matches_sampling():
    src = ArithmeticSource(1)
    support = list(src.support())
    assert len(support) == 81 and sum(p for _, p in support) == 1
    event = lambda d: int(d.answer) >= 10  # noqa: E731  (a carry)
    exact = src.probability(event)
    assert exact == Fraction(45, 81)  # pairs of 1..9 with a + b >= 10: 1 + 2 + ... + 9
    freq = sum(event(d) for d in src.documents(20000, seed=0)) / 20000
    assert abs(freq - float(exact)) < 0.02
    assert ModularAdditionSource(5).probability(lambda d: d.answer == "0") == Fraction(1, 5)


def test_template_counting_sentence_is_consistent():
    for d in TemplateSource().documents(300, seed=2):
        assert 1 <= d.text.count(".") <= 4
        for s in d.text.split(". "):
            if " gives " in s:
                words = s.split()
                k, j, rest = int(words[2]), int(words[6]), int(words[-1].rstrip("."))
                assert k - j == rest > 0


def test_code_documents_are_valid_python_with_a_return():
    for d in CodeSource().documents(100, seed=3):
        tree = ast.parse(d.text)
        fn = tree.body[0]
        assert isinstance(fn, ast.FunctionDef) and isinstance(fn.body[-1], ast.Return)
        namespace = {}
        exec(compile(tree, "<code>", "exec"), namespace)
        assert isinstance(namespace[fn.name](2, 3), int)


def test_sources_have_different_mean_lengths():
    means = {s.name: sum(len(d.text) for d in s.documents(400, seed=0)) / 400 for s in toy_sources()}
    assert means["add2"] < means["add3"] < means["templates"] < means["prose"]
    assert means["add2"] < means["code"]


def test_prose_snapshot_is_the_recorded_public_domain_text():
    data = (TEXTS / "devils_dictionary.txt").read_bytes()
    assert hashlib.sha256(data).hexdigest() == PROSE_SHA256
    assert PROSE_SHA256 in (TEXTS / "README.md").read_text()
    text = prose_text()
    assert "A Public Domain Text, Copyright Expired" in text and len(data) < 1_000_000
    src = ProseSource()
    assert len(src.entries) == 974
    assert src.entries[0].startswith("ABASEMENT, n.") and src.entries[-1].startswith("ZOOLOGY, n.")
    assert sum(len(e) for e in src.entries) > 0.9 * len(text)  # entries cover the text but the title and preface
    for slur in ("nigger", "negro"):
        assert slur not in text.lower()


def test_snapshot_script_rebuilds_the_file_from_dictd_data():
    spec = importlib.util.spec_from_file_location("make_dd", TEXTS / "make_devils_dictionary.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    shipped = (TEXTS / "devils_dictionary.txt").read_text()
    first = shipped.index("ABASEMENT")
    extra = "".join(f"{h}, n.  Excluded.\n\n" for h in mod.EXCLUDED)  # the dictd file still has them
    raw = "00-database-url\n  http://x\n\n" + shipped[:first] + extra + shipped[first:] + "\n" + mod.ALPHABET_LINE
    assert mod.snapshot(gzip.compress(raw.encode())) == shipped
    with pytest.raises(ValueError, match="title notice"):
        mod.snapshot(gzip.compress(b"something else"))
    with pytest.raises(ValueError, match="excluded headwords"):
        mod.snapshot(gzip.compress(raw.replace("HEBREW, n.  Excluded.\n\n", "").encode()))


def test_benchmark_is_protected_and_exclusion_is_disjoint():
    bench = BenchmarkSource.from_source("add3-heldout", ArithmeticSource(3), 50, seed=9)
    assert len(bench) == 50 and bench.protected and len({d.text for d in bench.items}) == 50
    assert bench.items[0] in bench and Document("1+1=2", "x", "y") not in bench
    assert sum(p for _, p in bench.support()) == 1
    small = BenchmarkSource.from_source("add1-most", ArithmeticSource(1), 70, seed=0)  # 70 of the 81 items
    train = Excluding(ArithmeticSource(1), small).documents(300, seed=1)
    assert not any(d in small for d in train) and {d.text for d in train} | {d.text for d in small.items} == {
        d.text for d, _ in ArithmeticSource(1).support()}
    with pytest.raises(ValueError, match="same text twice"):
        BenchmarkSource("b", [bench.items[0], bench.items[0]])
    with pytest.raises(ValueError, match="distinct documents"):
        BenchmarkSource.from_source("too-big", ArithmeticSource(1), 82, seed=0)
    with pytest.raises(TypeError, match="BenchmarkSource"):
        Excluding(ArithmeticSource(1), ArithmeticSource(2))


def test_bad_arguments():
    with pytest.raises(ValueError, match="n must be"):
        ArithmeticSource().documents(-1, seed=0)
    with pytest.raises(TypeError, match="random.Random"):
        ArithmeticSource().sample(0)
    with pytest.raises(ValueError, match="min_sentences"):
        TemplateSource(3, 1)
    with pytest.raises(ValueError, match="min_lines"):
        CodeSource(0)
    with pytest.raises(ValueError, match="alphabet"):
        ReverseSource(alphabet="aa")
    with pytest.raises(ValueError, match="modulus"):
        ModularAdditionSource(1)


def test_toy_sources_are_fixed():
    assert [s.name for s in toy_sources()] == ["add2", "add3", "templates", "code", "prose"]
    assert Counter(type(s).__name__ for s in toy_sources())["ArithmeticSource"] == 2
