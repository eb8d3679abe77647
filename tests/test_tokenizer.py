"""Tokenizer package (ftip-000D, 000E, 000F): normalization, vocabulary, byte-level BPE, adapters."""
import hashlib
import json
import sys
from collections import Counter
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ftipbook.tokenizer import (
    PRETOKENIZE_PATTERN,
    ByteLevelBPE,
    HFTokenizer,
    Normalizer,
    TiktokenTokenizer,
    TokenizerLike,
    ToyTokenizer,
    Vocab,
    roundtrip_check,
)

NORMALIZERS = [Normalizer(a, b, c) for a in (False, True) for b in (False, True) for c in (False, True)]

CORPUS = [
    "The cat sat on the mat. The cat ate 12 fish, then 345 more!",
    "In 1905 the theory was new; in 2025 it is taught in every school.",
    "def add(a, b):\n    return a + b\n\nprint(add(2, 3))",
    "Résumé, naïve café: ünïcödé is handled byte by byte. 漢字 and emoji 🙂 too.",
] * 5


@cache
def trained(nfkc: bool = True, lowercase: bool = False, collapse: bool = False) -> ByteLevelBPE:
    return ByteLevelBPE.train(CORPUS, 120, normalizer=Normalizer(nfkc, lowercase, collapse), min_count=1)


# --- Normalizer ---------------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(st.text())
def test_normalizer_is_idempotent(s):
    for n in NORMALIZERS:
        once = n(s)
        assert n(once) == once


def test_normalizer_steps():
    assert Normalizer()("A\u00a0 B") == "A\u00a0 B"
    assert Normalizer(nfkc=True)("ﬁ\u00a0x²") == "fi x2"
    assert Normalizer(lowercase=True)("ABC Ä") == "abc ä"
    assert Normalizer(collapse_whitespace=True)("a \t\n b  c") == "a b c"
    # NFKC before lowercasing: a modifier capital becomes a capital, then lowercase
    assert Normalizer(nfkc=True, lowercase=True)("\u1d2c") == "a"
    # lowercasing U+0130 yields i + U+0307, out of canonical order before U+0316; NFKC repairs it
    assert Normalizer(nfkc=True, lowercase=True)("\u0130\u0316") == "i\u0316\u0307"


def test_normalizer_bad_input():
    with pytest.raises(TypeError, match="takes a str"):
        Normalizer()(b"bytes")
    with pytest.raises(TypeError, match="must be a bool"):
        Normalizer(nfkc=1)
    with pytest.raises(ValueError, match="unknown Normalizer fields"):
        Normalizer.from_dict({"nfkc": True, "strip": True})


# --- Vocab ----------------------------------------------------------------------------------------
def test_vocab_ids_contiguous_and_specials_named():
    v = Vocab.with_specials(["a", "b", "c"], ("eos", "pad"))
    assert len(v) == 5 and [v.id_of(p) for p in v.pieces] == list(range(5))
    assert v.special == {"eos": 3, "pad": 4} and v.eos_id == 3 and v.piece(3) == "<|eos|>"
    assert v.special_ids == frozenset({3, 4}) and "b" in v and "z" not in v
    assert v == Vocab.with_specials(["a", "b", "c"], ("eos", "pad")) and len({v, Vocab(v.pieces, v.special)}) == 1
    assert v != Vocab.with_specials(["a", "b", "c"], ("pad", "eos"))


def test_vocab_refuses_bad_definitions():
    with pytest.raises(ValueError, match="nonempty"):
        Vocab(())
    with pytest.raises(ValueError, match="unique"):
        Vocab(("a", "a"))
    with pytest.raises(ValueError, match="must have piece"):
        Vocab(("a", "b"), {"eos": 1})
    with pytest.raises(ValueError, match="identifiers"):
        Vocab(("a", "<|e s|>"), {"e s": 1})
    with pytest.raises(ValueError, match="outside"):
        Vocab(("a",), {"eos": 3})
    v = Vocab(("a",))
    with pytest.raises(KeyError, match="no control token 'eos'"):
        _ = v.eos_id
    with pytest.raises(KeyError, match="not in the vocabulary"):
        v.id_of("q")
    with pytest.raises(ValueError, match="outside"):
        v.piece(1)


