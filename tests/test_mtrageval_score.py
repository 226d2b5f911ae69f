"""The MTRAGEval task score (issue 35): the harmonic mean of the corpus-level means of the conditioned RL_F, RB_llm
and RB_agg as the headline of `--bench mtrag-un` when the three judges ran, no task score (the missing judges
named) when they did not, and the published task B / C results beside comparable runs only."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from conftest import REPO, run_cli_once
from shared_data import SHARED_DATA, requires_shared

from ragjudge.bench.mtrag.metrics import TaskOutcome
from ragjudge.bench.mtrag.un import leaderboard
from ragjudge.bench.mtrag.un.summary import add_leaderboard
from ragjudge.engine.summary import Summary
from ragjudge.formats.mtrag import read_tasks
from ragjudge.models import Prediction
from ragjudge.testing.openai_server import OpenAIServer, Request
from ragjudge.testing.scripted_judges import judge_panel

RELEASE = SHARED_DATA / "mtrag-un" / "generation" / "reference.jsonl"
FIXTURE = REPO / "tests" / "fixtures" / "mtrag-un" / "predictions.jsonl"
KEY = {"OPENAI_API_KEY": "sk-test-not-a-real-key-0000"}
RANKED = ("RB_agg_idk_underspecified", "RL_F_idk_underspecified", "RB_llm_idk_underspecified")
OFFICIAL = "rb_alg,underspecified,idk,rl_f,rb_llm"


def responder() -> object:
    """The IDK, RB_llm and RL_F judges of `judge_panel`, and a clarification judge that says yes when the answer
    ends with a question (the official JSON reply)."""
    panel = judge_panel()

    def respond(request: Request) -> str:
        if "is asking for clarification" in request.last_user:
            response = request.last_user.split("Response: \n    ", 1)[1].rsplit("\n\n    ", 1)[0]
            decision = "yes" if response.rstrip().endswith("?") else "no"
            return json.dumps({"decision": decision, "explanation": "scripted"})
        return panel(request)  # type: ignore[operator]

    return respond


@pytest.fixture(scope="module")
def llm_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Every 20th task of the release (26, each answerability class), the reference answers as predictions, the
    official judges through the local server; `--limit 8` of them."""
    if not RELEASE.exists():
        pytest.skip(f"needs {RELEASE} (the MTRAG-UN development data)")
    tmp = tmp_path_factory.mktemp("mtrageval-score")
    records = [json.loads(line) for line in RELEASE.read_text().splitlines()][::20]
    for r in records:
        r["predictions"] = [{"text": r["targets"][0]["text"]}]
    source = tmp / "references.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    with OpenAIServer(responder()) as server:
        code, stdout, stderr = run_cli_once(
            ["judge", str(source), "--judges", OFFICIAL, "--judge-models", "openai/judge", "--api-base",
             server.base_url, "--limit", "8", "--concurrency", "16", "--out", str(tmp / "scored.jsonl"), "--format", "json"],
            env={"RAGJUDGE_CACHE_DIR": str(tmp / "cache"), "HF_HUB_OFFLINE": "1", **KEY})
    samples = [json.loads(line) for line in (tmp / "scored.samples.jsonl").read_text().splitlines()]
    return {"code": code, "stderr": stderr, "summary": json.loads(stdout), "samples": samples}


def test_task_score_is_the_harmonic_mean_of_the_corpus_level_conditioned_means(llm_run: dict) -> None:
    assert llm_run["code"] == 0, llm_run["stderr"]
    summary, samples = llm_run["summary"], llm_run["samples"]
    assert summary["n_samples"] == len(samples) == 8
    means = {}
    for name in RANKED:  # recomputed from the sample log, not from the summary's means
        values = [s["scores"][name]["value"] for s in samples if "value" in s["scores"].get(name, {})]
        assert len(values) == 8, name
        means[name] = sum(values) / len(values)
    assert len({round(v, 6) for v in means.values()}) == 3  # three different figures: the mean is not trivial
    want = 3 / sum(1 / v for v in means.values())
    assert want != pytest.approx(statistics.mean(means.values()), abs=1e-4)
    score = summary["metrics"]["mtrageval_score"]
    assert score["value"] == pytest.approx(want, abs=2e-6) and score["kind"] == "score"
    assert summary["headline"]["metric"] == "mtrageval_score"
    assert summary["headline"]["value"] == score["value"]
    # the printed figure is the run's own value at 3 decimals (not `want`'s: a model float may round either way)
    assert summary["headline"]["text"].startswith(f"mtrageval_score {score['value']:.3f} (harmonic mean of ")
    # the organisers' labels: the conditioned means bare, the judges' own "(Pre-conditioned)"
    table = next(t for t in summary["tables"] if t["title"].startswith("MTRAGEval task score"))
    figures = {row[0]: row[1] for row in table["rows"]}
    assert {label: figures[label] for label in ("RB_agg", "RL_F", "RB_llm")} == pytest.approx(
        {label: means[f"{label}_idk_underspecified"] for label in ("RB_agg", "RL_F", "RB_llm")}, abs=2e-6)
    for label in ("RB_agg", "RL_F", "RB_llm"):
        raw = [s["scores"][label]["value"] for s in samples if "value" in s["scores"].get(label, {})]
        assert figures[f"{label} (Pre-conditioned)"] == pytest.approx(sum(raw) / len(raw), abs=2e-6)
    assert summary["details"]["mtrageval"]["score"] == score["value"]


