"""`ragjudge eval --bench dialsim` end to end: offline agents with BM25 and the bundled dense encoder, an LLM
agent and the LLM judge through the local test server, reproducibility, plan reuse, resume, time limits."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from conftest import run_cli
from dialsim_helpers import MINI_DIR

from ragjudge.formats.samples import Sample, read_samples
from ragjudge.testing.openai_server import OpenAIServer, Reply, Request, by_model

BASE = ["eval", "--bench", "dialsim", "--data", str(MINI_DIR)]


def run(monkeypatch, capsys, out: Path, *args: str) -> tuple[int, str, str]:
    return run_cli([*BASE, *args, "--out", str(out)], monkeypatch, capsys)


def results(out: Path) -> list[Sample]:
    """The run's sample log (DialSim writes no results.jsonl: it has no record format other tools read)."""
    return read_samples(out / "samples.jsonl")


def decisions(out: Path) -> list[tuple]:
    """What must not depend on timing: question, answer, memory shown, verdicts."""
    return [(s.id, s.input, s.output, [(p.id, p.title) for p in s.contexts], s.scores["accuracy"].label,
             s.scores["accuracy_calibrated"].label) for s in results(out)]


def test_offline_session_bm25_prints_the_breakdowns(tmp_path: Path, monkeypatch, capsys) -> None:
    started = time.perf_counter()
    code, stdout, err = run(monkeypatch, capsys, tmp_path / "run", "--gen", "mc-lexical", "-T", "memory=session",
                            "-T", "retriever=bm25")
    assert code == 0, err
    assert time.perf_counter() - started < 20
    for title in ("By show", "By source", "By hop", "By answerability", "By type", "By seed"):
        assert title in stdout
    assert re.search(r"accuracy\s+↑\s+0\.\d+", stdout) and re.search(r"invented_rate\s+↓", stdout)
    assert re.search(r"idk_precision\s+↑", stdout) and re.search(r"ambiguous\s+↓\s+0\s", stdout)  # counts: whole
    assert stdout.rstrip().splitlines()[-1].startswith("accuracy 0.")  # the headline, last
    folder = tmp_path / "run"
    assert {p.name for p in folder.iterdir()} >= {"plan.jsonl", "samples.jsonl", "results.csv", "summary.json",
                                                   "run.json", "predictions.jsonl", "judgements.jsonl"}
    assert not (folder / "results.jsonl").exists()
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["breakdowns"]["source"]["groups"].keys() == {"fan", "temporal"}
    assert summary["metrics"]["accuracy"]["value"] > 0.25  # well above always-(E) and random on this show
    assert summary["headline"]["metric"] == "accuracy" and summary["unit"] == "questions"
    assert summary["headline"]["text"] == f"accuracy {summary['metrics']['accuracy']['value']:.3f} over " \
        f"{summary['metrics']['accuracy']['n']} questions"
    assert stdout.rstrip().splitlines()[-1] == summary["headline"]["text"]  # one line, as summary.json has it
    rows = results(folder)
    assert all(r.contexts and r.scores["accuracy"].details["judged_by"] == "rule" for r in rows)


def test_offline_utterance_memory_with_the_bundled_dense_encoder(tmp_path: Path, monkeypatch, capsys) -> None:
    code, stdout, err = run(monkeypatch, capsys, tmp_path / "run", "--gen", "mc-lexical", "-T", "memory=utterance",
                            "-T", "retriever=dense", "--index-dir", str(tmp_path / "idx"), "--format", "json")
    assert code == 0, err
    summary = json.loads(stdout)
    assert set(summary["breakdowns"]) == {"seed", "show", "source", "hop", "answerability", "type"}
    run_info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run_info["retriever"]["retriever"]["name"] == "dense" and run_info["k"] == 20
    assert run_info["indexes"]["mini"]["passages"] > 100  # one vector per utterance, computed once
    rows = results(tmp_path / "run")
    assert all(all(", Utterance #" in (p.title or "") for p in r.contexts) for r in rows)
    assert all(len(r.contexts) <= 20 for r in rows)


