"""Sentence retrieval query strategies: the paper's turn mixture (Eq. 2), the others, and proof that the
`target` turn never reaches a query (nor the LLM that rewrites)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import REPO, run_cli

from ragjudge.bench.sentence_retrieval.data import Dialogue
from ragjudge.bench.sentence_retrieval.queries import (
    QueryConfig,
    as_task,
    build_parts,
    turn_mixture_weights,
)
from ragjudge.testing.openai_server import OpenAIServer, Request

MINI = REPO / "examples" / "sentret-mini"
TOKEN = "zqxplantedzqx"


def _dialogue(bodies: list[str], title: str = "Why is the sky blue", subreddit: str = "askscience") -> Dialogue:
    return Dialogue.model_validate({
        "id": "t5_x.y.0.3", "subreddit": subreddit, "title": title,
        "context": [{"author_id": "a" if i % 2 == 0 else "b", "body": b} for i, b in enumerate(bodies)],
        "candidates": [{"id": "s1", "body": "Rayleigh scattering.", "label": 1}]})


def test_turn_mixture_weights_for_a_three_turn_history_follow_eq_2() -> None:
    beta, delta = 0.3, 0.01
    # n = 3 turns t1, t2, t3; T = n - 1 = 2, I = {1, 2}: alpha_i = delta e^{-delta|T-i|} / sum_j delta e^{-delta|T-j|}
    denom = delta * math.exp(-delta * abs(2 - 1)) + delta * math.exp(-delta * abs(2 - 2))
    alpha1 = delta * math.exp(-delta * 1) / denom
    alpha2 = delta * math.exp(0) / denom
    assert turn_mixture_weights(3, beta, delta) == pytest.approx([beta * alpha1, beta * alpha2, 1 - beta])
    assert sum(turn_mixture_weights(5, 0.4, 0.5)) == pytest.approx(1.0)
    w = turn_mixture_weights(5, 0.4, 0.5)
    assert w[0] < w[1] < w[2] < w[3]  # older turns weigh less
    assert turn_mixture_weights(4, 0.3, 0.0)[:3] == pytest.approx([0.1, 0.1, 0.1])  # delta 0: uniform
    assert turn_mixture_weights(1, 0.3, 0.01) == [1.0]


def test_strategies_build_the_documented_queries() -> None:
    d = _dialogue(["", "It scatters light.", "But why blue and not violet?"])
    assert build_parts(d, QueryConfig(strategy="last_turn")) == [(1.0, "But why blue and not violet?")]
    assert build_parts(d, QueryConfig(strategy="title_last_turn")) == \
        [(1.0, "Why is the sky blue\nBut why blue and not violet?")]
    assert build_parts(d, QueryConfig(strategy="all_turns")) == \
        [(1.0, "askscience\nWhy is the sky blue\nIt scatters light.\nBut why blue and not violet?")]
    mixture = build_parts(d, QueryConfig(strategy="turn_mixture", beta=0.3, delta=0.01))
    # the empty first turn still carries the subreddit and the title (Section 3.1)
    assert [t for _, t in mixture] == ["askscience\nWhy is the sky blue", "It scatters light.",
                                       "But why blue and not violet?"]
    assert [w for w, _ in mixture] == pytest.approx(turn_mixture_weights(3, 0.3, 0.01))
    empty = _dialogue(["", "x y", "last"], title="", subreddit="")
    assert [t for _, t in build_parts(empty, QueryConfig(strategy="turn_mixture"))] == ["x y", "last"]
    task = as_task(d)
    assert [t.speaker for t in task.input] == ["user", "agent", "user"] and task.question.startswith("But why")


def _planted(folder: Path, where: str) -> Path:
    folder.mkdir(parents=True)
    for name in ("dialogues.json", "wikipedia_grounded_dialogues.json", "val_test_splits.json"):
        text = (MINI / name).read_text()
        if name != "val_test_splits.json":
            records = json.loads(text)
            for r in records:
                if where == "target":
                    r["target"]["body"] += f" {TOKEN}"
                else:
                    r["context"][-1]["body"] += f" {TOKEN}"
            text = json.dumps(records)
        (folder / name).write_text(text)
    return folder


STRATEGIES = "bm25_rerank,lm_all_turns,bm25_mixture,bm25_title_last_turn,bm25_rewrite"


@pytest.mark.parametrize("where", ["target", "last_turn"])
def test_a_token_only_in_the_target_never_reaches_a_query(tmp_path: Path, monkeypatch, capsys, where: str) -> None:
    data = _planted(tmp_path / "data", where)
    assert TOKEN in (data / "dialogues.json").read_text()
    seen: list[Request] = []

    def respond(request: Request) -> str:  # echo the prompt into the rewrite: whatever it sees, the query gets
        seen.append(request)
        return json.dumps({"class": "non-standalone", "question": request.last_user[-300:]})

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "run"
    with OpenAIServer(respond) as server:
        code, _, err = run_cli(["eval", "--bench", "sentence-retrieval", "--data", str(data), "--pipeline", STRATEGIES,
                                "--rewrite-model", "openai/rewriter", "--api-base", server.base_url,
                                "-T", "permutations=50", "--out", str(out)], monkeypatch, capsys)
    assert code == 0, err
    assert len(seen) == 12
    prompts = "\n".join(r.prompt for r in seen)
    queries = (out / "predictions.jsonl").read_text()
    strategies = {"last_turn", "all_turns", "turn_mixture(beta=0.3,delta=0.01)", "title_last_turn",
                  "rewrite(openai/rewriter)"}
    assert strategies <= set(json.loads(queries.splitlines()[0])["value"]["queries"])
    if where == "target":
        assert TOKEN not in prompts and TOKEN not in queries and TOKEN not in (out / "samples.jsonl").read_text()
    else:  # the control: the same token in the last turn reaches every strategy and the rewriting LLM
        assert TOKEN in prompts
        for line in queries.splitlines():
            built = json.loads(line)["value"]["queries"]
            assert all(any(TOKEN in text for _, text in built[s]) for s in strategies)
