"""RB_alg's own BERTScore: equal to bert-score's on long texts, and its embedding cache changes nothing but speed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import random
import sqlite3
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import MINI, REPO, model_close, run_cli, tmpfs
from ragjudge.bench.mtrag.items import judged_item
from ragjudge.judges import JudgeContext, JudgedItem, JudgeRegistry
from ragjudge.embeddings.bertscore import BertScorer, resolve_model
from ragjudge.embeddings.cached_bertscore import CachedBertScorer
from ragjudge.embeddings.store import EmbeddingStore, EmbeddingStoreWarning, pack, unpack
from ragjudge.embeddings.greedy_match import greedy_match, load_baseline, match_input, rescale
from ragjudge.embeddings.token_encoder import TokenEmbeddings, plan_batches
from ragjudge.models import Passage, Prediction, Task, Turn

MTRAG = REPO / "tests" / "fixtures" / "mtrag"

SENTENCES = [
    "The river rises in the northern highlands, where snowmelt feeds a chain of narrow glacial lakes.",
    "Early surveyors mapped its course in 1851 and recorded rapids that made the upper valley hard to reach.",
    "Farmers along the middle reaches grow barley, potatoes and apples on terraces cut into the slopes.",
    "A hydroelectric dam completed in 1964 now regulates the flow and supplies power to three provinces.",
    "Critics argued that the reservoir flooded villages and disrupted the spawning runs of salmon.",
    "Since 2003 a fish ladder and seasonal releases of water have helped the salmon population recover.",
    "The delta is a protected wetland that shelters migrating geese, herons and more than forty kinds of duck.",
    "Tourism grew after a railway line opened along the eastern bank, bringing hikers and anglers each summer.",
    "Local historians note that the name of the river comes from an old word meaning 'the swift one'.",
    "In winter the lower river often freezes, and ice fishing competitions draw visitors from abroad.",
    "Water quality is monitored monthly, with nitrate levels falling since stricter farming rules took effect.",
    "The largest town on its banks hosts a museum of river trade, with boats, maps and merchants' ledgers.",
    "Floods in 1997 damaged bridges and roads, prompting new levees and an early warning system.",
    "Scientists study sediment cores from the lakes to reconstruct the climate of the last ten thousand years.",
]


def passage(start: int, words: int) -> str:
    """Real sentences in a rotating order until `words` words: 80 to 900 words, beyond 512 tokens at the top."""
    out: list[str] = []
    i = start
    while sum(len(s.split()) for s in out) < words:
        out.append(SENTENCES[i % len(SENTENCES)])
        i += 3
    return " ".join(out)


def answer(rng: random.Random, text: str, lo: int, hi: int) -> str:
    words = text.split()
    start = rng.randrange(max(1, len(words) - hi))
    return " ".join(words[start:start + rng.randint(lo, hi)])


@pytest.fixture(scope="module")
def config():
    return resolve_model("bundled")


@pytest.fixture(scope="module")
def reference_scorer(config) -> BertScorer:
    return BertScorer(config)


@pytest.fixture(scope="module")
def long_pairs() -> tuple[list[str], list[str]]:
    rng = random.Random(7)
    passages = [passage(i, n) for i, n in enumerate([80, 200, 350, 420, 600, 900])]
    cands = [answer(rng, rng.choice(passages), 5, 120) for _ in range(7)] + [passages[5], "Yes.", "[SEP]"]
    refs = [rng.choice(passages) for _ in cands[:-3]] + [passages[4], passages[1], passages[0]]
    return cands, refs


def per_pair(scorer: BertScorer, cands: list[str], refs: list[str]) -> list[tuple[float, float, float]]:
    """The official scripts' pattern: one bert-score call per pair."""
    out = []
    for c, r in zip(cands, refs, strict=True):
        p, rec, f = scorer.score([c], [r])
        out.append((p[0], rec[0], f[0]))
    return out


def assert_close(got: tuple[list[float], ...], want: list[tuple[float, float, float]]) -> None:
    """Our (P, R, F) against bert-score's, at the model tolerance: the same model in other batches moves the
    last float32 digits (by up to 2e-7 here), and other CPUs by more (conftest)."""
    for k in range(3):
        for g, w in zip(got[k], (x[k] for x in want), strict=True):
            assert (math.isnan(g) and math.isnan(w)) or model_close(g, w), (k, g, w)