# --- BPE training -------------------------------------------------------------------------------
def naive_train(texts, num_merges, normalizer, min_count):
    """Independent reference: recount every pair at every step; highest count, then smallest pair."""
    import re

    chunks = Counter(c for t in texts for c in re.findall(PRETOKENIZE_PATTERN, normalizer(t)))
    words = {c: list(c.encode()) for c in chunks}
    merges = []
    for k in range(num_merges):
        counts = Counter()
        for c, w in words.items():
            for p in zip(w, w[1:]):
                counts[p] += chunks[c]
        if not counts:
            break
        best = min(counts, key=lambda p: (-counts[p], p))
        if counts[best] < min_count:
            break
        merges.append(best)
        for c, w in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(256 + k)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            words[c] = out
    return merges


def naive_encode(tok, text):
    """Reference encoder: apply each merge in rank order to every chunk."""
    import re

    ids = []
    for chunk in re.findall(PRETOKENIZE_PATTERN, tok.normalize(text)):
        w = list(chunk.encode())
        for k, (a, b) in enumerate(tok.merges):
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(256 + k)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            w = out
        ids += w
    return ids


@pytest.mark.parametrize("min_count", [1, 2, 3])
def test_training_matches_naive_reference(min_count):
    norm = Normalizer(nfkc=True, lowercase=True)
    tok = ByteLevelBPE.train(CORPUS, 150, normalizer=norm, min_count=min_count)
    assert list(tok.merges) == naive_train(CORPUS, 150, norm, min_count)
    assert len(tok.merges) > 30


def test_training_is_deterministic_and_tie_break_is_smallest_pair():
    assert ByteLevelBPE.train(CORPUS, 80).merges == ByteLevelBPE.train(list(CORPUS), 80).merges
    # chunks "ab" and " cd": three pairs occur once each; ties go to the smallest pair
    tok = ByteLevelBPE.train(["ab cd"], 5, min_count=1)
    assert tok.merges == ((32, 99), (97, 98), (256, 100))
    # a higher count beats a smaller pair
    assert ByteLevelBPE.train(["cdcd ab"], 1, min_count=1).merges == ((99, 100),)
    # min_count stops training early
    assert ByteLevelBPE.train(["ab cd"], 5, min_count=2).merges == ()


def test_train_refuses_bad_arguments():
    with pytest.raises(ValueError, match="num_merges"):
        ByteLevelBPE.train(CORPUS, -1)
    with pytest.raises(ValueError, match="min_count"):
        ByteLevelBPE.train(CORPUS, 5, min_count=0)
    with pytest.raises(TypeError, match="texts must be an iterable of str .a corpus., got str"):
        ByteLevelBPE.train("just one text", 5)


# --- encode / decode ----------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(st.text(), st.sampled_from([(True, False, False), (True, True, True), (False, False, False)]))
def test_normalized_round_trip_on_arbitrary_unicode(s, flags):
    tok = trained(*flags)
    ids = tok.encode(s)
    assert tok.decode(ids) == tok.normalize(s)
    assert roundtrip_check(tok, s)
    assert all(0 <= i < 256 + len(tok.merges) for i in ids)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.sampled_from("the cat sat on mat 0123456789.,;:!\n\t éüß漢🙂_"), max_size=80))
def test_encode_matches_reference_encoder(s):
    tok = trained()
    assert tok.encode(s) == naive_encode(tok, s)


def test_training_corpus_is_compressed_and_cache_is_consistent():
    tok = trained()
    text = CORPUS[0]
    assert len(tok.encode(text)) < len(text.encode()) / 2
    first = tok.encode(text)
    assert tok.encode(text) == first  # second call served from the chunk cache


def test_non_canonical_sequences_decode_to_the_same_text():
    tok = trained()
    the = tok.encode(" the")
    assert len(the) == 1  # " the" is a learned token
    split = list(tok.token_bytes(the[0]))  # the same text as single bytes
    assert tok.decode(split) == tok.decode(the) == " the"
    assert tok.encode(tok.decode(split)) == the != split  # tau and delta are not inverse bijections


