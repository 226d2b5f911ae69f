"""`ragjudge judge` on the benchmark's own sample predictions, offline: the entry point in-process, and
`--version`/`--help`/a usage error through the real console script."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from rouge_score import rouge_scorer

from conftest import MTRAG_FIXTURES, run_cli, run_cli_once


def ragjudge(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ragjudge", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=600)


def check_benchmark_format(input_rows: list[dict], output_rows: list[dict]) -> None:
    """The checks the benchmark's format checker makes on a generation results file."""
    assert sorted(r["task_id"] for r in output_rows) == sorted(r["task_id"] for r in input_rows)
    for row in output_rows:
        assert isinstance(row["task_id"], str)
        assert all(set(t) >= {"speaker", "text"} for t in row["input"])
        assert isinstance(row["contexts"], list) and len(row["contexts"]) <= 10
        for ctx in row["contexts"]:
            assert isinstance(ctx["document_id"], str) and isinstance(ctx["score"], (int, float))
        assert all(isinstance(p["text"], str) for p in row["predictions"])


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> tuple[tuple[int, str, str], Path]:
    source = MTRAG_FIXTURES / "generation" / "responses-10.jsonl"
    out = tmp_path_factory.mktemp("judge") / "judged.jsonl"
    return run_cli_once(["judge", str(source), "--judges", "rb_alg", "--out", str(out), "--format", "json"]), out


def test_scores_all_ten_tasks_offline(judged: tuple[tuple[int, str, str], Path]) -> None:
    (code, stdout, stderr), out = judged
    assert code == 0, stderr
    summary = json.loads(stdout)
    assert summary["n_samples"] == 10
    assert summary["metrics"]["RB_agg"]["n"] == 10 and summary["metrics"]["RB_agg"]["errors"] == 0
    assert set(summary["breakdowns"]) >= {"answerability", "turn", "domain", "question_type", "multi_turn"}
    assert summary["breakdowns"]["domain"]["groups"]["clapnq"]["n"] == 8
    assert "all-MiniLM-L6-v2" in summary["details"]["judges"]["rb_alg"][0]


def test_rouge_equals_rouge_score_and_rb_agg_is_the_harmonic_mean(judged: tuple[tuple[int, str, str], Path]) -> None:
    _, out = judged
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    for row in rows:
        m = row["metrics"]
        expected = scorer.score(row["targets"][0]["text"], row["predictions"][0]["text"])["rougeL"].fmeasure
        assert m["RougeL_stemFalse"][0] == pytest.approx(expected, abs=1e-12)
        if row["contexts"]:
            parts = [(m["BertscoreR"][0] + 1) / 2, m["RougeL_stemFalse"][0], (m["BertKPrec"][0] + 1) / 2]
            assert m["RB_agg"][0] == pytest.approx(3 / sum(1 / p for p in parts), abs=1e-9)
            assert 0 < m["RB_agg"][0] < 1
        else:  # the benchmark's rule: no passages → no BertKPrec → RB_agg 0
            assert "BertKPrec" not in m and m["RB_agg"] == [0.0]
        model = row["ragjudge"]["judges"]["rb_alg"]["model"]
        assert "all-MiniLM-L6-v2" in model


def test_output_keeps_every_input_field_and_passes_format_checks(judged: tuple[tuple[int, str, str], Path]) -> None:
    _, out = judged
    source = MTRAG_FIXTURES / "generation" / "responses-10.jsonl"
    inputs = [json.loads(line) for line in source.read_text().splitlines()]
    outputs = [json.loads(line) for line in out.read_text().splitlines()]
    check_benchmark_format(inputs, outputs)
    for before, after in zip(inputs, outputs, strict=True):
        for key, value in before.items():
            assert key in after
            if isinstance(value, float) and math.isnan(value):
                assert after[key] is None  # NaN is not valid JSON; it is written as null
            else:
                assert after[key] == value
    assert out.with_name("judged.csv").exists() and out.with_name("judged.parquet").exists()