# -- equal to bert-score --------------------------------------------------------------------------------------
@pytest.mark.slow
def test_long_texts_score_as_bert_score_per_pair(config, reference_scorer, long_pairs) -> None:
    cands, refs = long_pairs
    scorer = CachedBertScorer(config, store=None)
    assert max(len(scorer.encoder.tokenize(t)) for t in refs) == 512  # truncation is exercised
    assert_close(scorer.score(cands, refs), per_pair(reference_scorer, cands, refs))
    assert scorer.stats.texts_encoded == len(set(cands + refs))  # each distinct text once


@pytest.mark.slow
def test_mtrag_passages_score_as_bert_score(config, reference_scorer) -> None:
    """Passages and answers as MTRAG's files hold them (our own, tests/fixtures/mtrag): forum text with newlines,
    currency signs, curly quotes and a URL, one passage just under 512 tokens (as long as the published 512-token
    passages get) and one beyond (truncated), and answers against their own passages."""
    from ragjudge.formats.mtrag import read_predictions

    pool = [json.loads(line)["text"] for line in (MTRAG / "corpus" / "fiqa_pool.jsonl").open()]
    longest = sorted(pool, key=len)[-4:]
    tasks = [(t, p) for t, p in read_predictions(MTRAG / "generation" / "responses-10.jsonl") if t.contexts]
    cands = [p.text for _, p in tasks][:4]
    refs = longest[: len(cands)]
    cands += [p.text for _, p in tasks[:3]]
    refs += [t.contexts[0].text for t, _ in tasks[:3]]
    scorer = CachedBertScorer(config, store=None)
    lengths = [len(scorer.encoder.tokenize(t)) for t in refs]
    assert max(lengths) == 512 and any(480 <= n < 512 for n in lengths), lengths  # truncation, and long without
    assert len(cands) == len(refs) == 7 and any(not t.isascii() for t in refs) and any("\n" in t for t in refs)
    assert_close(scorer.score(cands, refs), per_pair(reference_scorer, cands, refs))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")  # bert-score's own baseline reading
def test_baseline_rescaling_matches_bert_score(config, tmp_path: Path) -> None:
    from bert_score import BERTScorer

    baseline_file = tmp_path / "baseline.tsv"
    rows = ["LAYER,P,R,F"] + [f"{i},{0.3 + i / 100},{0.31 + i / 100},{0.305 + i / 100}" for i in range(7)]
    baseline_file.write_text("\n".join(rows) + "\n")
    official = BERTScorer(model_type=config.model_path, num_layers=config.num_layers, lang="en",
                          rescale_with_baseline=True, baseline_path=str(baseline_file))
    cands, refs = SENTENCES[:3], [passage(1, 60), SENTENCES[3], passage(4, 90)]
    raw = torch.tensor(CachedBertScorer(config).score(cands, refs)).T
    ours = rescale(raw, official.baseline_vals).T.tolist()
    want = [tuple(float(x[0]) for x in official.score([c], [r])) for c, r in zip(cands, refs, strict=True)]
    assert_close(tuple(ours), want)


@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")
def test_baseline_is_read_as_bert_score_reads_it() -> None:
    import bert_score
    from bert_score import BERTScorer

    official = BERTScorer.__new__(BERTScorer)  # only its baseline property, no model
    official._baseline_vals, official.all_layers, official._num_layers = None, False, 40
    folder = Path(bert_score.__file__).parent / "rescale_baseline" / "en"
    official.baseline_path = str(folder / "microsoft" / "deberta-xlarge-mnli.tsv")
    assert torch.equal(load_baseline("microsoft/deberta-xlarge-mnli", 40), official.baseline_vals)


def test_greedy_match_is_bert_scores_greedy_cos_idf() -> None:
    from bert_score.utils import greedy_cos_idf

    gen = torch.Generator().manual_seed(0)
    for n, m in [(2, 9), (7, 2), (30, 500), (3, 3)]:
        hyp, ref = torch.randn(n, 16, generator=gen), torch.randn(m, 16, generator=gen)
        hyp_ids, ref_ids = np.r_[101, np.arange(n - 2) + 1000, 102], np.r_[101, np.arange(m - 2) + 1000, 102]
        special = (102, 101)
        ours = greedy_match(match_input(hyp.numpy(), hyp_ids, special), match_input(ref.numpy(), ref_ids, special))
        weights = [torch.tensor([[0.0] + [1.0] * (k - 2) + [0.0]]) for k in (m, n)]
        p, r, f = greedy_cos_idf(ref.clone()[None], torch.ones(1, m, dtype=torch.bool), weights[0],
                                 hyp.clone()[None], torch.ones(1, n, dtype=torch.bool), weights[1])
        assert torch.allclose(ours, torch.stack([p[0], r[0], f[0]]), atol=1e-6, equal_nan=True), (n, m)