def test_eight_tasks_are_not_comparable_with_the_leaderboard(llm_run: dict) -> None:
    summary = llm_run["summary"]
    assert not any("MTRAGEval" in r["title"] for r in summary["reference"])
    [note] = [n for n in summary["notes"] if "MTRAGEval leaderboard is not shown" in n]
    assert "8 tasks, not the release's 507" in note and "do not record their setting" in note


def test_offline_run_names_the_missing_judges_and_gives_no_task_score(tmp_path: Path) -> None:
    code, stdout, stderr = run_cli_once(["judge", str(FIXTURE), "--out", str(tmp_path / "o.jsonl"), "--format",
                                         "json"], env={"HF_HUB_OFFLINE": "1"})
    assert code == 0, stderr
    summary = json.loads(stdout)
    assert "RB_agg_idk_underspecified" in summary["metrics"]  # the one ranked metric the offline judges give
    assert "mtrageval_score" not in summary["metrics"]
    assert summary["headline"]["metric"] == "RB_agg_idk_underspecified"
    assert summary["details"]["mtrageval"]["score"] is None
    assert summary["details"]["mtrageval"]["missing"] == ["RL_F_idk_underspecified", "RB_llm_idk_underspecified"]
    [note] = [n for n in summary["notes"] if n.startswith("no MTRAGEval task score")]
    assert "RL_F_idk_underspecified (judge rl_f did not run)" in note
    assert "RB_llm_idk_underspecified (judge rb_llm did not run)" in note
    assert not any("MTRAGEval" in t["title"] for t in summary["tables"] + summary["reference"])


# -- comparability: the pure rule, and the summary's wiring ----------------------------------------------------


@pytest.fixture(scope="module")
def release_ids() -> list[str]:
    if not RELEASE.exists():
        pytest.skip(f"needs {RELEASE} (the MTRAG-UN development data)")
    return [t.task_id for t in read_tasks(RELEASE)]


@requires_shared("mtrag-un", "generation/reference.jsonl")
@pytest.mark.parametrize(("setting", "judges", "cut", "complete", "task", "why"), [
    ("reference", OFFICIAL, 0, True, "B", ""),
    ("rag", OFFICIAL, 0, True, "C", ""),
    (None, OFFICIAL, 0, True, None, "predictions judged as given do not record their setting"),
    ("reference+rag", OFFICIAL, 0, True, None, "setting reference+rag is no MTRAGEval task's"),
    ("reference", "idk_lexical,underspecified_lexical,rb_alg,rl_f,rb_llm", 0, True, None,
     "not the official judges (missing underspecified, idk)"),
    ("reference", OFFICIAL, 1, True, None, "506 tasks, not the release's 507"),
    ("reference", OFFICIAL, 0, False, None, "some tasks have no value for a ranked metric"),
])
def test_generation_comparable(setting, judges, cut, complete, task, why, release_ids: list[str]) -> None:
    verdict = leaderboard.generation_comparable(setting, judges.split(","), release_ids[cut:], complete)
    assert verdict.task == task and why in verdict.why and bool(verdict.why) == (task is None)


def _summary_of(outcomes: list[TaskOutcome]) -> Summary:
    return Summary(bench="mtrag-un", title="t", unit="tasks", n_samples=len(outcomes), n_errors=0, metrics={})


@requires_shared("mtrag-un", "generation/reference.jsonl")
@pytest.mark.parametrize("setting", ["reference", "rag", None])
def test_the_leaderboard_is_beside_a_comparable_run_only(setting: str | None) -> None:
    tasks = read_tasks(RELEASE)
    outcomes = [TaskOutcome(t, Prediction(task_id=t.task_id, text="x"), metrics=dict.fromkeys(RANKED, 0.5))
                for t in tasks]
    summary = _summary_of(outcomes)
    add_leaderboard(summary, outcomes, setting, dict.fromkeys(OFFICIAL.split(","), ["openai/judge"]))
    if setting is None:
        assert summary.reference == [] and "do not record their setting" in summary.notes[0]
        return
    [board] = summary.reference
    task = "B" if setting == "reference" else "C"
    assert board.title == f"SemEval-2026 MTRAGEval task {task}, the published results" and board.comparable
    scores = {row[1]: row[2] for row in board.rows}
    if task == "B":
        assert scores == {"RaguTeam": 0.7827, "AILS-NTUA": 0.7698, "organisers: gpt-oss-120b": 0.6390,
                          "NCL": 0.5973}
        ncl = next(row for row in board.rows if row[1] == "NCL")
        assert ncl[3:6] == [0.4993, 0.7235, 0.6105]
        assert 3 / (1 / 0.4993 + 1 / 0.7235 + 1 / 0.6105) == pytest.approx(0.5973, abs=5e-5)  # the score's rule
    else:
        assert scores["2nd place"] == 0.5796 and 0.5796 / scores[next(iter(scores))] > 1 - 0.011
    assert all(row[-1] for row in board.rows)  # each row says its source
    assert any("107 registered teams, 92 submissions (task A 38, task B 26, task C 29)" in n for n in board.notes)
