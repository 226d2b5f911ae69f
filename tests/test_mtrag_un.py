"""`--bench mtrag-un` and `ragjudge judge` on MTRAG-UN files (issue 22): the release format, the four
answerability classes, multi-label breakdowns, the official `*_idk_underspecified` conditioning over every task.

Our own miniature (tests/fixtures/mtrag-un, made-up text) covers the mechanisms; the Must-show runs on the real
release (../shared/data/mtrag-un) and skips without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, model_close, run_cli, run_cli_once
from mtrag_un_official import official
from shared_data import SHARED_DATA, requires_shared

from ragjudge.formats.mtrag import read_predictions, read_tasks

FIXTURE = REPO / "tests" / "fixtures" / "mtrag-un" / "predictions.jsonl"
RELEASE = SHARED_DATA / "mtrag-un" / "generation" / "reference.jsonl"
CLASSES = ("ANSWERABLE", "PARTIAL", "UNANSWERABLE", "UNDERSPECIFIED")



def rows_of(path: Path) -> dict[str, dict]:
    return {r["task_id"]: r for r in map(json.loads, path.read_text().splitlines())}


# -- the release format ----------------------------------------------------------------------------------------


def test_release_format_is_read_as_published() -> None:
    tasks = {t.task_id[:3]: t for t, _ in read_predictions(FIXTURE)}
    assert tasks["a01"].turn == 3 and tasks["a01"].key.endswith("::3")  # "turn": "3", a string
    assert tasks["a02"].multi_turns == ["Follow-up", "Clarification"] and tasks["a02"].multi_turn == "Follow-up"
    assert tasks["a03"].multi_turns == [] and tasks["a03"].multi_turn is None  # ["N/A"]
    assert tasks["a02"].question_types == ["Factoid", "Explanation"]
    assert [tasks[t].domain for t in ("a01", "a02", "a03", "a04")] == ["govt", "clapnq", "cloud", "fiqa"]
    assert tasks["a03"].collection == "ibmcloud"  # kept as written
    assert {t.answerability for t in tasks.values()} == set(CLASSES)


@requires_shared("mtrag-un", "generation/reference.jsonl")
def test_the_release_reads_whole() -> None:
    tasks = read_tasks(RELEASE)
    counts = {c: sum(t.answerability == c for t in tasks) for c in CLASSES}
    assert len(tasks) == 507 and counts == {"ANSWERABLE": 285, "PARTIAL": 47, "UNANSWERABLE": 97,
                                            "UNDERSPECIFIED": 78}
    assert {t.domain for t in tasks} == {"clapnq", "cloud", "fiqa", "govt"}


# -- ragjudge judge on an MTRAG-UN file (offline defaults) ------------------------------------------------------


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("un-judge") / "scored.jsonl"
    code, stdout, stderr = run_cli_once(["judge", str(FIXTURE), "--out", str(out), "--format", "json"])
    return {"code": code, "summary": json.loads(stdout), "stderr": stderr, "rows": rows_of(out)}


def test_judge_picks_mtrag_un_and_the_offline_official_judges(judged: dict) -> None:
    assert judged["code"] == 0, judged["stderr"]
    summary = judged["summary"]
    assert summary["bench"] == "mtrag-un" and summary["n_samples"] == 10 and summary["n_errors"] == 0
    assert set(summary["details"]["judges"]) == {"idk_lexical", "underspecified_lexical", "rb_alg"}
    m = summary["metrics"]
    assert m["RB_agg_idk_underspecified"]["n"] == 10  # every task, UNDERSPECIFIED included
    assert m["RB_agg_idk"]["n"] == 7 and m["answerability_acc"]["n"] == 7  # MTRAG's, as before
    assert m["underspecified_eval"]["higher_is_better"] is None and m["underspecified_eval"]["kind"] == "rate"
    assert m["RB_agg_idk_underspecified"]["higher_is_better"] is True
    assert m["RB_agg_idk_underspecified"]["kind"] == "score"
    assert summary["headline"]["metric"] == "RB_agg_idk_underspecified"


def test_each_task_is_conditioned_by_the_official_formula(judged: dict) -> None:
    got = {}
    for tid, row in judged["rows"].items():
        m = {k: v[0] for k, v in row["metrics"].items()}
        want = official(row["answerability"][0], m["idk_lexical"], m["underspecified_eval"], m["RB_agg"])
        assert m["RB_agg_idk_underspecified"] == pytest.approx(want, abs=1e-12), tid
        got[tid[:3]] = (m["idk_lexical"], m["underspecified_eval"])
    # what the offline judges read in the fixture's predictions (tests/fixtures/mtrag-un/README.md)
    assert got == {"a01": (0.0, 0.0), "a02": (0.0, 0.0), "a03": (1.0, 0.0), "a04": (0.0, 0.0), "a05": (0.0, 0.0),
                   "a06": (1.0, 0.0), "a07": (0.0, 0.0), "a08": (0.0, 1.0), "a09": (0.0, 1.0), "a10": (0.0, 0.0)}
    values = [r["metrics"]["RB_agg_idk_underspecified"][0] for r in judged["rows"].values()]
    assert model_close(judged["summary"]["metrics"]["RB_agg_idk_underspecified"]["value"], sum(values) / 10)


def test_breakdown_by_answerability_has_the_four_classes(judged: dict) -> None:
    b = judged["summary"]["breakdowns"]["answerability"]
    assert list(b["groups"]) == sorted(CLASSES)
    assert b["columns"][0] == "RB_agg_idk_underspecified" and "underspecified_eval" in b["columns"]
    under = b["groups"]["UNDERSPECIFIED"]
    assert under["n"] == 3
    assert under["metrics"]["RB_agg_idk_underspecified"] == {"value": pytest.approx(2 / 3, abs=1e-6), "n": 3,
                                                             "errors": 0, "not_applicable": 0, "std": None,
                                                             "ci": None}
    assert under["metrics"]["underspecified_eval"]["value"] == pytest.approx(2 / 3, abs=1e-6)
    assert under["metrics"]["RB_agg_idk"]["n"] == 0  # MTRAG's conditioning leaves it out, as before
    unans = b["groups"]["UNANSWERABLE"]["metrics"]["RB_agg_idk_underspecified"]
    assert (unans["value"], unans["n"]) == (0.5, 2)  # a06 declined (1), a07 invented (0)


def test_multi_label_breakdowns_count_a_task_under_each_label(judged: dict) -> None:
    breakdowns = judged["summary"]["breakdowns"]
    multi = breakdowns["multi_turn"]
    assert {k: g["n"] for k, g in multi["groups"].items()} == {"Clarification": 4, "Follow-up": 6}
    assert multi["note"] == "a task with several multi-turn types counts under each"
    types = breakdowns["question_type"]
    assert {k: g["n"] for k, g in types["groups"].items()} == {"Explanation": 2, "Factoid": 6, "How-To": 1,
                                                                "Keyword": 1, "Opinion": 1, "Summarization": 1}
    assert types["note"] == "a task with several question types counts under each"
    assert {k: g["n"] for k, g in breakdowns["domain"]["groups"].items()} == {"clapnq": 3, "cloud": 2, "fiqa": 2,
                                                                             "govt": 3}
    assert "standalone" not in breakdowns
    assert any("standalone" in note and "does not label" in note for note in judged["summary"]["notes"])


def test_judge_output_keeps_the_release_fields(judged: dict) -> None:
    source = rows_of(FIXTURE)
    for tid, row in judged["rows"].items():
        for key, value in source[tid].items():
            assert row[key] == value, (tid, key)
        assert isinstance(row["turn"], str)


def test_standalone_breakdown_where_the_tasks_say(tmp_path: Path, monkeypatch, capsys) -> None:
    records = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    labels = ["standalone", "non-standalone", "Standalone", "Non-standalone", None]
    for i, r in enumerate(records):
        if labels[i % 5] is not None:
            r["Standalone Type"] = [labels[i % 5]] if i % 2 else labels[i % 5]
    source = tmp_path / "labelled.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, out, err = run_cli(["judge", str(source), "--judges", "idk_lexical,underspecified_lexical", "--out",
                              str(tmp_path / "o.jsonl"), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads(out)
    groups = summary["breakdowns"]["standalone"]["groups"]
    assert {k: g["n"] for k, g in groups.items()} == {"non-standalone": 4, "standalone": 4}
    assert summary["breakdowns"]["standalone"]["title"] == "Standalone vs non-standalone questions"
    # no metric that needs a reference-based score: the underspecified conditioning has nothing to condition
    assert "RB_agg_idk_underspecified" not in summary["metrics"]
    assert summary["metrics"]["underspecified_eval"]["value"] == pytest.approx(0.2)


def test_bench_mtrag_on_the_same_file_keeps_mtrags_metrics_only(tmp_path: Path, monkeypatch, capsys) -> None:
    code, out, err = run_cli(["judge", str(FIXTURE), "--bench", "mtrag", "--judges", "idk_lexical", "--out",
                              str(tmp_path / "o.jsonl"), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["bench"] == "mtrag" and set(summary["metrics"]) == {"idk_lexical", "answerability_acc"}
    assert summary["metrics"]["answerability_acc"]["n"] == 7


@pytest.mark.parametrize(("args", "message"), [
    (["--judges", "underspecified_lexical,underspecified", "--judge-models", "openai/x"],
     "error: judges underspecified_lexical and underspecified both write underspecified_eval: choose one\n"),
    (["--bench", "mtrag-2"], "error: --bench must be rag, mtrag or mtrag-un, got 'mtrag-2'\n"),
    (["--judges", "underspecified"], "error: judge(s) underspecified need an LLM: pass --judge-models "
     "MODEL[,MODEL...] (offline judges: idk_lexical, underspecified_lexical, rb_alg)\n"),
])
def test_usage_errors_are_one_line(args: list[str], message: str, tmp_path: Path, monkeypatch, capsys) -> None:
    code, out, err = run_cli(["judge", str(FIXTURE), *args, "--out", str(tmp_path / "o.jsonl")], monkeypatch, capsys)
    assert (code, out, err) == (2, "", message)
    assert not (tmp_path / "o.jsonl").exists()


def test_eval_bench_mtrag_un_generates_and_judges(tmp_path: Path, monkeypatch, capsys) -> None:
    code, out, err = run_cli(["eval", "--bench", "mtrag-un", "--data", str(FIXTURE), "--gen", "extractive",
                              "--judges", "idk_lexical,underspecified_lexical", "--out", str(tmp_path / "run"),
                              "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["bench"] == "mtrag-un" and summary["n_samples"] == 10
    assert set(summary["breakdowns"]["answerability"]["groups"]) == set(CLASSES)
    assert summary["metrics"]["underspecified_eval"]["n"] == 10


# -- Must show: the release, its reference answers as predictions -----------------------------------------------


def judge_release(tmp: Path, every: int) -> dict:
    """The release's reference answers as predictions (every `every`-th task), judged offline with RB_alg."""
    if not RELEASE.exists():
        pytest.skip(f"needs {RELEASE} (the MTRAG-UN development data)")
    source = tmp / "references-as-predictions.jsonl"
    records = [json.loads(line) for line in RELEASE.read_text().splitlines()][::every]
    for r in records:
        r["predictions"] = [{"text": r["targets"][0]["text"]}]
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp / "scored.jsonl"
    code, stdout, stderr = run_cli_once(["judge", str(source), "--judges", "idk_lexical,underspecified_lexical,rb_alg",
                                         "--out", str(out), "--format", "json"], env={"HF_HUB_OFFLINE": "1"})
    return {"code": code, "summary": json.loads(stdout), "stderr": stderr, "rows": rows_of(out), "n": len(records)}


