"""The sample log of every CXMArena bench on its shipped example (examples/cxm): every line of `samples.jsonl`
validates against `ragjudge schema sample`, carries what the mapping promises (docs/benches/cxmarena.md, "What each
sample is"), and its per-sample figures, named as the summary's, average to the summary's where the summary's figure
is a mean over samples; `ragjudge report` and `load_run(...).to_pandas()` read the runs."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import conftest
import ragjudge
from ragjudge.formats.samples import json_schema

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cxm"


def predictions(task: str) -> list[str]:
    return ["-T", f"predictions={EXAMPLE / 'predictions' / f'{task}.jsonl'}"]


RUNS = {  # name → the bench and its options (all offline)
    "intent": ["cxm-intent", *predictions("intent")],
    "quality": ["cxm-quality", *predictions("quality")],
    "tool-calls": ["cxm-tool-calls", *predictions("tool-calls")],
    "answer-classification": ["cxm-answer-classification", *predictions("answer-classification")],
    "kb-pairs": ["cxm-kb-refinement", *predictions("kb-refinement"), "-T", "baseline=false"],
    "kb-baseline": ["cxm-kb-refinement", "-T", "threshold=0.5"],
    "article-search": ["cxm-article-search", *predictions("article-search")],
    "article-search-bm25": ["cxm-article-search", "--pipeline", "bm25", "-T", "chunk=300"],
    "multiturn-retrieval": ["cxm-multiturn-retrieval", *predictions("multiturn-retrieval"), "-T", "ks=1,3"],
    "multiturn-retrieval-bm25": ["cxm-multiturn-retrieval", "--pipeline", "bm25", "-T", "chunk=200"],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("cxm-runs")
    for name, (bench, *options) in RUNS.items():
        code, _, err = conftest.run_cli_once(["eval", "--bench", bench, "--data", str(EXAMPLE), *options, "--out",
                                              str(folder / name), "--format", "json"],
                                             {"RAGJUDGE_CACHE_DIR": str(folder / "cache")})
        assert code == 0, f"{name}: {err}"
    return {name: folder / name for name in RUNS}


def lines(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


def summary(run: Path) -> dict:
    return json.loads((run / "summary.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", list(RUNS))
def test_every_line_validates_and_names_its_scores_as_the_summary(runs, name: str) -> None:
    schema = json_schema()
    samples, metrics = lines(runs[name]), summary(runs[name])["metrics"]
    assert len(samples) == summary(runs[name])["n_samples"]
    for line in samples:
        jsonschema.validate(line, schema)
        assert set(line.get("scores", {})) <= set(metrics), (name, line["id"])
    assert any(line.get("scores") for line in samples), name


def mean_of(samples: list[dict], metric: str) -> float:
    values = [s["scores"][metric]["value"] for s in samples if metric in s.get("scores", {})]
    return sum(values) / len(values)


@pytest.mark.parametrize("name, means", [
    ("intent", ["accuracy (exact match)", "accuracy (paper protocol: WRatio >= 70)", "accuracy (LLM-verified)",
                "level-1 accuracy"]),
    ("quality", ["case accuracy (all questions right)"]),
    ("tool-calls", ["tool-selection accuracy", "tool-selection accuracy @8 tools", "argument match",
                    "no tool called"]),
    ("answer-classification", ["Correct share", "Hallucination share", "judge agreement with gold labels",
                               "retrieval recall of gold articles"]),
    ("kb-pairs", ["similar precision", "contradictory precision"]),
    ("kb-baseline", ["similar precision", "similar recall", "similar F1"]),
    ("article-search", ["P@1", "R@3", "hit@3", "MRR"]),
    ("article-search-bm25", ["P@1", "R@10", "hit@10 (official: top-10 passages, repeats removed)", "MRR"]),
    ("multiturn-retrieval", ["R@1", "R@3", "hit@3", "MRR"]),
    ("multiturn-retrieval-bm25", ["R@10", "R@20 (paper protocol)", "MRR"]),
])
def test_per_sample_figures_average_to_the_summarys(runs, name: str, means: list[str]) -> None:
    samples, metrics = lines(runs[name]), summary(runs[name])["metrics"]
    for metric in means:
        assert mean_of(samples, metric) == pytest.approx(metrics[metric]["value"]), (name, metric)


def by_id(run: Path) -> dict[str, dict]:
    return {s["id"]: s for s in lines(run)}


def test_intent_samples_carry_the_conversation_the_gold_and_both_mappings(runs) -> None:
    samples = lines(runs["intent"])
    assert {s["labels"]["taxonomy"] for s in samples} == {"flat", "two_level"}
    c5 = next(s for s in samples if s["metadata"]["case_id"] == "c5" and s["labels"]["taxonomy"] == "flat")
    # examples/cxm/README.md: c5's "Activating an eSIM" is wrong by exact match, right under the paper's mapping
    assert c5["target"] == "eSIM activation" and c5["output"] == "Activating an eSIM"
    assert c5["scores"]["accuracy (exact match)"]["value"] == 0.0
    assert c5["scores"]["accuracy (paper protocol: WRatio >= 70)"] == {"value": 1.0, "label": "eSIM activation"}
    assert c5["scores"]["accuracy (LLM-verified)"]["value"] == 1.0
    assert c5["input"][0]["role"] in ("user", "assistant") and all(m["content"] for m in c5["input"])


def test_quality_samples_hold_the_questionnaire(runs) -> None:
    a3 = next(s for s in lines(runs["quality"]) if s["metadata"]["case_id"] == "a3")
    assert len(a3["target"]) == 3 and "unanswered" in a3["output"]  # a3 leaves a question unanswered
    assert a3["scores"]["question accuracy"]["value"] == pytest.approx(1 / 3)
    assert a3["scores"]["question accuracy (paper protocol: unanswered skipped)"]["value"] == pytest.approx(1 / 2)


def test_retrieval_samples_are_rankings_beside_their_gold(runs) -> None:
    for name in ("article-search", "article-search-bm25"):
        for s in lines(runs[name]):
            assert isinstance(s["input"], str) and s["contexts"] and s["target_contexts"]
            assert all(p["score"] == 1.0 for p in s["target_contexts"])
    turns = lines(runs["multiturn-retrieval-bm25"])
    assert all(isinstance(s["input"], list) and s["contexts"] and s["metadata"]["query_strategy"] == "all_user_turns"
               for s in turns)
    assert all("chunk_articles" in s["metadata"] for s in turns)  # chunked: the paper protocol's ranking is kept


def test_answer_classification_samples_hold_the_reply_and_the_judges_class(runs) -> None:
    samples = lines(runs["answer-classification"])
    for s in samples:
        shares = {k: v for k, v in s["scores"].items() if k.endswith(" share")}
        [(label, verdict)] = [(k, v) for k, v in shares.items() if v["value"] == 1.0]
        assert verdict["label"] == label.removesuffix(" share") and s["output"] and s["contexts"]


def test_kb_samples_are_pairs_or_the_whole_kb(runs) -> None:
    pairs = lines(runs["kb-pairs"])
    assert all(s["output"] in ("similar", "contradictory") and len(s["contexts"]) == 2 and s["contexts"][0]["text"]
               for s in pairs)
    assert {s.get("target") for s in pairs} == {None, "similar", "contradictory"}  # a predicted pair may be no gold one
    [kb] = lines(runs["kb-baseline"])
    assert kb["id"] == "kb" and kb["input"].startswith("the knowledge base (") and "similar F1" in kb["scores"]


@pytest.mark.parametrize("name", ["intent", "quality", "tool-calls", "answer-classification", "kb-pairs",
                                  "kb-baseline", "article-search-bm25", "multiturn-retrieval-bm25"])
def test_report_and_the_python_api_read_the_runs(runs, name: str, tmp_path: Path, monkeypatch, capsys) -> None:
    page = tmp_path / "report.html"
    code, _, err = conftest.run_cli(["report", str(runs[name]), "--out", str(page)], monkeypatch, capsys)
    assert code == 0, err
    assert "<html" in page.read_text(encoding="utf-8")[:2000].lower()
    frame = ragjudge.load_run(runs[name]).to_pandas()
    assert {"sample_id", "question", "answer", "contexts"} <= set(frame.columns)
    assert len(frame) == summary(runs[name])["n_samples"]


def test_results_jsonl_stays_cxms_prediction_rows(runs, tmp_path: Path, monkeypatch, capsys) -> None:
    """A run's results.jsonl is valid input to -T predictions=: scored again, the same figures."""
    run = runs["article-search-bm25"]
    code, out, err = conftest.run_cli(["cxm", "score", "--task", "article-search", "--data", str(EXAMPLE), "-T",
                                       f"predictions={run / 'results.jsonl'}", "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    [again] = json.loads(out)
    ran = summary(run)["metrics"]
    assert {k: v["value"] for k, v in again["metrics"].items() if k in ran} == \
        {k: v["value"] for k, v in ran.items() if k in again["metrics"]}
