"""The MTRAG family's sample log (samples.jsonl): every line of each bench's shipped example run validates against
`ragjudge schema sample` and carries what the mapping promises (bench/mtrag/samples.py, retrieval/samples.py): for
generation, in every setting and for a judged predictions file, the conversation, the passages the answer was made
from and the reference ones, every metric with the judge's verdict, the breakdown labels; MTRAG-UN's clarification
verdicts; for retrieval, the ranking, the qrels' relevant passages and the per-query figures retrieval-eval computes.
The official records (results.jsonl) are written from the same outcomes; `ragjudge report` reads the runs."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conftest import MINI, MTRAG_FIXTURES, REPO, run_cli, run_cli_once
from ragjudge.formats.mtrag import read_predictions, read_tasks
from ragjudge.formats.runs import read_qrels, read_run
from ragjudge.retrieval_eval import evaluate_run

UN_FIXTURES = REPO / "tests" / "fixtures" / "mtrag-un"
RESPONSES = MTRAG_FIXTURES / "generation" / "responses-10.jsonl"
RETRIEVAL = MTRAG_FIXTURES / "retrieval"
QRELS = RETRIEVAL / "clapnq" / "qrels.tsv"
RANX = [f"{f}@{k}" for f in ("recall", "ndcg") for k in (1, 3, 5, 10)]


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each bench's shipped example, run once: name -> its samples file (the summary beside it)."""
    root = tmp_path_factory.mktemp("samples")
    index = ["--index-dir", str(root / "idx")]
    commands = {
        "reference": ["eval", "--bench", str(MINI), "--gen", "extractive", "--out", str(root / "reference")],
        "rag": ["eval", "--bench", str(MINI), "--gen", "extractive", "-T", "setting=rag", "--pipeline", "bm25",
                "--corpus", str(MINI / "corpus.jsonl"), "--judges", "idk_lexical", "--out", str(root / "rag"), *index],
        "judged": ["judge", str(RESPONSES), "--judges", "idk_lexical,rb_alg", "--out", str(root / "judged.jsonl")],
        "un": ["judge", str(UN_FIXTURES / "predictions.jsonl"), "--out", str(root / "un.jsonl")],
        "retrieval": ["eval", "--bench", "mtrag-retrieval", "--data", str(RETRIEVAL), "-T", "domain=clapnq",
                      "--pipeline", "bm25", "--corpus", str(MTRAG_FIXTURES / "corpus" / "clapnq_pool.jsonl"),
                      "--out", str(root / "retrieval"), *index],
        "un-retrieval": ["eval", "--bench", "mtrag-un-retrieval", "--data", str(UN_FIXTURES / "release"),
                         "-T", "domain=clapnq", "-T", "queries=lastturn,questions",
                         "-T", f"labels={UN_FIXTURES / 'standalone.jsonl'}", "--pipeline", "bm25",
                         "--corpus", str(UN_FIXTURES / "release" / "corpora" / "passage_level" / "clapnq.jsonl"),
                         "--out", str(root / "un-retrieval"), *index],
    }
    found = {}
    for name, args in commands.items():
        code, _, err = run_cli_once([*args, "--format", "json"])
        assert code == 0, f"{name}: {err}"
        out = Path(args[args.index("--out") + 1])
        found[name] = out / "samples.jsonl" if out.is_dir() else out.with_name(out.stem + ".samples.jsonl")
    return found


def summary_of(samples: Path) -> dict:
    path = samples.with_name("summary.json") if samples.name == "samples.jsonl" else \
        samples.with_name(samples.name.replace(".samples.jsonl", ".summary.json"))
    return json.loads(path.read_text())


def test_every_line_validates_against_the_published_schema(runs: dict[str, Path], monkeypatch, capsys) -> None:
    code, out, err = run_cli(["schema", "sample"], monkeypatch, capsys)
    assert code == 0, err
    schema = json.loads(out)
    for name, path in runs.items():
        samples, summary = lines(path), summary_of(path)
        for line in samples:
            jsonschema.validate(line, schema)
        assert len(samples) == summary["n_samples"] == len({s["id"] for s in samples}), name
        labelled = {k for s in samples for k in s.get("labels", {})}
        assert set(summary["breakdowns"]) <= labelled, name
        named = {k for s in samples for k in s.get("scores", {})}
        assert named <= set(summary["metrics"]), name  # per-sample scores go by the summary's names


# -- generation ---------------------------------------------------------------------------------------------