def test_empty_texts_score_zero_as_bert_score_rules(config) -> None:
    scorer = CachedBertScorer(config)
    assert scorer.score(["", "An answer.", "   "], ["A reference.", "", " "]) == ([0.0] * 3, [0.0] * 3, [0.0] * 3)


# -- batching and the stored format ---------------------------------------------------------------------------
def test_batches_are_length_sorted_within_budget_and_padding_cap() -> None:
    rng = random.Random(3)
    lengths = [rng.randint(2, 512) for _ in range(300)] + [700]
    batches = plan_batches(lengths, token_budget=4096, max_padding=0.05)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        width = max(lengths[i] for i in batch)
        assert len(batch) == 1 or (len(batch) * width <= 4096
                                   and len(batch) * width - sum(lengths[i] for i in batch) <= 0.05 * len(batch) * width)


def test_entries_round_trip_exactly_and_corruption_is_a_miss() -> None:
    emb = TokenEmbeddings(ids=np.array([101, 7, 102], dtype=np.int32),
                          vectors=np.random.default_rng(0).standard_normal((3, 384)).astype(np.float32))
    blob = pack(emb.ids.astype("<i4").tobytes(), emb.vectors.astype("<f4").tobytes(), 3, 384)
    back = unpack(blob, with_ids=True)
    assert back is not None
    assert np.array_equal(np.frombuffer(back[0], dtype="<i4"), emb.ids)
    assert np.array_equal(np.frombuffer(back[1], dtype="<f4").reshape(3, 384), emb.vectors)
    flipped = bytearray(blob)
    flipped[-5] ^= 0xFF
    assert unpack(bytes(flipped), True) is None and unpack(blob[:-4], True) is None and unpack(b"", True) is None


# -- the cache in RB_alg --------------------------------------------------------------------------------------
def items_for(answers: list[str], passages: list[str]) -> list[JudgedItem]:
    items = []
    for i, text in enumerate(answers):
        task = Task(task_id=f"c{i // 3}::{i % 3 + 1}", conversation_id=f"c{i // 3}", turn=i % 3 + 1,
                    input=[Turn(speaker="user", text="Tell me about the river.")],
                    contexts=[Passage(id=f"p{j}", text=passages[j]) for j in (i % 4, (i + 1) % 4)],
                    targets=[Turn(speaker="agent", text=SENTENCES[i % len(SENTENCES)])])
        items.append(judged_item(task, Prediction(task_id=task.task_id, text=text)))
    return items


def run_rb_alg(items: list[JudgedItem], ctx: JudgeContext):
    judge = JudgeRegistry().build("rb_alg", {"bertscore_model": "bundled"})
    results = asyncio.run(judge.judge(items, ctx))
    return [(r.value, r.details["BertscoreR"], r.details["BertKPrec"]) for r in results], judge.scorer_for(ctx).stats


@pytest.mark.slow
def test_cache_changes_no_score_and_warm_runs_encode_only_new_answers(tmp_path: Path) -> None:
    rng = random.Random(11)
    passages = [passage(i, n) for i, n in enumerate([150, 300, 420, 520])]
    system_a = items_for([answer(rng, rng.choice(passages), 10, 60) for _ in range(8)], passages)
    system_b = items_for([answer(rng, rng.choice(passages), 10, 60) for _ in range(8)], passages)
    shared = {i.reference for i in system_a} | set(passages)
    cached = JudgeContext(cache_dir=tmp_path)

    uncached_a, stats = run_rb_alg(system_a, JudgeContext(use_cache=False))
    assert stats.cache_folder is None and not (tmp_path / "embeddings.sqlite").exists()
    cold_a, stats = run_rb_alg(system_a, cached)
    assert cold_a == uncached_a  # same texts, same batches: bit for bit
    assert stats.texts_encoded == len(shared | {i.answer for i in system_a}) == stats.cache_writes

    again_a, stats = run_rb_alg(system_a, cached)  # a rerun: nothing to encode, read back exactly
    assert again_a == cold_a and stats.texts_encoded == 0

    warm_b, stats = run_rb_alg(system_b, cached)
    answers_a, answers_b = {i.answer for i in system_a}, {i.answer for i in system_b}
    assert stats.texts_encoded == len(answers_b - answers_a) > 0
    assert stats.cache_hits == len(shared | (answers_b & answers_a))
    uncached_b, _ = run_rb_alg(system_b, JudgeContext(use_cache=False))
    for got, want in zip(warm_b, uncached_b, strict=True):  # passages batched differently: float32 rounding only
        assert all(model_close(g, w) for g, w in zip(got, want, strict=True))