def test_merges_are_part_of_the_specification():
    tok = trained()
    fewer = ByteLevelBPE(tok.merges[:20], normalizer=tok.normalizer)
    text = "The cat sat on the mat."
    assert tok.encode(text) != fewer.encode(text)
    assert tok.decode(tok.encode(text)) == fewer.decode(fewer.encode(text)) == tok.normalize(text)


def test_control_tokens():
    tok = trained()
    n = 256 + len(tok.merges)
    assert (tok.eos_id, tok.pad_id, tok.bos_id, tok.vocab_size) == (n, n + 1, n + 2, n + 3)
    ids = tok.encode("hi", add_bos=True, add_eos=True)
    assert ids[0] == tok.bos_id and ids[-1] == tok.eos_id
    assert tok.decode(ids) == "<|bos|>hi<|eos|>" and tok.decode(ids, skip_special=True) == "hi"
    assert tok.eos_id not in tok.encode("<|eos|>")  # text never becomes a control token
    assert tok.decode(tok.encode("<|eos|>")) == "<|eos|>"
    plain = ByteLevelBPE(specials=("eos",))
    with pytest.raises(KeyError, match="no control token 'pad'"):
        _ = plain.pad_id


def test_decode_of_a_cut_character():
    tok = ByteLevelBPE()
    ids = tok.encode("é")  # two bytes
    assert tok.decode(ids[:1]) == "\ufffd"
    with pytest.raises(UnicodeDecodeError):
        tok.decode(ids[:1], errors="strict")


def test_bad_input_is_refused():
    tok = trained()
    with pytest.raises(TypeError, match="text must be a str, got bytes"):
        tok.encode(b"bytes")
    with pytest.raises(ValueError, match="lone surrogate"):
        tok.encode("a\ud800b")
    with pytest.raises(ValueError, match="outside"):
        tok.decode([tok.vocab_size])
    with pytest.raises(ValueError, match="not yet defined"):
        ByteLevelBPE([(97, 256)])
    with pytest.raises(ValueError, match="repeats"):
        ByteLevelBPE([(97, 98), (97, 98)])
    with pytest.raises(ValueError, match="not a regular token"):
        tok.token_bytes(tok.eos_id)
    with pytest.raises(TypeError, match="Normalizer"):
        ByteLevelBPE(normalizer="nfkc")


# --- serialization ------------------------------------------------------------------------------
def test_json_round_trip_and_hash(tmp_path):
    tok = trained(True, True, False)
    path = tmp_path / "tok.json"
    tok.save(path)
    back = ByteLevelBPE.load(path)
    assert back == tok and back.sha256() == tok.sha256()
    assert back.encode(CORPUS[3]) == tok.encode(CORPUS[3])
    assert json.loads(json.dumps(tok.to_dict())) == tok.to_dict()
    assert ByteLevelBPE(tok.merges[:-1], normalizer=tok.normalizer).sha256() != tok.sha256()
    assert ByteLevelBPE(tok.merges, normalizer=Normalizer()).sha256() != tok.sha256()
    spec = {"collapse_whitespace": False, "nfkc": True, "lowercase": False}
    by_hand = json.dumps({"specials": ["eos", "pad", "bos"], "pattern": PRETOKENIZE_PATTERN, "merges": [[97, 98]],
                          "format": "ftipbook.ByteLevelBPE/1", "normalizer": spec},
                         sort_keys=True, separators=(",", ":"))
    assert ByteLevelBPE([(97, 98)], normalizer=Normalizer(nfkc=True)).sha256() == hashlib.sha256(by_hand.encode()).hexdigest()
    with pytest.raises(ValueError, match="format"):
        ByteLevelBPE.from_dict({"format": "other"})


def test_a_different_pattern_is_recorded_and_changes_tau():
    words_only = ByteLevelBPE.train(CORPUS, 60, pattern=r"\S+|\s+")
    assert words_only.to_dict()["pattern"] == r"\S+|\s+"
    assert words_only.merges != trained().merges
    assert roundtrip_check(words_only, "a  b\tc")