def test_reference_setting_shows_what_the_generator_saw(runs: dict[str, Path]) -> None:
    tasks = {t.task_id: t for t in read_tasks(MINI / "tasks.jsonl")}
    for s in lines(runs["reference"]):
        task = tasks[s["id"]]
        assert [m["content"] for m in s["input"]] == [t.text for t in task.input]
        assert s["input"][-1]["role"] == "user" and {m["role"] for m in s["input"]} <= {"user", "assistant"}
        assert s["target"] == [t.text for t in task.targets]
        assert [p["id"] for p in s.get("target_contexts", [])] == [p.document_id for p in task.contexts]
        shown = [] if task.answerability in ("UNANSWERABLE", "CONVERSATIONAL") else task.contexts
        assert [p["id"] for p in s.get("contexts", [])] == [p.document_id for p in shown]
        assert s["output"] and (s["metadata"]["setting"], s["metadata"]["generator"]) == ("reference", "extractive")
        record = s["metadata"]["record"]  # the task's own record as read, but for what the sample holds itself
        assert record == {k: v for k, v in task.raw.items() if k not in ("input", "contexts")} and "query" not in \
            s["metadata"]
        assert s["labels"]["answerability"] == task.answerability and s["labels"]["domain"] == task.domain
        assert s["labels"]["turn"] == ("first" if task.turn == 1 else "later")
        rb = s["scores"]["RB_agg"]
        assert rb["judge"] == "rb_alg" and "all-MiniLM-L6-v2" in rb["model"]
        assert rb["details"]["RougeL_stemFalse"] == s["scores"]["RougeL_stemFalse"]["value"]
        assert s["scores"]["idk_lexical"]["label"] in ("yes", "partial", "no")


def test_the_official_records_are_written_from_the_same_outcomes(runs: dict[str, Path]) -> None:
    for name in ("reference", "rag", "judged", "un"):
        samples = {s["id"]: s for s in lines(runs[name])}
        results = runs[name].with_name("results.jsonl") if runs[name].name == "samples.jsonl" else \
            runs[name].with_name(runs[name].name.replace(".samples", ""))
        records = lines(results)
        assert [str(r["task_id"]) for r in records] == list(samples), name
        for record in records:
            sample = samples[str(record["task_id"])]
            assert record["predictions"] == [{"text": sample["output"]}]
            assert {m: v[0] for m, v in record["metrics"].items()} == {
                m: s["value"] for m, s in sample["scores"].items() if "value" in s}, (name, sample["id"])
            for judge, verdict in record["ragjudge"]["judges"].items():
                score = next(s for s in sample["scores"].values() if s.get("judge") == judge)
                assert (score.get("label"), score.get("rationale")) == (verdict.get("label"),
                                                                       verdict.get("rationale"))


def test_rag_setting_keeps_the_retrieved_passages_the_references_and_the_query(runs: dict[str, Path]) -> None:
    tasks = {t.task_id: t for t in read_tasks(MINI / "tasks.jsonl")}
    records = {r["task_id"]: r for r in lines(runs["rag"].with_name("results.jsonl"))}
    for s in lines(runs["rag"]):
        task = tasks[s["id"]]
        assert 1 <= len(s["contexts"]) <= 5 and all(p["metadata"]["origin"] == "retrieved" for p in s["contexts"])
        assert [p["score"] for p in s["contexts"]] == sorted((p["score"] for p in s["contexts"]), reverse=True)
        assert [p["id"] for p in s["contexts"]] == [c["document_id"] for c in records[s["id"]]["contexts"]]
        assert [p["id"] for p in s.get("target_contexts", [])] == [p.document_id for p in task.contexts] == \
            [c["document_id"] for c in records[s["id"]]["ragjudge"]["reference_contexts"]]
        assert s["metadata"]["setting"] == "rag"
        assert s["metadata"]["query"] == {"text": task.question.strip(), "strategy": "last_turn"}


def test_a_judged_predictions_file_shows_its_passages_and_calls_none_a_reference(runs: dict[str, Path]) -> None:
    given = {t.task_id: (t, p) for t, p in read_predictions(RESPONSES)}
    samples = lines(runs["judged"])
    assert [s["id"] for s in samples] == list(given)
    for s in samples:
        task, prediction = given[s["id"]]
        assert s["output"] == prediction.text and "target_contexts" not in s
        assert [p["id"] for p in s.get("contexts", [])] == [p.document_id for p in task.contexts]
        assert "setting" not in s["metadata"] and "generator" not in s["metadata"]


def test_mtrag_un_samples_carry_the_clarification_verdicts(runs: dict[str, Path]) -> None:
    samples = lines(runs["un"])
    summary = summary_of(runs["un"])
    assert summary["bench"] == "mtrag-un"
    under = [s for s in samples if s["labels"]["answerability"] == "UNDERSPECIFIED"]
    assert under and all(s["scores"]["underspecified_eval"]["judge"] == "underspecified_lexical" for s in under)
    for s in samples:
        conditioned = {m for m in s["scores"] if m.endswith("_idk_underspecified")}
        assert conditioned == {"RB_agg_idk_underspecified"}, s["id"]  # over every task, MTRAG-UN's way
        assert ("response_type" in s["metadata"]) == (s in under)
    [table] = [t for t in summary["tables"] if "UNDERSPECIFIED" in t["title"]]
    counted = {row[0]: row[1] for row in table["rows"]}
    assert {t: sum(s["metadata"]["response_type"] == t for s in under) for t in counted} == counted


