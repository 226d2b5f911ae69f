"""Judges as declarative specs: a user's spec folder adds or overrides judges; bad specs are one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from ragjudge.errors import InputError, UsageError
from ragjudge.judges import JudgeRegistry
from ragjudge.judges.parsing import parse_output
from ragjudge.judges.spec import ParseSpec
from ragjudge.testing.openai_server import OpenAIServer, Request

CONCISE = """\
name: concise
description: Is the answer short and to the point? 1-5.
metric: concise
kind: llm
prompt:
  user: |
    Question: {{ question }}
    Answer: {{ response }}
    Rate conciseness 1-5 as "Score: N".
parse:
  kind: rating
  pattern: 'Score:\\s*(\\d+)'
  scale_min: 1
  scale_max: 5
"""


def test_a_new_judge_is_just_a_spec_file(tmp_path: Path, monkeypatch, capsys) -> None:
    specs = tmp_path / "my_judges"
    specs.mkdir()
    (specs / "concise.yaml").write_text(CONCISE)
    source = tmp_path / "p.jsonl"
    source.write_text(json.dumps({"task_id": "a::1", "input": [{"speaker": "user", "text": "Why is the sky blue?"}],
                                  "predictions": [{"text": "Rayleigh scattering."}]}) + "\n")
    prompts: list[str] = []

    def respond(request: Request) -> str:
        prompts.append(request.last_user)
        return "Short and clear. Score: 4"

    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    with OpenAIServer(respond) as server:
        code, out, err = run_cli(["judge", str(source), "--judges", "concise", "--judge-dir", str(specs),
                                  "--judge-models", "openai/j", "--api-base", server.base_url, "--out",
                                  str(tmp_path / "o.jsonl"), "--format", "json"], monkeypatch, capsys)
    assert code == 0, err
    assert json.loads(out)["metrics"]["concise"]["value"] == pytest.approx(0.8)
    assert prompts == ["Question: Why is the sky blue?\nAnswer: Rayleigh scattering.\nRate conciseness 1-5 as \"Score: N\".\n"]


def test_user_specs_override_built_in_ones(tmp_path: Path) -> None:
    (tmp_path / "idk.yaml").write_text(CONCISE.replace("name: concise", "name: idk"))
    registry = JudgeRegistry([tmp_path])
    assert registry.spec("idk").metric == "concise" and "rb_alg" in registry.names


@pytest.mark.parametrize(
    ("text", "message"),
    [("name: [unclosed\n", "invalid YAML"),
     ("- a list\n", "a judge spec must be a YAML mapping"),
     (CONCISE.replace("  kind: rating", "  kind: vibes"), "field 'parse.kind'"),
     (CONCISE.replace("  pattern: 'Score:\\s*(\\d+)'", "  pattern: 'Score: \\d+'"), "pattern needs one capturing group")],
)
def test_bad_specs_name_the_file(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "concise.yaml").write_text(text)
    with pytest.raises(InputError) as err:
        JudgeRegistry([tmp_path])
    assert str(err.value).startswith(str(tmp_path / "concise.yaml")) and message in str(err.value)


def test_missing_spec_folder_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        JudgeRegistry([tmp_path / "nope"])


@pytest.mark.parametrize(
    ("text", "value", "error"),
    [("Rating: [[7]]", 0.7, None), ("first [[2]] then Rating: [[9]]", 0.9, None), ("Rating: [[7.5]]", 0.75, None),
     ("Rating: [[11]]", None, "outside the scale"), ("no rating here", None, "unparsable"),
     ("Rating: [[0]]", None, "outside the scale")],
)
def test_rating_parser(text: str, value: float | None, error: str | None) -> None:
    spec = JudgeRegistry().spec("rb_llm").parse
    assert spec is not None
    parsed = parse_output(text, spec)
    assert parsed.value == (pytest.approx(value) if value is not None else None)
    assert (error is None and parsed.error is None) or (error is not None and error in (parsed.error or ""))


@pytest.mark.parametrize(("text", "label"), [("yes", "yes"), ("  No.", "no"), ("Partial", "partial"),
                                             ("partial\nbecause...", "partial"), ("I think yes", None)])
def test_idk_parser_reads_the_first_word(text: str, label: str | None) -> None:
    spec: ParseSpec = JudgeRegistry().spec("idk").parse  # type: ignore[assignment]
    assert parse_output(text, spec).label == label


@pytest.mark.parametrize("judge, bench", [("cxm_intent_match", "cxm"), ("dialsim_judge", "dialsim")])
def test_another_benchs_judge_is_refused_before_any_work(judge: str, bench: str, tmp_path: Path, monkeypatch,
                                                         capsys) -> None:
    """Issue 21: `eval --bench mtrag --judges cxm_intent_match` ran all 40 samples as errors (exit 1), and the
    unknown-judge list offered CXM and DialSim judges for mtrag."""
    from conftest import MINI

    out = tmp_path / "run"
    code, stdout, err = run_cli(["eval", "--bench", str(MINI), "--gen", "extractive", "--judges", judge, "--out",
                                 str(out)], monkeypatch, capsys)
    assert code == 2 and stdout == "" and not out.exists(), err
    assert err == (f"error: judge {judge!r} scores bench {bench}'s items, not answers to MTRAG-shaped tasks "
                   "(available: answer_correctness, answer_correctness_llm, answer_relevancy, context_precision, "
                   "context_recall, context_relevance, faithfulness, idk, idk_lexical, rb_alg, rb_llm, rl_f, "
                   "underspecified, underspecified_lexical)\n")
    code, _, err = run_cli(["eval", "--bench", str(MINI), "--gen", "extractive", "--judges", "nope", "--out",
                            str(out)], monkeypatch, capsys)
    assert code == 2 and "cxm" not in err and "dialsim" not in err, err