# --- toy tokenizer of ftip-000F -----------------------------------------------------------------
def test_toy_tokenizer_of_000F():
    toy = ToyTokenizer(["a", "b"])
    s = "A  B"
    n = toy.normalize(s)
    assert n == "a b" and toy.tokenize(n) == ("a", "b")
    d = toy.detokenize(toy.tokenize(n))
    assert d == "a b" and d != s
    assert toy.tokenize(toy.normalize(d)) == ("a", "b")
    assert toy.normalize(n) == n
    assert toy.decode(toy.encode(s)) == "a b" and toy.eos_id == 2
    with pytest.raises(ValueError, match="not in the toy vocabulary"):
        toy.encode("a c")
    with pytest.raises(ValueError, match="not in the toy vocabulary"):
        toy.encode("a <|eos|>")
    with pytest.raises(ValueError, match="without whitespace"):
        ToyTokenizer(["a b"])


# --- adapters ---------------------------------------------------------------------------------------
ASCIIISH = st.text(alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyzTHE 0123456789.,;:!?'\"()-_\n\téüßÅ"), max_size=120)


@settings(max_examples=100, deadline=None)
@given(ASCIIISH)
def test_hugging_face_twin_gives_the_same_ids(s):
    tok = trained(True, True, True)
    hf = HFTokenizer(hf_twin(True, True, True), eos_token="<|eos|>")
    assert hf.encode(s) == tok.encode(s)
    assert hf.decode(hf.encode(s)) == hf.normalize(s) == tok.normalize(s)


@cache
def hf_twin(*flags):
    pytest.importorskip("tokenizers")
    return trained(*flags).to_hf()


def test_hf_adapter_protocol_and_errors():
    tok = trained()
    hf = HFTokenizer(hf_twin(True, False, False), eos_token="<|eos|>")
    assert isinstance(hf, TokenizerLike) and isinstance(tok, TokenizerLike) and isinstance(ToyTokenizer(["a"]), TokenizerLike)
    assert hf.vocab_size == tok.vocab_size and hf.eos_id == tok.eos_id
    assert hf.encode(CORPUS[0]) == tok.encode(CORPUS[0])
    with pytest.raises(ValueError, match="not in this tokenizer"):
        HFTokenizer(hf_twin(True, False, False), eos_token="</s>")
    with pytest.raises(TypeError, match="tokenizers.Tokenizer"):
        HFTokenizer(object())


@cache
def tiktoken_twin():
    pytest.importorskip("tiktoken")
    return trained(False, False, False).to_tiktoken()


@settings(max_examples=100, deadline=None)
@given(ASCIIISH)
def test_tiktoken_twin_gives_the_same_ids(s):
    tok = trained(False, False, False)
    tt = TiktokenTokenizer(tiktoken_twin(), eos_token="<|eos|>")
    assert tt.encode(s) == tok.encode(s)
    assert tt.decode(tt.encode(s)) == s


def test_tiktoken_adapter_protocol_and_errors(monkeypatch):
    tok = trained(False, False, False)
    tt = TiktokenTokenizer(tiktoken_twin(), eos_token="<|eos|>")
    assert isinstance(tt, TokenizerLike)
    assert tt.vocab_size == tok.vocab_size and tt.eos_id == tok.eos_id
    assert tt.encode(CORPUS[0]) == tok.encode(CORPUS[0]) and len(tok.encode(CORPUS[0])) < len(CORPUS[0].encode())
    assert tt.encode("<|eos|>") == tok.encode("<|eos|>") != [tok.eos_id]  # control text is ordinary text
    assert roundtrip_check(tt, "héllo") and tt.normalize("A  B") == "A  B"
    assert TiktokenTokenizer(tiktoken_twin(), eos_token=None).eos_id is None
    with pytest.raises(ValueError, match="outside"):
        tt.decode([tt.vocab_size])
    with pytest.raises(ValueError, match="not a special token"):
        TiktokenTokenizer(tiktoken_twin())  # no <|endoftext|> here
    with pytest.raises(ValueError, match="no normalization step"):
        trained(True, False, False).to_tiktoken()
    with pytest.raises(TypeError, match="tiktoken Encoding"):
        TiktokenTokenizer(42)
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    with pytest.raises(ImportError, match="optional 'tiktoken' package"):
        TiktokenTokenizer("gpt2")