# -- retrieval ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["retrieval", "un-retrieval"])
def test_a_retrieval_sample_is_the_ranking_with_retrieval_eval_s_figures(runs: dict[str, Path], name: str) -> None:
    samples, summary = lines(runs[name]), summary_of(runs[name])
    qrels_file = QRELS if name == "retrieval" else UN_FIXTURES / "release" / "retrieval" / "qrels" / "clapnq.tsv"
    qrels = read_qrels(qrels_file)
    for kind in summary["details"]["by_queries"]:
        report = evaluate_run(read_run(runs[name].with_name(f"{kind}.jsonl")), qrels, metrics=RANX)
        expected = {row["query_id"]: row for row in report.per_query()}
        of_kind = [s for s in samples if s["metadata"]["query_kind"] == kind]
        assert {s["metadata"]["query_id"] for s in of_kind} == set(expected)
        for s in of_kind:
            row = expected[s["metadata"]["query_id"]]
            assert s["id"] == f"{kind}/{s['metadata']['query_id']}"
            assert {m: v["value"] for m, v in s["scores"].items()} == {m: row[m] for m in s["scores"]}
            assert len(s["scores"]) == 8
            key = next(k for k, i in qrels.ids.items() if i == s["metadata"]["query_id"])
            assert {p["id"]: p["score"] for p in s["target_contexts"]} == qrels.relevant(key)
            assert s["contexts"] and all(p["text"] and p["score"] is not None for p in s["contexts"])
        means = {m: round(sum(s["scores"][m]["value"] for s in of_kind) / len(of_kind), 6) for m in ("R@5",
                                                                                                  "nDCG@10")}
        assert means == {m: summary["details"]["by_queries"][kind]["metrics"][m]["value"] for m in means}
    for dim, breakdown in summary["breakdowns"].items():  # the labels group samples as the summary does
        for group, stats in breakdown["groups"].items():
            parts = group.split(", ")
            members = [s for s in samples if s["labels"]["queries"] == parts[0]
                       and (len(parts) == 1 or s["labels"].get(dim) == parts[1])]
            assert len(members) == stats["n"], (dim, group)


def test_retrieval_inputs_are_the_turn_asked_or_the_conversation(runs: dict[str, Path]) -> None:
    last_turns = {json.loads(x)["_id"]: json.loads(x)["text"].removeprefix("|user|: ")
                  for x in (RETRIEVAL / "clapnq" / "lastturn.jsonl").read_text().splitlines()}
    for s in lines(runs["retrieval"]):
        assert s["input"] == last_turns[s["metadata"]["query_id"]]  # rewrites too: the turn as the user asked it
    conversational = lines(runs["un-retrieval"])
    assert all(isinstance(s["input"], list) and s["input"][-1]["role"] == "user" for s in conversational)
    assert all(s["labels"]["standalone"] in ("standalone", "non-standalone") for s in conversational)


# -- the report and the Python API read the runs ------------------------------------------------------------


@pytest.mark.parametrize("name", ["reference", "un", "retrieval"])
def test_report_and_to_pandas_read_the_runs(runs: dict[str, Path], name: str, tmp_path: Path, monkeypatch,
                                            capsys) -> None:
    import ragjudge

    run = runs[name].parent if runs[name].name == "samples.jsonl" else \
        runs[name].with_name(runs[name].name.replace(".samples", ""))
    code, _, err = run_cli(["report", str(run), "--out", str(tmp_path / "report.html")], monkeypatch, capsys)
    assert code == 0 and (tmp_path / "report.html").is_file(), err
    frame = ragjudge.load_run(run).to_pandas()
    assert {"question", "answer", "contexts"} <= set(frame.columns)
    assert ("reference" in frame.columns) == (name != "retrieval")  # a retrieval run has no reference answer
    assert len(frame) == len(lines(runs[name])) and frame["question"].str.len().min() > 0


def test_a_retrieval_run_folder_is_a_run_for_retrieval_eval_and_an_mtrageval_a_submission(
        runs: dict[str, Path], tmp_path: Path, monkeypatch, capsys) -> None:
    """One query kind's run folder: retrieval-eval reads its rankings and qrels from the sample log (by the task's own
    id) with the bench's figures, and `export --to mtrageval-a` takes each task's Collection from it."""
    release = UN_FIXTURES / "release"
    run = tmp_path / "run"
    corpus = release / "corpora" / "passage_level" / "cloud.jsonl"
    code, _, err = run_cli(["eval", "--bench", "mtrag-un-retrieval", "--data", str(release), "-T", "domain=cloud",
                            "--pipeline", "bm25", "--corpus", str(corpus), "--index-dir", str(tmp_path / "idx"),
                            "--out", str(run)], monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads((run / "summary.json").read_text())
    code, out, err = run_cli(["retrieval-eval", str(run), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    assert {m: v["value"] for m, v in json.loads(out)["metrics"].items() if m in summary["metrics"]} == \
        {m: v["value"] for m, v in summary["metrics"].items()}
    code, _, err = run_cli(["export", str(run), "--to", "mtrageval-a", "--out", str(tmp_path / "a.jsonl")],
                           monkeypatch, capsys)
    assert code == 0, err
    tasks = {t.task_id: t for t in read_tasks(release / "generation" / "reference.jsonl")}
    submitted = lines(tmp_path / "a.jsonl")
    assert len(submitted) == summary["n_samples"] and all(
        line["Collection"] == tasks[line["task_id"]].collection == "ibmcloud" for line in submitted)