def test_same_seed_same_plan_and_results_at_concurrency_1_and_8(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(agent_reply, latency=0.02) as server:
        for name, concurrency in (("c1", "1"), ("c8", "8")):
            code, _, err = run(monkeypatch, capsys, tmp_path / name, "--gen", "openai/agent", "-T", "seeds=3,4",
                               "--concurrency", concurrency, "--no-cache", "--api-base", server.base_url)
            assert code == 0, err
        asked = len(server.requests)
    assert asked == 2 * len(results(tmp_path / "c1"))  # every question asked in both runs: no cache
    assert (tmp_path / "c1" / "plan.jsonl").read_bytes() == (tmp_path / "c8" / "plan.jsonl").read_bytes()
    assert decisions(tmp_path / "c1") == decisions(tmp_path / "c8")
    other = tmp_path / "seed5"
    code, _, err = run(monkeypatch, capsys, other, "--gen", "mc-lexical", "-T", "seeds=5")
    assert code == 0, err
    plans = [(tmp_path / d / "plan.jsonl").read_text().splitlines() for d in ("c1", "seed5")]
    assert {json.loads(line)["seed"] for line in plans[0]} == {3, 4}
    strip = lambda lines: [{k: v for k, v in json.loads(line).items() if k not in ("id", "seed")} for line in lines]
    assert strip(plans[1]) != [q for q in strip(plans[0])[: len(plans[1])]]
    summary = json.loads((tmp_path / "c1" / "summary.json").read_text())
    assert summary["metrics"]["accuracy"]["std"] is not None and summary["details"]["seeds"] == [3, 4]
    by_seed = summary["breakdowns"]["seed"]["groups"]
    assert set(by_seed) == {"3", "4"} and sum(g["n"] for g in by_seed.values()) == summary["metrics"]["accuracy"]["n"]
    assert summary["metrics"]["accuracy"]["value"] == pytest.approx(
        sum(g["metrics"]["accuracy"]["value"] for g in by_seed.values()) / 2, abs=1e-6)
    assert summary["headline"]["text"].endswith(f"(± {summary['metrics']['accuracy']['std']:.3f} over 2 seeds)")


def test_a_saved_plan_asks_every_agent_the_same_questions(tmp_path: Path, monkeypatch, capsys) -> None:
    code, _, err = run(monkeypatch, capsys, tmp_path / "a", "--gen", "mc-lexical", "-T", "seeds=1", "-T",
                       "names=swapped")
    assert code == 0, err
    plan = tmp_path / "a" / "plan.jsonl"
    code, _, err = run(monkeypatch, capsys, tmp_path / "b", "--gen", "mc-random", "-T", f"plan={plan}",
                       "-T", "memory=oracle")
    assert code == 0, err
    assert (tmp_path / "b" / "plan.jsonl").read_text() == plan.read_text()
    assert [r.input for r in results(tmp_path / "b")] == [r.input for r in results(tmp_path / "a")]
    code, _, err = run(monkeypatch, capsys, tmp_path / "c", "--gen", "mc-idk", "-T", f"plan={plan}",
                       "-T", "names=generic")
    assert code == 2 and "the plan was made with names=swapped" in err and err.startswith(f"error: {plan}:1")


@pytest.mark.parametrize(("args", "message"), [
    (["--gen", "mc-lexical", "-T", "format=open"], "picks among the options"),
    (["--gen", "mc-idk", "-T", "memory=recent", "-T", "retriever=bm25"], "-T retriever is for memories"),
    (["--gen", "mc-idk", "-T", "memory=summary"], "pass -T summary_model=MODEL"),
    (["--gen", "mc-idk", "-T", "retriever=hybrid"], "its retriever is hybrid"),
    (["--gen", "mc-idk", "--judge-models", "openai/j"], "format mc is scored by rule"),
    (["--gen", "mc-idk", "-T", "format=open", "-T", "judge=llm"], "needs --judge-models"),
    (["-T", "memory=session"], "needs --gen AGENT"),
])
def test_option_mistakes_are_one_line(tmp_path: Path, monkeypatch, capsys, args: list[str], message: str) -> None:
    code, _, err = run(monkeypatch, capsys, tmp_path / "x", *args)
    assert code == 2 and message in err and err.count("\n") == 1


def agent_reply(request: Request) -> str | Reply:
    """Answer (A) to multiple choice, the first option in words to mc-nl, 'I don't know.' to open questions."""
    prompt = request.last_user
    if prompt.startswith("Given the following dialog"):
        return "Summary: " + " ".join(re.findall(r"^(\w+):", prompt, re.MULTILINE)[:3])
    if "\t(A) " in prompt:
        return "(A)"
    match = re.search(r"\[Question\] [^:]+: .*?\? (.+?)\? or ", prompt)
    return match.group(1) if match else "I don't know."


def test_llm_agent_gets_the_official_prompt(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(agent_reply) as server:
        code, stdout, err = run(monkeypatch, capsys, tmp_path / "run", "--gen", "openai/agent", "--api-base",
                                server.base_url, "--format", "json")
        requests = list(server.requests)
    assert code == 0, err
    rows = results(tmp_path / "run")
    assert len(requests) == len(rows)
    # Requests run concurrently, so arrival order is not the plan's: take the request of the plan's first question.
    [first] = [r for r in requests if f"[Question] {rows[0].input}\n[Answer]" in r.last_user]
    system, user = first.messages
    assert system == {"role": "system", "content": "You are a helpful assistant."}
    assert all(re.search(r"\[Retrieved Dialog History\]\n\[Date: \w+ \d+, \d{4}, Session #\d+\]\n", r.last_user)
               for r in requests)
    text = user["content"]
    assert text.startswith("You are Mary, a long-term conversation agent capable of interacting with multiple users. \n")
    assert "[Retrieved Dialog History]\n[Date: March 4, 2021, Session #1]\n" in text
    assert re.search(r"\[Question\] \w+: .+\n\t\(A\) .+\n\t\(B\) .+\n\t\(C\) .+\n\t\(D\) .+\n\t\(E\) I don't know\.\n"
                     r"\[Answer\]$", text)
    assert "3. This question is being asked in the context of March 4, 2021." in text
    assert all(r.body["temperature"] == 0.2 and r.body["top_p"] == 0.1 for r in requests)
    accuracy = json.loads(stdout)["metrics"]["accuracy"]["value"]
    assert accuracy == pytest.approx(sum(r.metadata["gold"] == "(A)" for r in rows) / len(rows), abs=1e-6)
    assert all(r.output == "(A)" and r.metadata["latency"] >= 0 for r in rows)


def test_open_ended_answers_with_the_llm_judge(tmp_path: Path, monkeypatch, capsys) -> None:
    def judge(request: Request) -> str:
        user = request.last_user
        truth = user.split("<true answer>\n", 1)[1].split("\n\n<prediction>", 1)[0]
        prediction = user.split("<prediction>\n", 1)[1]
        if "Nobody" in prediction:
            return "certainly correct"  # not JSON: an error, never a verdict
        same = truth.lower().rstrip(".") in prediction.lower()
        return json.dumps({"correct": same, "wrong": not same})

    def agent(request: Request) -> str:
        return "Nobody knows." if "Susan" in request.last_user.rsplit("[Question]", 1)[1] else "I don't know."

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(by_model({"openai/agent": agent, "openai/judge": judge})) as server:
        code, stdout, err = run(monkeypatch, capsys, tmp_path / "run", "--gen", "openai/agent", "-T", "format=open",
                                "--judge-models", "openai/judge", "--api-base", server.base_url, "--format", "json")
        judged = [r for r in server.requests if r.model == "judge"]
    rows = results(tmp_path / "run")
    errors = [r for r in rows if r.scores["accuracy"].error]
    assert code == (1 if errors else 0), err
    unanswerable = [r for r in rows if r.labels["answerability"] == "unanswerable" and r.output == "I don't know."]
    assert unanswerable and all(r.scores["accuracy"].details["judged_by"] == "exact" for r in unanswerable)
    assert all(r.scores["accuracy"].raw is None for r in unanswerable)  # no judge call needed
    assert len(judged) == len(rows) - len(unanswerable)
    assert all(r.scores["accuracy"].raw == "certainly correct" and "no JSON" in (r.scores["accuracy"].error or "")
               and r.scores["accuracy"].model == "openai/judge" for r in errors)
    verdicts = [r.scores["accuracy"] for r in rows if not r.scores["accuracy"].error and r not in unanswerable]
    assert verdicts and all(v.judge == "dialsim_judge" and v.model == "openai/judge" and v.raw for v in verdicts)
    summary = json.loads(stdout)
    assert summary["n_errors"] == len(errors) and summary["details"]["judges"] == {"dialsim": ["openai/judge"]}
    assert summary["run"]["models"]["judges"] == {"dialsim": ["openai/judge"]}
    assert summary["metrics"]["idk_recall"]["value"] == 1.0


def test_summary_memory_resume_and_cache(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    failing = {"on": True}

    def reply(request: Request) -> str | Reply:
        if failing["on"] and "[Question]" in request.last_user and "Karen" in request.last_user.rsplit("[Question]")[-1]:
            return Reply(status=400, content="refused")
        return agent_reply(request)

    with OpenAIServer(reply) as server:
        args = ("--gen", "openai/agent", "-T", "memory=summary", "--api-base", server.base_url, "--max-retries", "0")
        code, _, err = run(monkeypatch, capsys, tmp_path / "run", *args)
        first = len(server.requests)
        summaries = [r for r in server.requests if r.last_user.startswith("Given the following dialog")]
        failed = [r for r in results(tmp_path / "run") if r.error]
        assert code == 1 and 0 < len(failed) < len(results(tmp_path / "run")) and "sample(s) had errors" in err
        assert all("refused" in (r.error or "") and r.output is None for r in failed)
        failing["on"] = False
        code, _, err = run(monkeypatch, capsys, tmp_path / "run", *args)
        second = server.requests[first:]
    assert code == 0, err
    assert len(second) == len(failed)  # only the failed answers are asked again: summaries come from the cache
    assert summaries and all("[Summary]" in r.last_user for r in summaries)
    lines = (tmp_path / "run" / "summaries.jsonl").read_text().splitlines()
    assert len(lines) == len(summaries) and json.loads(lines[0])["summary"].startswith("Summary: ")
    memory = results(tmp_path / "run")[-1].contexts
    assert memory and len(memory) <= 15 and all(p.id and p.id.startswith("session-") for p in memory)


def test_time_limit_abandons_slow_answers(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(agent_reply, latency=0.6) as server:
        code, stdout, err = run(monkeypatch, capsys, tmp_path / "run", "--gen", "openai/agent", "--api-base",
                                server.base_url, "-T", "time_limit=0.2", "-T", "time_limits=0.1,10", "--limit", "3",
                                "--format", "json", "--max-retries", "0")
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["metrics"]["timed_out"]["value"] == 3 and summary["metrics"]["accuracy"]["value"] == 0
    assert summary["metrics"]["timed_out"]["kind"] == "count"
    assert all(r.scores["accuracy"].label == "timeout" and r.metadata["latency"] < 0.6 and r.metadata["timed_out"]
               for r in results(tmp_path / "run"))


def test_benches_show_lists_the_options(monkeypatch, capsys) -> None:
    code, stdout, _ = run_cli(["benches", "show", "dialsim"], monkeypatch, capsys)
    assert code == 0 and "-T memory" in stdout and "-T seeds" in stdout and "--judge-models" in stdout


def test_benches_show_documents_the_table_3_command(monkeypatch, capsys) -> None:
    code, stdout, _ = run_cli(["benches", "show", "dialsim", "--format", "json"], monkeypatch, capsys)
    data = json.loads(stdout)["data"]
    assert code == 0 and "The paper's Table 3" in data
    assert ("`ragjudge eval --bench dialsim --data FOLDER --gen openai/gpt-4o-mini -T shows=friends -T memory=session "
            "-T retriever=bm25 -T seeds=0,1,2`") in data
    assert "oracle pickles" in data and "text-embedding-3-small" in data


def test_dense_memory_through_a_litellm_embeddings_model(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer() as server:
        spec = tmp_path / "emb.yaml"
        spec.write_text(f"retriever:\n  name: dense\n  options:\n    encoder: litellm\n    model: openai/emb\n"
                        f"    api_base: {server.base_url}\n")
        code, _, err = run(monkeypatch, capsys, tmp_path / "run", "--gen", "mc-lexical", "-T", f"retriever={spec}",
                           "--index-dir", str(tmp_path / "idx"), "-T", "seed=2")
        embedded = [r for r in server.requests if r.path.endswith("/embeddings")]
        code2, _, err2 = run(monkeypatch, capsys, tmp_path / "again", "--gen", "mc-idk", "-T", f"retriever={spec}",
                             "--index-dir", str(tmp_path / "idx"), "-T", "seed=2")
        again = [r for r in server.requests if r.path.endswith("/embeddings")][len(embedded):]
    assert code == 0 and code2 == 0, err + err2
    sessions = sum(len(r.body["input"]) for r in embedded[:1])
    assert sessions == 16  # every finished session embedded once, in one batch
    rows = results(tmp_path / "run")
    assert {r.labels["seed"] for r in rows} == {"2"} and all(r.contexts for r in rows)
    # the first run embedded each query and partial session on its own
    assert all(len(r.body["input"]) == 1 for r in embedded[1:]) and len(embedded) == 2 * len(rows) + 1
    # the second run reuses the session index, and the embedding store has every query and partial session
    assert again == []


def test_a_failed_summary_is_an_error_for_the_questions_after_it(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    def reply(request: Request) -> str | Reply:
        if "Welcome to the clinic" in request.last_user and request.last_user.startswith("Given the following"):
            return Reply(status=400, content="summary refused")
        return agent_reply(request)

    with OpenAIServer(reply) as server:
        code, _, err = run(monkeypatch, capsys, tmp_path / "run", "--gen", "mc-idk", "-T", "memory=summary",
                           "-T", "summary_model=openai/summarizer", "--api-base", server.base_url, "--max-retries", "0")
    assert code == 1 and "sample(s) had errors" in err
    rows = results(tmp_path / "run")
    broken = [r for r in rows if r.error]
    assert broken and all(r.metadata["session"] > 2 and "the summary of session 2 failed" in r.error
                          for r in broken)
    assert all(not r.error for r in rows if r.metadata["session"] <= 2)
    lines = [json.loads(line) for line in (tmp_path / "run" / "summaries.jsonl").read_text().splitlines()]
    assert [line["session"] for line in lines if line["error"]] == [2]


def test_summary_metrics_carry_the_declared_direction_and_kind(tmp_path: Path, monkeypatch, capsys) -> None:
    """The report and `benches show` read one declaration: invented_rate is a rate where lower is better, counts
    are whole numbers, latencies seconds, answerability a breakdown (never the metric `answerable`)."""
    code, stdout, err = run(monkeypatch, capsys, tmp_path / "run", "--gen", "mc-idk", "-T", "seeds=0,1",
                            "--format", "json")
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary == json.loads((tmp_path / "run" / "summary.json").read_text())
    metrics = summary["metrics"]
    expected = {"accuracy": (True, "score"), "accuracy_answered": (True, "score"),
                "accuracy_calibrated": (True, "score"), "accuracy@1s": (True, "score"),
                "accuracy@5s": (True, "score"), "idk_precision": (True, "rate"), "idk_recall": (True, "rate"),
                "invented_rate": (False, "rate"), "latency_median": (False, "seconds"),
                "latency_max": (False, "seconds"), "ambiguous": (False, "count"), "timed_out": (False, "count"),
                "declined": (None, "count"), "latency_unknown": (None, "count")}
    for name, (direction, kind) in expected.items():
        assert (metrics[name]["higher_is_better"], metrics[name]["kind"]) == (direction, kind), name
    assert "answerable" not in metrics and "answerability" in summary["breakdowns"]
    groups = summary["breakdowns"]["answerability"]["groups"]
    assert set(groups) == {"answerable", "unanswerable"}
    # mc-idk always says (E): right exactly on the unanswerable questions, never inventing an answer
    assert groups["unanswerable"]["metrics"]["accuracy"]["value"] == 1.0
    assert groups["answerable"]["metrics"]["accuracy"]["value"] == 0.0
    assert metrics["idk_recall"]["value"] == 1.0 and metrics["invented_rate"]["value"] == 0.0
    assert metrics["declined"]["value"] == metrics["accuracy"]["n"]
    assert metrics["idk_recall"]["n"] == groups["unanswerable"]["n"]
    code, shown, _ = run_cli(["benches", "show", "dialsim", "--format", "json"], monkeypatch, capsys)
    declared = {m["name"]: (m["higher_is_better"], m["kind"]) for m in json.loads(shown)["metrics"]}
    assert declared["invented_rate"] == (False, "rate") and declared["accuracy@*s"] == (True, "score")
    assert "answerable" not in declared and "seed" in json.loads(shown)["breakdowns"]
    records = results(tmp_path / "run")
    assert all("answerable" not in r.labels and r.labels["answerability"] in ("answerable", "unanswerable")
               for r in records)
    assert summary["notes"] == ["no paper figure is shown: the paper reports no figures for mc-idk (models are "
                                "matched by exact name, paper.json's alias table)"] and summary["reference"] == []
    inputs = json.loads((tmp_path / "run" / "run.json").read_text())["inputs"]  # every file read, through one door
    assert sorted(Path(i["path"]).name for i in inputs) == ["dialsim_shows.json", "mini_dialsim.json",
                                                            "mini_oracle_fan.json", "mini_oracle_tkg.json"]


def test_paper_figures_only_beside_a_run_they_describe(tmp_path: Path, monkeypatch, capsys) -> None:
    """mc-random is the paper's Random Guessing row; the mini show is not in the paper, so a copy of it named
    `friends` stands in: multiple choice gets Table 3's cell; answers in words, or part of the questions, get a
    note and no paper figure."""
    from dialsim_helpers import SHOWS_FILE

    data = tmp_path / "data"
    data.mkdir()
    for name in ("dialsim", "oracle_tkg", "oracle_fan"):
        (data / f"friends_{name}.json").write_bytes((MINI_DIR / f"mini_{name}.json").read_bytes())
    (data / "mini_dialsim.json").write_bytes((MINI_DIR / "mini_dialsim.json").read_bytes())
    shows = json.loads(SHOWS_FILE.read_text())
    (data / "dialsim_shows.json").write_text(json.dumps({"mini": shows["mini"], "friends": shows["mini"]}))
    base = ["eval", "--bench", "dialsim", "--data", str(data), "--gen", "mc-random", "-T", "shows=friends"]
    code, stdout, err = run_cli([*base, "--out", str(tmp_path / "mc"), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads(stdout)
    [reference] = summary["reference"]
    assert reference["unit"] == "percent" and reference["source"].endswith("Table 3")
    assert reference["rows"] == [["friends", 20.0, None, round(100 * summary["metrics"]["accuracy"]["value"], 2),
                                  None, summary["metrics"]["accuracy"]["n"]]]
    assert "BM25 Session Entire" in reference["title"] and "multiple-choice" in reference["comparable"]
    code, stdout, err = run_cli([*base, "-T", "format=mc-nl", "--out", str(tmp_path / "nl"), "--format", "json"],
                                monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["reference"] == []
    [note] = [n for n in summary["notes"] if n.startswith("no paper figure is shown: ")]
    assert "this run answers mc-nl" in note and "judged by lexical" in note
    code, stdout, err = run_cli([*base, "--limit", "3", "--out", str(tmp_path / "part"), "--format", "json"],
                                monkeypatch, capsys)
    assert code == 0 and json.loads(stdout)["reference"] == [], err
    assert any("only part of its simulation's questions" in n for n in json.loads(stdout)["notes"])


def _friends_copy(tmp_path: Path, oracle: bool = True) -> Path:
    """The mini show as `friends` (a show of the paper's tables), with or without its oracle files."""
    from dialsim_helpers import SHOWS_FILE

    data = tmp_path / "data"
    data.mkdir()
    for name in ("dialsim", *(("oracle_tkg", "oracle_fan") if oracle else ())):
        (data / f"friends_{name}.json").write_bytes((MINI_DIR / f"mini_{name}.json").read_bytes())
    (data / "dialsim_shows.json").write_text(json.dumps({"friends": json.loads(SHOWS_FILE.read_text())["mini"]}))
    return data


def test_a_run_with_a_time_limit_or_open_answers_gets_no_paper_cell_and_one_line(tmp_path: Path, monkeypatch,
                                                                                  capsys) -> None:
    """D1 end to end: the Table 3 cell is keyed by the run's conditions. With -T time_limit, or open answers judged
    lexically, the run prints no paper figure, and exactly one line saying why."""
    data = _friends_copy(tmp_path)
    base = ["eval", "--bench", "dialsim", "--data", str(data), "--gen", "mc-random", "--format", "json"]
    code, stdout, err = run_cli([*base, "-T", "time_limit=30", "--out", str(tmp_path / "tl")], monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["reference"] == []
    assert [n for n in summary["notes"] if "paper" in n] == [
        "no paper figure is shown: the paper reports Random Guessing with generic names in Table 3 (friends), not "
        "under this run's conditions: the paper sets no time limit; this run abandons answers after -T "
        "time_limit=30 s"]
    code, stdout, err = run_cli([*base, "--out", str(tmp_path / "plain")], monkeypatch, capsys)
    assert code == 0 and [r["source"] for r in json.loads(stdout)["reference"]] == [
        "DialSim (Kim et al., arXiv 2406.13144v6), Table 3"], err


def test_without_oracle_dates_the_plan_warns_and_run_json_says_so(tmp_path: Path, monkeypatch, capsys) -> None:
    """D5: without the oracle files (always so for the Hugging Face parquet copy) the plan cannot skip questions
    whose evidence session has not happened yet: more questions are asked than officially (45 instead of 43 over
    seeds 0-2 on the mini show). That was said only by run.json's `"oracle": false`; now a warning line on stderr,
    `evidence_date_rule` in run.json and the summary, and no paper cell."""
    from dialsim_helpers import as_parquet

    args = ["--gen", "mc-idk", "-T", "seeds=0,1,2", "--format", "json"]
    code, stdout, err = run(monkeypatch, capsys, tmp_path / "full", *args)
    assert code == 0 and "warning" not in err, err
    full = json.loads(stdout)
    assert json.loads((tmp_path / "full" / "run.json").read_text())["evidence_date_rule"] == {"mini": True}
    bare = as_parquet(tmp_path / "parquet", oracle=False)
    code, stdout, err = run_cli(["eval", "--bench", "dialsim", "--data", str(bare), *args, "--out",
                                 str(tmp_path / "bare")], monkeypatch, capsys)
    assert code == 0, err
    summary = json.loads(stdout)
    assert (full["metrics"]["accuracy"]["n"], summary["metrics"]["accuracy"]["n"]) == (43, 45)
    [warning] = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warning.startswith("warning: mini: no evidence dates (the oracle files mini_oracle_tkg.pickle and "
                              "mini_oracle_fan.pickle are not beside the data), so the plan cannot skip questions "
                              "whose evidence session has not happened yet")
    assert "(run.json: evidence_date_rule)" in warning and summary["warnings"] == [warning]
    assert json.loads((tmp_path / "bare" / "run.json").read_text())["evidence_date_rule"] == {"mini": False}
    assert summary["details"]["evidence_date_rule"] == {"mini": False}


def test_failed_answers_count_wrong_in_the_headline_and_are_left_out_of_accuracy_answered(
        tmp_path: Path, monkeypatch, capsys) -> None:
    """The paper counts an answer that failed as wrong; ragjudge left it out of the denominator. Now `accuracy`
    (the headline) is the paper's and `accuracy_answered` ours, both declared; the failures are errors (exit 1)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    def reply(request: Request) -> str | Reply:
        if "Karen" in request.last_user.rsplit("[Question]")[-1]:
            return Reply(status=400, content="refused")
        return agent_reply(request)

    with OpenAIServer(reply) as server:
        code, stdout, err = run(monkeypatch, capsys, tmp_path / "run", "--gen", "openai/agent", "--api-base",
                                server.base_url, "--max-retries", "0", "--format", "json")
    rows = results(tmp_path / "run")
    failed = [r for r in rows if r.error]
    assert code == 1 and 0 < len(failed) < len(rows), err
    assert all(r.scores["accuracy"].error and r.scores["accuracy"].value is None for r in failed)
    right = sum(r.scores["accuracy"].value == 1 for r in rows if not r.error)
    summary = json.loads(stdout)
    accuracy, answered = summary["metrics"]["accuracy"], summary["metrics"]["accuracy_answered"]
    assert (accuracy["value"], accuracy["n"], accuracy["errors"]) == (round(right / len(rows), 6), len(rows), 0)
    assert accuracy["details"] == {"failed_counted_wrong": len(failed)}
    n_ok = len(rows) - len(failed)
    assert (answered["value"], answered["n"], answered["errors"]) == (round(right / n_ok, 6), n_ok, len(failed))
    assert summary["headline"]["metric"] == "accuracy" and summary["n_errors"] == len(failed)
    assert summary["headline"]["text"] == (
        f"accuracy {accuracy['value']:.3f} over {len(rows)} questions; {len(failed)} failed answer(s) counted wrong, "
        f"as in the paper (accuracy_answered {answered['value']:.3f} over the {n_ok} answered)")
    shown = json.loads(run_cli(["benches", "show", "dialsim", "--format", "json"], monkeypatch, capsys)[1])
    declared = {m["name"]: m for m in shown["metrics"]}
    assert (declared["accuracy_answered"]["higher_is_better"], declared["accuracy_answered"]["kind"]) == (True, "score")
    assert "counts as wrong" in declared["accuracy"]["counts"] and "left out" in declared["accuracy_answered"]["counts"]


def test_report_reads_each_questions_score(tmp_path: Path, monkeypatch, capsys) -> None:
    """`ragjudge report` reads the sample log: each question with its options, the memory recalled (evidence
    sessions marked), the answer and the gold one; per-question accuracy and calibrated accuracy under the summary's
    names (so the task list's columns and a comparison of two runs line up with the summary); the verdict as a
    facet. A mistyped sample line is one line naming the file, line and field, with no report written."""
    from ragjudge.bench.dialsim.view import DialSimView
    from ragjudge.report.load import load_run
    from ragjudge.report.pack import read_samples as view_samples

    folder = tmp_path / "run"
    code, _, err = run(monkeypatch, capsys, folder, "--gen", "mc-lexical")
    assert code == 0, err
    loaded = load_run(folder)
    assert isinstance(loaded.view, DialSimView) and loaded.notes == []
    shown = view_samples(loaded)
    summary = json.loads((folder / "summary.json").read_text())
    rows = results(folder)
    assert [m["accuracy"] for m in shown.metrics] == [r.scores["accuracy"].value for r in rows]
    assert all(set(m) == {"accuracy", "accuracy_calibrated", "declined"} for m in shown.metrics)  # summary names
    accuracy = [m["accuracy"] for m in shown.metrics]
    assert sum(accuracy) / len(accuracy) == pytest.approx(summary["metrics"]["accuracy"]["value"], abs=1e-6)
    assert sum(m["declined"] for m in shown.metrics) == summary["metrics"]["declined"]["value"]
    assert {f["verdict"] for f in shown.facets} <= {"correct", "wrong", "ambiguous"}
    assert {f["answerability"] for f in shown.facets} == {"answerable", "unanswerable"}
    blocks = {b["title"]: b for b in shown.blocks[0]}
    assert blocks["Question"]["text"] == rows[0].input and "\t(E) " in rows[0].input
    assert blocks["Reference"]["text"] == rows[0].target and rows[0].target.startswith(rows[0].metadata["gold"])
    assert blocks["Answer"]["text"] == rows[0].output
    assert [p["title"] for p in blocks["Memory recalled"]["items"]] == [p.title for p in rows[0].contexts]
    assert [p["id"] for p in blocks["Evidence sessions"]["items"]] == [p.id for p in rows[0].target_contexts]
    marked = [i for i, r in enumerate(rows) if any(p.get("mark") == "reference" for b in shown.blocks[i]
                                                   if b["kind"] == "passages" for p in b["items"])]
    assert marked  # session memory: recalled sessions holding the evidence are marked
    code, _, err = run_cli(["report", str(folder), "--out", str(tmp_path / "report.html")], monkeypatch, capsys)
    assert code == 0 and (tmp_path / "report.html").is_file(), err

    log = folder / "samples.jsonl"
    lines = log.read_text().splitlines()
    broken = json.loads(lines[2])
    broken["scores"]["accuracy"] = "high"
    lines[2] = json.dumps(broken)
    log.write_text("\n".join(lines) + "\n")
    code, _, err = run_cli(["report", str(folder), "--out", str(tmp_path / "broken.html")], monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{log}:3:" in err and "scores.accuracy" in err
    assert not (tmp_path / "broken.html").exists()