def test_rerun_resumes_without_rescoring(judged: tuple[tuple[int, str, str], Path], monkeypatch, capsys) -> None:
    _, out = judged
    journal = out.with_name("judged.judgements.jsonl")
    lines_before = journal.read_text().count("\n")
    code, _, err = run_cli(["judge", str(MTRAG_FIXTURES / "generation" / "responses-10.jsonl"), "--judges", "rb_alg",
                            "--out", str(out), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    assert journal.read_text().count("\n") == lines_before  # nothing judged again
    assert len(out.read_text().splitlines()) == 10


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--judges", "nope"], "error: unknown judge 'nope'"),
        (["--judges", "idk", "--judge-models", "nonsense-model"], "error: unknown model 'nonsense-model'"),
        (["--judges", "rb_llm"], "error: judge(s) rb_llm need an LLM"),
        (["--format", "xml"], "error: --format must be table or json"),
    ],
)
def test_usage_errors_are_one_line_with_exit_2(tmp_path: Path, args: list[str], message: str, monkeypatch,
                                               capsys) -> None:
    source = tmp_path / "p.jsonl"
    source.write_text(json.dumps({"task_id": "a::1", "input": [{"speaker": "user", "text": "q"}],
                                  "predictions": [{"text": "a"}]}) + "\n")
    code, _, err = run_cli(["judge", str(source), *args, "--out", str(tmp_path / "o.jsonl")], monkeypatch, capsys)
    assert code == 2
    assert err.startswith(message), err
    assert "Traceback" not in err and err.count("\n") == 1


def test_malformed_jsonl_names_file_and_line(tmp_path: Path, monkeypatch, capsys) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_text('{"task_id": "a::1", "input": [{"speaker": "user", "text": "q"}], "predictions": [{"text": "a"}]}\n'
                      '{"task_id": "a::2", "input": [{"speaker": "user"}], "predictions": [{"text": "a"}]}\n')
    code, _, err = run_cli(["judge", str(source), "--out", str(tmp_path / "o.jsonl")], monkeypatch, capsys)
    assert code == 2
    assert err.strip() == f"error: {source}:2: field 'input[0].text': is missing or not a string"


def test_version_and_help() -> None:
    """Through the real console script (a subprocess): the entry point and its exit code."""
    proc = ragjudge("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("ragjudge ")
    proc = ragjudge("--help")
    assert proc.returncode == 0 and "eval" in proc.stdout and "judge" in proc.stdout


def test_missing_option_is_a_usage_error_without_traceback() -> None:
    """A subprocess: click's usage errors as a shell sees them, exit code 2 and no traceback from the process."""
    proc = ragjudge("eval")
    assert proc.returncode == 2
    assert "Missing option '--bench'" in proc.stderr and "Traceback" not in proc.stderr
    proc = ragjudge("eval", "--bench", "mtrag")  # the bench's required option: checked before any data is read
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == "error: bench mtrag needs --gen MODEL ('extractive' offline, or a litellm model)"


@pytest.mark.parametrize("name, message", [
    ("nope/not-a-model", "error: --bertscore-model nope/not-a-model: not a local folder and not in the Hugging "
                         "Face cache; download it first (huggingface-cli download nope/not-a-model)"),
    ("{tmp}", "error: --bertscore-model {tmp}: the folder has no config.json (not a transformers model)"),
])
def test_a_wrong_bertscore_model_is_refused_before_any_work(name, message, tmp_path, monkeypatch, capsys) -> None:
    """Before: a KeyError (unknown name) or 46 s of hub retries (uncached name), after generation."""
    from conftest import MINI

    name, message = name.format(tmp=tmp_path), message.format(tmp=tmp_path)
    code, out, err = run_cli(["eval", "--bench", str(MINI), "--gen", "extractive", "--bertscore-model", name,
                              "--out", str(tmp_path / "run")], monkeypatch, capsys)
    assert code == 2 and out == "" and err.strip().startswith(message)
    assert not (tmp_path / "run" / "predictions.jsonl").exists()


def test_a_cached_hub_model_takes_bert_scores_layer_or_its_last(tmp_path, monkeypatch) -> None:
    """A model in the local Hugging Face cache is used offline; its layer is bert-score's tuned one when bert-score
    knows the model, else the model's last layer (read from its cached config)."""
    from ragjudge.embeddings.bertscore import resolve_model

    for repo, layers in (("roberta-large", 24), ("someone/small-encoder", 6)):
        snapshot = tmp_path / f"models--{repo.replace('/', '--')}" / "snapshots" / "abc"
        snapshot.mkdir(parents=True)
        (snapshot / "config.json").write_text(json.dumps({"num_hidden_layers": layers}))
        refs = snapshot.parent.parent / "refs"
        refs.mkdir()
        (refs / "main").write_text("abc")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    import huggingface_hub.constants as hub

    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(tmp_path))
    assert resolve_model("roberta-large").num_layers == 17  # bert-score's tuned layer for roberta-large
    assert resolve_model("someone/small-encoder").num_layers == 6