@pytest.fixture(scope="module")
def release_judged(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """All 507 tasks (RB_alg with the bundled MiniLM encodes every reference passage: about 4 CPU-minutes, so
    these tests are marked `release`, outside the default run: `python -m pytest -m release`)."""
    return judge_release(tmp_path_factory.mktemp("un-release"), 1)


@pytest.fixture(scope="module")
def release_sample(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Every 8th task of the release (64 tasks, each answerability class): the default run's check."""
    return judge_release(tmp_path_factory.mktemp("un-sample"), 8)


def assert_official_formula(judged: dict) -> None:
    assert judged["code"] == 0, judged["stderr"]
    values = []
    for tid, row in judged["rows"].items():
        m = {k: v[0] for k, v in row["metrics"].items()}
        want = official(row["answerability"][0], m["idk_lexical"], m["underspecified_eval"], m["RB_agg"])
        assert m["RB_agg_idk_underspecified"] == want, tid  # exact: the formula on the task's own values
        values.append(m["RB_agg_idk_underspecified"])
    assert len(values) == judged["n"] == judged["summary"]["n_samples"]
    assert model_close(judged["summary"]["metrics"]["RB_agg_idk_underspecified"]["value"],
                       sum(values) / len(values))
    groups = judged["summary"]["breakdowns"]["answerability"]["groups"]
    assert set(groups) == {"ANSWERABLE", "PARTIAL", "UNANSWERABLE", "UNDERSPECIFIED"}
    assert groups["UNDERSPECIFIED"]["metrics"]["RB_agg_idk_underspecified"]["value"] == 1.0  # every reference
    # clarification is read as one


def test_release_sample_rb_agg_idk_underspecified_is_the_official_formula_per_task(release_sample: dict) -> None:
    assert_official_formula(release_sample)


@pytest.mark.release
def test_release_every_task_is_scored(release_judged: dict) -> None:
    assert release_judged["code"] == 0, release_judged["stderr"]
    summary = release_judged["summary"]
    assert summary["bench"] == "mtrag-un" and summary["n_samples"] == 507 and summary["n_errors"] == 0
    for name in ("RB_agg", "idk_lexical", "underspecified_eval", "RB_agg_idk_underspecified"):
        assert (summary["metrics"][name]["n"], summary["metrics"][name]["errors"]) == (507, 0), name
    assert summary["metrics"]["RB_agg_idk"]["n"] == 429  # MTRAG's conditioning: UNDERSPECIFIED left out
    groups = summary["breakdowns"]["answerability"]["groups"]
    assert {k: g["n"] for k, g in groups.items()} == {"ANSWERABLE": 285, "PARTIAL": 47, "UNANSWERABLE": 97,
                                                      "UNDERSPECIFIED": 78}
    assert all(g["metrics"]["RB_agg_idk_underspecified"]["n"] == g["n"] for g in groups.values())


@pytest.mark.release
def test_release_rb_agg_idk_underspecified_is_the_official_formula_per_task(release_judged: dict) -> None:
    assert_official_formula(release_judged)


# -- the paper's Tables 4 and 5 beside ours ---------------------------------------------------------------------


def test_paper_table_4_beside_a_run_with_reference_based_scores(judged: dict) -> None:
    [table4] = judged["summary"]["reference"]
    assert table4["source"] == "MTRAG-UN (Rosenthal et al., 2026), Table 4" and table4["comparable"] == ""
    assert table4["columns"] == ["model", "RL_F •", "RL_F ◦", "RB_llm •", "RB_llm ◦", "RB_alg •", "RB_alg ◦"]
    rows = {r[0]: r[1:] for r in table4["rows"]}
    assert len(rows) == 14 and rows["target"] == [0.85, 0.69, 0.96, 0.92, 0.89, 0.88]
    assert rows["gpt-oss-120b"] == [0.65, 0.59, 0.76, 0.65, 0.46, 0.37]
    assert rows["phi-4"] == [0.54, 0.49, 0.64, 0.57, 0.40, 0.34]
    assert "predictions judged as given" in table4["notes"][1] and "rb_alg: " in table4["notes"][1]


def test_paper_table_5_types_of_the_answers_to_underspecified_tasks(judged: dict) -> None:
    [types] = [t for t in judged["summary"]["tables"] if "Table 5" in t["title"]]
    counts = {row[0]: row[1] for row in types["rows"]}
    # a08 "There are two permits. Which one are you asking about?", a09 "Please specify the fund you mean.",
    # a10 answers without asking
    assert counts == {"hedging with answers": 0, "hedging over list": 0, "open-domain": 2,
                      "does not ask for clarification": 1}


@pytest.mark.parametrize(("text", "kind"), [
    ("There are many parks you could be talking about, like Watkins Park, Long Point Park, or Sampson Park. "
     "Which one are you referring to?", "hedging over list"),
    ("There are several permits, such as: 1) day, 2) season, 3) family. Which one are you talking about?",
     "hedging over list"),
    ("There are two ferries: the morning ferry, which leaves Kestrel at 7 and stops at every harbour on the way, "
     "and the fast evening ferry. Which one are you asking about?", "hedging with answers"),
    ("Which county are you referring to?", "open-domain"),
    ("There are many seasons. Which one are you talking about?", "open-domain"),
])
def test_response_types(text: str, kind: str) -> None:
    from ragjudge.bench.mtrag.un.summary import response_type

    assert response_type(text, True) == kind
    assert response_type(text, False) == "does not ask for clarification"


def test_generated_run_shows_only_its_settings_columns_of_table_4(tmp_path: Path, monkeypatch, capsys) -> None:
    code, out, err = run_cli(["eval", "--bench", "mtrag-un", "--data", str(FIXTURE), "--gen", "extractive",
                              "--judges", "rb_alg", "--out", str(tmp_path / "run"), "--format", "json"],
                             monkeypatch, capsys)
    assert code == 0, err
    [table4] = json.loads(out)["reference"]
    assert table4["columns"] == ["model", "RL_F •", "RB_llm •", "RB_alg •"]
    assert table4["rows"][0] == ["target", 0.85, 0.96, 0.89] and "setting reference" in table4["notes"][1]
