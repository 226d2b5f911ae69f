"""RAGAS judges send their first requests before ragas is imported (ragas_prefetch): the snapshot of ragas's prompts
is what the installed ragas renders, every request sent ahead is one ragas then asks for (none added, none wasted,
the same scores), and nothing is sent ahead when the snapshot is another version's, without a cache, or when turned
off."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

import pytest  # noqa: E402
from conftest import model_close  # noqa: E402

from ragjudge.bench.mtrag.items import judged_item  # noqa: E402
from ragjudge.formats.rag_records import read_rag_records  # noqa: E402
from ragjudge.judges import JudgeContext, JudgedItem, JudgeRegistry  # noqa: E402
from ragjudge.judges import ragas_prefetch  # noqa: E402
from ragjudge.judges.ragas_judge import RagasJudge  # noqa: E402
from ragjudge.llm import LLMGateway, ResponseCache  # noqa: E402
from ragjudge.models import Passage, Prediction, Task, Turn  # noqa: E402
from ragjudge.testing import ragas_model as rm  # noqa: E402
from ragjudge.testing.openai_server import OpenAIServer  # noqa: E402

MODEL = "openai/judge-a"
JUDGES = ["faithfulness", "answer_relevancy", "context_precision", "context_recall", "context_relevance",
          "answer_correctness"]
EMBEDDING_JUDGES = {"answer_relevancy", "answer_correctness"}
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "rag-app" / "rows.csv"

ODD = 'Quotes "like this", a backslash \\, a tab\t, a newline\n, é, 😀, \u2028 and </script>'


def mtrag_item(task_id: str, turns: list[tuple[str, str]], passages: list[str], reference: str | None,
               answer: str) -> JudgedItem:
    task = Task(task_id=task_id, conversation_id=task_id.split("::")[0], turn=int(task_id.split("::")[1]),
                input=[Turn(speaker=s, text=t) for s, t in turns],
                contexts=[Passage(id=f"{task_id}-{i}", text=t) for i, t in enumerate(passages)],
                targets=[Turn(speaker="agent", text=reference)] if reference else [])
    return judged_item(task, Prediction(task_id=task_id, text=answer))


MTRAG_ITEMS = [
    mtrag_item("funds::3", [("user", "Hi, I have a question about index funds."),
                            ("agent", "Sure, what would you like to know?"), ("user", "Why are their fees low?")],
               ["Government bonds pay a fixed coupon and are repaid at maturity.",
                "Index funds are passively managed: they track a market index, which keeps their fees low."],
               "Index funds are passively managed. Their fees are low.",
               "Index funds are passively managed, so their fees are low."),
    mtrag_item("rings::2", [("user", "Tell me about the planets."), ("agent", "There are eight planets."),
                            ("user", "Which planets have rings?")],
               ["Saturn is famous for its bright rings.", "Saturn is famous for its bright rings.",  # a repeated one
                "Uranus has faint rings that were discovered in 1977."],
               "Saturn has bright rings. Uranus also has faint rings.",
               "Saturn has bright rings of ice and rock."),
    mtrag_item("everest::1", [("user", "How tall is Mount Everest?")],  # no reference: precision on the response
               ["Mount Everest is 8,849 metres tall.", "The Andes is the longest mountain range."], None,
               "Mount Everest is 8,849 metres tall."),
    mtrag_item("echo::1", [("user", "Paris is the capital of France. Is that right?")],  # contexts within the
               ["Paris is the capital of France."], "Yes, Paris is France's capital.", "Yes, it is."),  # question
    mtrag_item("odd::1", [("user", ODD)], [ODD, "Plain text."], ODD, ODD),
]


def items() -> list[JudgedItem]:
    return [record.item() for record in read_rag_records(EXAMPLE)] + MTRAG_ITEMS


def gateway(server: OpenAIServer, cache_dir: Path | None) -> LLMGateway:
    return LLMGateway(cache=ResponseCache(cache_dir) if cache_dir is not None else None, api_base=server.base_url,
                      api_key="sk-test", backoff_base=0.01)


def judge(name: str) -> RagasJudge:
    built = JudgeRegistry().build(name)
    assert isinstance(built, RagasJudge)
    return built


def run(name: str, judged: list[JudgedItem], gw: LLMGateway) -> list[Any]:
    return asyncio.run(judge(name).judge(judged, JudgeContext(gateway=gw, judge_models=[MODEL])))


def chat_prompts(server: OpenAIServer) -> list[str]:
    return [r.last_user for r in server.requests if r.messages]


def test_the_snapshot_is_what_the_installed_ragas_renders() -> None:
    """Regenerated from the installed ragas, the snapshot is unchanged (a ragas upgrade fails here until
    `python -m ragjudge.judges.ragas_prefetch --write`), and it renders each prompt as ragas does, byte for byte."""
    from ragjudge.judges import ragas_adapter as ra
    from ragjudge.judges import ragas_prompts
    from ragas.metrics._context_precision import QAC
    from ragas.metrics._context_recall import QCA
    from ragas.metrics._faithfulness import StatementGeneratorInput

    assert ragas_prefetch.snapshot_source() == ragas_prefetch.SNAPSHOT.read_text(encoding="utf-8")
    assert ragas_prompts.RAGAS_VERSION == ragas_prefetch.installed_ragas()
    for text in (ODD, "", "Who wrote Hamlet?"):
        cases = [("statement_generator", ra.StatementGeneratorPrompt, StatementGeneratorInput,
                  {"question": text, "answer": "An answer."}),
                 ("context_recall", ra.ContextRecallClassificationPrompt, QCA,
                  {"question": "Q?", "context": text, "answer": text}),
                 ("context_precision", ra.ContextPrecisionPrompt, QAC,
                  {"question": text, "context": "A context.", "answer": text}),
                 ("response_relevance", ra.ResponseRelevancePrompt, ra.ResponseRelevanceInput, {"response": text})]
        for name, prompt, model, data in cases:
            assert ragas_prefetch.render(name, **data) == prompt().to_string(model(**data)), name
        metric = ra.ContextRelevance()
        for index, fixed in enumerate((metric.template_relevance1, metric.template_relevance2)):
            assert ragas_prefetch.template("context_relevance", index, query=text, context=ODD) == \
                fixed.format(query=text, context=ODD)


def test_a_traced_prompt_asks_in_ragas_s_words_and_builds_the_schema_once_per_output_model() -> None:
    """ragjudge's traced prompts keep ragas's output-format text (the JSON schema of the output model) once made:
    the same text, not rebuilt for every request."""
    from ragjudge.judges import ragas_adapter as ra
    from ragjudge.judges.ragas_llm import RagasTrace, traced

    for prompt in (ra.StatementGeneratorPrompt, ra.NLIStatementPrompt, ra.ContextRecallClassificationPrompt,
                   ra.ContextPrecisionPrompt, ra.ResponseRelevancePrompt, ra.CorrectnessClassifier):
        first = traced(prompt, "a", RagasTrace(), 1)._generate_output_signature()
        assert first == prompt()._generate_output_signature(), prompt.__name__
        assert traced(prompt, "b", RagasTrace(), 0)._generate_output_signature() is first


@pytest.mark.parametrize("name", JUDGES)
def test_every_request_sent_ahead_is_one_ragas_asks_for(name: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """On examples/rag-app/rows.csv and MTRAG-shaped items (conversations, a repeated context, no reference, contexts
    the question holds, odd characters): with prefetching the server gets exactly the requests it gets without (none
    added, none wasted: a request sent ahead that ragas did not ask for would be one more), and the scores are the
    same."""
    judged = items()
    sent_ahead = [p for it in judged if judge(name).skip_reason(it) is None for p in judge(name).first_prompts(it)]
    assert sent_ahead, "the judge sends nothing ahead on these items"
    with OpenAIServer(rm.ragas_model()) as server:
        ahead = run(name, judged, gateway(server, tmp_path / "ahead"))
        ahead_prompts = chat_prompts(server)
    monkeypatch.setenv("RAGJUDGE_RAGAS_PREFETCH", "0")
    with OpenAIServer(rm.ragas_model()) as server:
        plain = run(name, judged, gateway(server, tmp_path / "plain"))
        plain_prompts = chat_prompts(server)

    assert sorted(ahead_prompts) == sorted(plain_prompts)
    assert set(sent_ahead) <= set(plain_prompts)  # each is a prompt ragas itself sends
    for with_, without in zip(ahead, plain, strict=True):
        assert (with_.error, with_.details.get("skipped")) == (without.error, without.details.get("skipped"))
        if name in EMBEDDING_JUDGES and with_.value is not None:
            assert model_close(with_.value, without.value)
        else:
            assert with_.value == without.value
        assert with_.details.get("cached") == without.details.get("cached")  # taken, not counted as cache hits
    assert sum(r.value is not None for r in ahead) >= 3


# An item whose first requests ragas sends one after another: context precision's verdict per context (three, one
# repeated: two requests), answer correctness's statements of the response and of the reference, context
# relevance's two ratings. Sent ahead, they are on the server together (its own count, whatever the machine's speed).
TOGETHER = [("context_precision", 2), ("answer_correctness", 2), ("context_relevance", 2)]


def _peak(name: str, cache_dir: Path | None) -> int:
    with OpenAIServer(rm.ragas_model(), latency=0.3) as server:
        [result] = run(name, [MTRAG_ITEMS[1]], gateway(server, cache_dir))
        assert result.value is not None, result.error
        return server.peak_in_flight


@pytest.mark.parametrize(("name", "together"), TOGETHER)
def test_first_requests_are_sent_ahead_together(name: str, together: int, tmp_path: Path) -> None:
    assert _peak(name, tmp_path) == together


@pytest.mark.parametrize(("name", "together"), TOGETHER[:1])
def test_nothing_is_sent_ahead_without_a_cache(name: str, together: int) -> None:
    assert _peak(name, None) == 1


@pytest.mark.parametrize(("name", "together"), TOGETHER[:1])
def test_nothing_is_sent_ahead_when_turned_off(name: str, together: int, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGJUDGE_RAGAS_PREFETCH", "0")
    assert _peak(name, tmp_path) == 1


def test_nothing_is_sent_ahead_for_another_ragas_version(tmp_path: Path) -> None:
    """A snapshot stamped with another version than the installed ragas's is not used: its prompts may differ."""
    with OpenAIServer(rm.ragas_model()) as server:
        gw = gateway(server, tmp_path)
        assert ragas_prefetch.enabled(gw)
        assert not ragas_prefetch.enabled(gw, stamped="0.4.2")
        assert not ragas_prefetch.enabled(gw, stamped=None)
        assert not ragas_prefetch.enabled(gateway(server, None))


def test_render_names_a_wrong_field() -> None:
    with pytest.raises(ValueError, match="statement_generator takes"):
        ragas_prefetch.render("statement_generator", question="Q?")


def test_the_snapshot_is_written_on_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert ragas_prefetch.main([]) == 2
    assert "--write" in capsys.readouterr().err