def test_corrupt_entry_is_recomputed(config, tmp_path: Path) -> None:
    texts = ["The delta is a protected wetland.", passage(2, 300)]
    first = CachedBertScorer(config, store=EmbeddingStore(tmp_path))
    want = first.score(texts[:1], texts[1:])
    first.store.close()
    db = sqlite3.connect(tmp_path / "embeddings.sqlite")
    assert db.execute("SELECT count(*) FROM entries").fetchone() == (2,)
    db.execute("UPDATE entries SET value = substr(value, 1, 100) WHERE rowid = (SELECT min(rowid) FROM entries)")
    db.commit()  # as if the disk lost the end of one entry
    db.close()
    second = CachedBertScorer(config, store=EmbeddingStore(tmp_path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert second.score(texts[:1], texts[1:]) == want
    assert [w.category for w in caught] == [EmbeddingStoreWarning] and "checksum" in str(caught[0].message)
    assert second.stats.texts_encoded == 1 and second.stats.cache_hits == 1
    third = CachedBertScorer(config, store=EmbeddingStore(tmp_path))  # the damaged entry was replaced
    assert third.score(texts[:1], texts[1:]) == want and third.stats.texts_encoded == 0


@pytest.mark.parametrize("how", ["file in the way", "read-only folder"])
def test_unwritable_cache_warns_once_and_scores_anyway(config, tmp_path: Path, how: str) -> None:
    with contextlib.ExitStack() as stack:
        if how == "file in the way":
            root = tmp_path / "not-a-folder"
            root.write_text("")
            root = root / "cache"
        elif os.geteuid() == 0:  # root writes through folder permissions: a read-only file system stops it too
            root = stack.enter_context(tmpfs(tmp_path / "ro", "size=1m,ro", "cannot mount a read-only tmpfs"))
        else:
            root = tmp_path / "ro"
            root.mkdir()
            root.chmod(0o500)
        _warns_once_and_scores_anyway(config, root)


def _warns_once_and_scores_anyway(config, root: Path) -> None:
    texts = ["An answer about salmon.", "Another answer about dams.", passage(0, 200), passage(5, 250)]
    scorer = CachedBertScorer(config, store=EmbeddingStore(root))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = scorer.score(texts[:2], texts[2:])
        scorer.score(texts[1:3], texts[2:])
    assert [w.category for w in caught] == [EmbeddingStoreWarning]
    assert "embedding cache off" in str(caught[0].message)
    assert got == CachedBertScorer(config).score(texts[:2], texts[2:]) and scorer.stats.cache_folder is None


@pytest.mark.slow
def test_judge_cli_keeps_embeddings_in_the_cache_dir_unless_no_cache(tmp_path: Path, monkeypatch, capsys) -> None:
    rows = [json.loads(line) for line in (MINI / "tasks.jsonl").read_text().splitlines()[:4]]
    for row in rows:
        row["predictions"] = [{"text": " ".join(c["text"] for c in row.get("contexts", []))[:200] or "No idea."}]
    source = tmp_path / "preds.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["judge", str(source), "--judges", "rb_alg", "--bertscore-model", "bundled", "--format", "json"]
    code, out, err = run_cli([*args, "--out", str(tmp_path / "a.jsonl"), "--cache-dir", str(tmp_path / "c")],
                             monkeypatch, capsys)
    assert code == 0, err
    assert EmbeddingStore(tmp_path / "c").info().spaces[0].entries > 0
    code, out2, err = run_cli([*args, "--out", str(tmp_path / "b.jsonl"), "--cache-dir", str(tmp_path / "d"),
                               "--no-cache"], monkeypatch, capsys)
    assert code == 0, err
    assert not (tmp_path / "d" / "embeddings.sqlite").exists()
    assert json.loads(out)["metrics"]["RB_agg"] == json.loads(out2)["metrics"]["RB_agg"]
