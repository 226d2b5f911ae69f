"""The standard RAG judges (faithfulness, answer_relevancy, context_precision, context_recall, context_relevance,
answer_correctness[_llm]) equal `ragas.evaluate` on the same samples with the same model answers.

Both sides talk to a local OpenAI-compatible server that plays the judge model (`ragjudge.testing.ragas_model`:
deterministic answers to RAGAS's own prompts): ragjudge through its judges (ragas's metric classes -> the gateway
adapter -> LLMGateway -> litellm), ragas through `ragas.evaluate` with LangChain's ChatOpenAI pointed at its own
server. Embeddings are the bundled all-MiniLM-L6-v2 wrapped for ragas the same way on both sides (ragjudge's encoder
behind `EncoderRagasEmbeddings`; ragas computes the cosines itself); scores derived from them are compared with
`model_close` (tests/README.md). Everything else is exact: the scores of LLM-only metrics, and the set of prompts each
side sent.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

import pytest  # noqa: E402
from conftest import model_close  # noqa: E402

from ragjudge.bench.mtrag.items import judged_item  # noqa: E402
from ragjudge.judges import JudgeContext, JudgedItem, JudgeRegistry  # noqa: E402
from ragjudge.llm import LLMGateway, ResponseCache  # noqa: E402
from ragjudge.formats.samples import Score  # noqa: E402
from ragjudge.models import Passage, Prediction, Task, Turn  # noqa: E402
from ragjudge.testing import ragas_model as rm  # noqa: E402
from ragjudge.testing.openai_server import OpenAIServer, Reply, Request, embed_text  # noqa: E402

MODEL = "openai/judge-a"
JUDGES = ["faithfulness", "answer_relevancy", "context_precision", "context_recall", "context_relevance",
          "answer_correctness", "answer_correctness_llm"]
EMBEDDING_JUDGES = {"answer_relevancy", "answer_correctness"}


def P(pid: str, text: str) -> Passage:  # noqa: N802
    return Passage(id=pid, text=text)


EIFFEL = P("e1", "The Eiffel Tower is in Paris. The Eiffel Tower was completed in 1889 for the World's Fair.")
BANANA = P("b1", "Bananas are rich in potassium and grow in tropical climates.")
PARIS = P("p1", "Paris is the capital of France and its largest city.")
INDEX = P("i1", "Index funds are passively managed: they track a market index instead of paying analysts to pick "
                "stocks, which keeps their fees low.")
BONDS = P("d1", "Government bonds pay a fixed coupon and are repaid at maturity.")
SATURN = P("s1", "Saturn is famous for its bright, visible rings made of ice and rock.")
JUPITER = P("j1", "Jupiter's Great Red Spot is a storm larger than Earth.")
URANUS = P("u1", "Uranus has faint rings that were discovered in 1977.")
ANDES = P("a1", "The Andes is the longest continental mountain range in the world.")
EVEREST = P("v1", "Mount Everest is 8,849 metres tall and lies in the Himalayas on the border of Nepal and China.")
MERCURY = P("m1", "Mercury is the smallest planet in the Solar System and the closest to the Sun.")

# (task id, conversation, passages, reference or None, response)
CASES: list[tuple[str, list[tuple[str, str]], list[Passage], str | None, str]] = [
    ("eiffel::1", [("user", "When was the Eiffel Tower completed?")], [EIFFEL, BANANA, PARIS],
     "The Eiffel Tower was completed in 1889. It was built for the World's Fair in Paris.",
     "The Eiffel Tower was completed in 1889. It is painted bright blue every year."),
    ("funds::3", [("user", "Hi, I have a question about index funds."), ("agent", "Sure, what would you like to know?"),
                  ("user", "Why are their fees low?")], [BONDS, INDEX],
     "Index funds are passively managed. They do not pay analysts to pick stocks, so their fees are low. "
     "The first one for retail investors was started by Vanguard in 1976.",
     "Index funds are passively managed, so their fees are low. They track a market index such as the S&P 500."),
    ("rings::2", [("user", "Tell me about the planets."), ("agent", "There are eight planets in the Solar System."),
                  ("user", "Which planets have rings?")], [SATURN, JUPITER, URANUS],
     "Saturn has bright visible rings. Uranus also has faint rings.",
     "Saturn has bright visible rings of ice and rock. Jupiter has the Great Red Spot."),
    ("mercury::1", [("user", "What is the boiling point of mercury?")], [MERCURY, BANANA],
     "Mercury boils at 356.7 degrees Celsius.",
     "I don't know the boiling point of mercury from these documents."),
    ("everest::1", [("user", "How tall is Mount Everest?")], [ANDES, EVEREST], None,
     "Mount Everest is 8,849 metres tall. It lies in the Himalayas."),
    ("paris::1", [("user", "What is the capital of France?")], [PARIS, EIFFEL], None,
     "Paris is the capital of France. It is the largest city in France."),
]


def item(case: tuple, *, response: str | None = None, passages: list[Passage] | None = None,
         reference: str | None = "keep") -> JudgedItem:
    task_id, turns, case_passages, case_reference, case_response = case
    ref = case_reference if reference == "keep" else reference
    task = Task(task_id=task_id, conversation_id=task_id.split("::")[0], turn=int(task_id.split("::")[1]),
                input=[Turn(speaker=s, text=t) for s, t in turns],
                contexts=case_passages if passages is None else passages,
                targets=[Turn(speaker="agent", text=ref)] if ref else [])
    return judged_item(task, Prediction(task_id=task_id, text=case_response if response is None else response))


ITEMS = [item(c) for c in CASES]


def ragas_sample(judge_item: JudgedItem) -> Any:
    """The sample a RAGAS user writes for this item: the question (a conversation as "speaker: text" lines, as
    MTRAG's script does), the answer, the passages' texts, the reference."""
    from ragas.dataset_schema import SingleTurnSample

    turns = judge_item.messages
    question = turns[0].text if len(turns) == 1 else "\n".join(f"{t.speaker}: {t.text}" for t in turns)
    return SingleTurnSample(user_input=question, response=judge_item.answer,
                            retrieved_contexts=[p.text for p in judge_item.contexts],
                            reference=judge_item.reference)


def gateway(server: OpenAIServer, cache_dir: Path) -> LLMGateway:
    return LLMGateway(cache=ResponseCache(cache_dir), api_base=server.base_url, api_key="sk-test", backoff_base=0.01)


async def run_judges(names: list[str], items: list[JudgedItem], gw: LLMGateway, *, retry_errors: bool = False,
                     **registry_options: Any) -> dict[str, list[Score]]:
    registry = JudgeRegistry()
    ctx = JudgeContext(gateway=gw, judge_models=[MODEL], retry_errors=retry_errors)
    return {name: await registry.build(name, registry_options).judge(items, ctx) for name in names}


def run_ragas_evaluate(base_url: str, embeddings: Any) -> dict[str, list[float | None]]:
    """`ragas.evaluate` on the same items: each metric on the samples that have what it needs; None elsewhere."""
    import httpx
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, evaluate
    from ragas.metrics._answer_correctness import AnswerCorrectness
    from ragas.metrics._answer_relevance import ResponseRelevancy
    from ragas.metrics._context_precision import (
        LLMContextPrecisionWithoutReference,
        LLMContextPrecisionWithReference,
    )
    from ragas.metrics._context_recall import LLMContextRecall
    from ragas.metrics._faithfulness import Faithfulness
    from ragas.metrics._nv_metrics import ContextRelevance

    with_ref = [i for i, it in enumerate(ITEMS) if it.reference]
    without_ref = [i for i, it in enumerate(ITEMS) if not it.reference]
    plan = [  # (our judge name, ragas metric, rows)
        ("faithfulness", Faithfulness(), range(len(ITEMS))),
        ("answer_relevancy", ResponseRelevancy(), range(len(ITEMS))),
        ("context_relevance", ContextRelevance(), range(len(ITEMS))),
        ("context_precision", LLMContextPrecisionWithReference(), with_ref),
        ("context_precision", LLMContextPrecisionWithoutReference(), without_ref),
        ("context_recall", LLMContextRecall(), with_ref),
        ("answer_correctness", AnswerCorrectness(), with_ref),
        ("answer_correctness_llm", AnswerCorrectness(name="answer_correctness_llm", weights=[1.0, 0.0]), with_ref),
    ]
    scores: dict[str, list[float | None]] = {name: [None] * len(ITEMS) for name in JUDGES}
    for name, metric, rows in plan:
        dataset = EvaluationDataset(samples=[ragas_sample(ITEMS[i]) for i in rows])
        # a connection pool per evaluate(): each runs its own event loop, and pooled connections die with it (the
        # SDK would retry them: the same answers, more requests; langchain-openai shares one pool per base_url)
        llm = ChatOpenAI(model="judge-a", base_url=base_url, api_key="sk-test", temperature=0,
                         http_async_client=httpx.AsyncClient())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = evaluate(dataset, metrics=[metric], llm=llm, embeddings=embeddings, show_progress=False,
                             raise_exceptions=True).to_pandas()
        for row, value in zip(rows, frame[metric.name], strict=True):
            scores[name][row] = float(value)
    return scores


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Every judge on every item, and ragas.evaluate on the same samples, each against its own server."""
    from ragjudge.judges.ragas_embeddings import EncoderRagasEmbeddings
    from ragjudge.retrieval.encoders import SentenceTransformerEncoder

    embeddings = EncoderRagasEmbeddings(SentenceTransformerEncoder("minilm"))  # ragas's side: the same wrapper
    with OpenAIServer(rm.ragas_model()) as ours_server, OpenAIServer(rm.ragas_model()) as ragas_server:
        ours = asyncio.run(run_judges(JUDGES, ITEMS, gateway(ours_server, tmp_path_factory.mktemp("cache"))))
        theirs = run_ragas_evaluate(ragas_server.base_url, embeddings)
        yield {"ours": ours, "ragas": theirs, "ours_requests": list(ours_server.requests),
               "ragas_requests": list(ragas_server.requests)}


@pytest.mark.parametrize("name", JUDGES)
def test_scores_equal_ragas_evaluate(both: dict[str, Any], name: str) -> None:
    ours: list[Score] = both["ours"][name]
    theirs: list[float | None] = both["ragas"][name]
    for result, expected, judge_item in zip(ours, theirs, ITEMS, strict=True):
        if expected is None:  # ragas.evaluate cannot run this metric on the item: ours says not applicable
            assert result.value is None and result.error is None and result.details["skipped"], result
            continue
        assert result.error is None, (judge_item.id, result.error)
        assert result.value is not None
        if name in EMBEDDING_JUDGES:
            assert model_close(result.value, expected), (judge_item.id, result.value, expected)
        else:
            assert result.value == expected, (judge_item.id, result.value, expected)
    values = [r.value for r in ours if r.value is not None]
    assert len(set(values)) >= 3, f"{name}: the samples should not score alike"


def test_the_same_prompts_reach_the_model(both: dict[str, Any]) -> None:
    """Byte for byte the prompts ragas.evaluate sends; ours at temperature 0, each distinct prompt asked once
    (faithfulness and answer correctness share the response's statement extraction through the cache)."""
    ours = [r for r in both["ours_requests"] if r.path.endswith("/chat/completions")]
    theirs = [r for r in both["ragas_requests"] if r.path.endswith("/chat/completions")]
    assert all(r.headers.get("x-stainless-retry-count") == "0" for r in theirs)  # no SDK retry inflates theirs
    assert {r.last_user for r in ours} == {r.last_user for r in theirs}
    assert len(ours) == len({r.last_user for r in ours}) < len(theirs)
    assert all(r.body.get("temperature") == 0 and "n" not in r.body for r in ours)
    assert all([m["role"] for m in r.messages] == ["user"] for r in ours)
    # ragas asks ResponseRelevancy for 3 questions at temperature 0.3; we ask for one at 0 (docs/judges.md)
    relevancy = [r for r in theirs if rm.QUESTION in r.last_user]
    assert relevancy and all(r.body.get("n") == 3 and r.body.get("temperature") == 0.3 for r in relevancy)


def test_results_explain_the_value(both: dict[str, Any]) -> None:
    ours = both["ours"]
    eiffel, funds, rings, mercury, everest, paris = range(6)
    faith = ours["faithfulness"][eiffel]
    assert (faith.value, faith.details["statements"], faith.details["supported"]) == (0.5, 2, 1)
    assert "[0] It is painted bright blue every year. — the context does not say this" in (faith.rationale or "")

    noncommittal = ours["answer_relevancy"][mercury]
    assert noncommittal.value == 0.0 and noncommittal.details["noncommittal"] is True
    assert "noncommittal: RAGAS scores it 0" in (noncommittal.rationale or "")
    relevant = ours["answer_relevancy"][paris]
    assert relevant.details["generated_questions"] == 1 and relevant.details["similarity"] == relevant.value
    assert relevant.details["embeddings"] == "sentence-transformers/all-MiniLM-L6-v2 (bundled)"

    precision = ours["context_precision"]
    assert {k: precision[rings].details[k] for k in ("variant", "contexts", "useful", "verdicts")} == {
        "variant": "with reference", "contexts": 3, "useful": 2, "verdicts": [1, 0, 1]}
    assert math.isclose(precision[rings].value or 0, (1 + 2 / 3) / 2, rel_tol=1e-9)  # rank-weighted AP
    assert precision[everest].details["variant"] == "without reference"
    assert precision[everest].details["verdicts"] == [0, 1] and precision[everest].value == pytest.approx(0.5)
    assert precision[eiffel].details["llm_calls"] == 3  # one call per context

    recall = ours["context_recall"][funds]
    assert (recall.details["statements"], recall.details["attributed"]) == (3, 2) and recall.value == 2 / 3

    relevance = ours["context_relevance"]
    assert all(len(r.details["ratings"]) == 2 for r in relevance)
    assert {tuple(r.details["ratings"]) for r in relevance} >= {(2, 2)}
    assert any(r.details["ratings"][0] != r.details["ratings"][1] for r in relevance)  # the mean is exercised

    correct = ours["answer_correctness"][eiffel]
    assert (correct.details["TP"], correct.details["FP"], correct.details["FN"]) == (1, 1, 1)
    assert correct.details["factuality"] == 0.5 and correct.details["weights"] == [0.75, 0.25]
    assert model_close(correct.value or 0, 0.75 * 0.5 + 0.25 * correct.details["similarity"])
    llm_only = ours["answer_correctness_llm"][eiffel]
    assert llm_only.value == 0.5 and "similarity" not in llm_only.details and llm_only.details["weights"] == [1, 0]
    assert "[FN] It was built for the World's Fair in Paris. — the answer misses it" in (llm_only.rationale or "")

    for name in JUDGES:
        for result in ours[name]:
            if result.value is not None:
                assert result.model == MODEL and result.prompt_tokens and result.completion_tokens, (name, result)
                assert result.raw and result.label == f"{result.value:.4f}"


def test_a_conversation_is_judged_with_its_turns(both: dict[str, Any]) -> None:
    conversation = "user: Hi, I have a question about index funds.\nagent: Sure, what would you like to know?\n" \
                   "user: Why are their fees low?"
    statements = [r for r in both["ours_requests"] if rm.STATEMENTS in r.last_user]
    assert any(rm.prompt_input(r)["question"] == conversation for r in statements)
    precision = [r for r in both["ours_requests"] if rm.PRECISION in r.last_user]
    assert any(rm.prompt_input(r)["question"] == conversation for r in precision)


@pytest.mark.parametrize(("name", "mark", "error_start", "calls", "ahead"), [
    ("answer_relevancy", rm.QUESTION, "question: ragas could not use the judge's output", 1, 0),
    ("context_precision", rm.PRECISION, "verdicts: ragas could not use the judge's output", 1, 2),
    ("context_recall", rm.RECALL, "classifications: ragas could not use the judge's output", 1, 0),
    ("answer_correctness", rm.CORRECTNESS, "classification: ragas could not use the judge's output", 3, 0),
    ("context_relevance", rm.RELEVANCE_1, "ratings: ragas found no rating (0, 1 or 2) in the judge's answer", 2, 0),
])
async def test_an_unparsable_answer_is_an_error_with_its_raw_text(name: str, mark: str, error_start: str, calls: int,
                                                                   ahead: int, tmp_path: Path) -> None:
    """Not a number, no hidden repair call; the answer was paid for, so a rerun re-reads it (0 requests) and only
    `retry_errors` asks again (and pays only for that). `ahead`: requests sent ahead that ragas, stopped by the
    error, never read (context precision's verdicts on the item's other two contexts: ragas_prefetch)."""
    bad = "I would rather not answer in JSON. Maybe."
    with OpenAIServer(rm.ragas_model([(re.escape(mark) + ".*Eiffel", bad)])) as server:
        [result] = (await run_judges([name], [ITEMS[0]], gateway(server, tmp_path)))[name]
        assert result.value is None and result.error and result.error.startswith(error_start), result.error
        assert result.raw == bad
        assert result.details == {"cached": False, "llm_calls": calls}
        assert not any("The output string did not satisfy the constraints" in r.last_user for r in server.requests)
        sent = server.chat_count()
        assert sent == calls + ahead

        [again] = (await run_judges([name], [ITEMS[0]], gateway(server, tmp_path)))[name]
        assert again.error == result.error and again.raw == bad
        assert server.chat_count() == sent  # re-read from the cache: nothing sent

        [asked] = (await run_judges([name], [ITEMS[0]], gateway(server, tmp_path), retry_errors=True))[name]
        assert asked.error == result.error and asked.details["asked_again"] is True
        assert server.chat_count() == sent + 1  # only the unparsable answer is asked again; the rest is cached


async def test_a_rerun_pays_nothing(tmp_path: Path) -> None:
    with OpenAIServer(rm.ragas_model()) as server:
        first = await run_judges(JUDGES, ITEMS, gateway(server, tmp_path))
        sent = len(server.requests)
        second = await run_judges(JUDGES, ITEMS, gateway(server, tmp_path))
        assert len(server.requests) == sent
    for name in JUDGES:
        assert [r.value for r in first[name]] == [r.value for r in second[name]]
        assert all(r.details["cached"] for r in second[name] if r.details.get("llm_calls"))
        assert [(r.prompt_tokens, r.completion_tokens) for r in first[name]] == \
            [(r.prompt_tokens, r.completion_tokens) for r in second[name]]


async def test_what_an_item_lacks_is_not_applicable_never_a_zero(tmp_path: Path) -> None:
    base = CASES[0]
    items = [item(base, passages=[]), item(base, reference=None), item(base, response="  "),
             item(CASES[4], response="")]  # no reference and no response: nothing to check the contexts against
    with OpenAIServer(rm.ragas_model()) as server:
        results = await run_judges(JUDGES, items, gateway(server, tmp_path))
    skipped = {name: [r.details.get("skipped") for r in rs] for name, rs in results.items()}
    assert skipped == {
        "faithfulness": ["no passages", None, "empty response", "empty response"],
        "answer_relevancy": [None, None, "empty response", "empty response"],
        "context_precision": ["no passages", None, None, "no reference answer and an empty response"],
        "context_recall": ["no passages", "no reference answer", None, "no reference answer"],
        "context_relevance": ["no passages", None, None, None],
        "answer_correctness": [None, "no reference answer", "empty response", "no reference answer"],
        "answer_correctness_llm": [None, "no reference answer", "empty response", "no reference answer"],
    }
    for name, rs in results.items():
        for r in rs:
            assert (r.value is None) == (r.details.get("skipped") is not None) and r.error is None, (name, r)
    assert results["context_precision"][1].details["variant"] == "without reference"


async def test_failed_calls_are_errors_and_nothing_is_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                              ) -> None:
    """ragas's ContextRelevance catches every exception, prints it and returns NaN: ours reports the failure."""
    failing = Reply(status=400, content="bad request")
    rules = [(re.escape(m) + ".*Eiffel", failing) for m in (rm.RELEVANCE_2, rm.QUESTION, rm.STATEMENTS)]
    with OpenAIServer(rm.ragas_model(rules)) as server:
        results = await run_judges(["context_relevance", "answer_relevancy", "answer_correctness"], ITEMS[:2],
                                   gateway(server, tmp_path))
    for name, [eiffel, funds] in results.items():
        assert eiffel.value is None and eiffel.error and "HTTP 400" in eiffel.error, (name, eiffel)
        assert funds.error is None and funds.value is not None, (name, funds)
    assert results["context_relevance"][0].error.startswith("ratings: ")  # type: ignore[union-attr]
    assert results["context_relevance"][0].details["llm_calls"] == 1  # the first prompt's answer, then the failure
    assert capsys.readouterr().out == ""


async def test_nan_from_ragas_is_an_error(tmp_path: Path) -> None:
    rules = [(re.escape(rm.QUESTION) + ".*Eiffel", json.dumps({"question": "", "noncommittal": 0})),
             (re.escape(rm.RECALL) + ".*Eiffel", json.dumps({"classifications": []}))]
    with OpenAIServer(rm.ragas_model(rules)) as server:
        results = await run_judges(["answer_relevancy", "context_recall"], ITEMS[:1], gateway(server, tmp_path))
    assert results["answer_relevancy"][0].error == "ragas returned NaN: the judge generated no question from the answer"
    assert results["context_recall"][0].error == \
        "ragas returned NaN: the judge classified no sentence of the reference"
    assert results["context_recall"][0].raw == '{"classifications": []}'


async def test_embeddings_through_litellm(tmp_path: Path) -> None:
    """`encoder: litellm`: the embeddings model is called through the run's gateway (cached, counted); the score is
    ragas's cosine of the vectors the provider returned."""
    with OpenAIServer(rm.ragas_model()) as server:
        gw = gateway(server, tmp_path)
        options = {"encoder": "litellm", "embedding_model": "openai/embed-a"}
        [result] = (await run_judges(["answer_relevancy"], ITEMS[-1:], gw, **options))["answer_relevancy"]
        embedded = [r for r in server.requests if r.path.endswith("/embeddings")]
        assert result.error is None and embedded and all(r.model == "embed-a" for r in embedded)
        generated = result.rationale.split("generated question: ", 1)[1].split(" (noncommittal", 1)[0]  # type: ignore
        a, b = embed_text("What is the capital of France?"), embed_text(generated)
        cosine = sum(x * y for x, y in zip(a, b, strict=True))
        assert model_close(result.value or 0, cosine)
        assert result.details["embeddings"] == "openai/embed-a"
        sent = len(server.requests)
        [again] = (await run_judges(["answer_relevancy"], ITEMS[-1:], gw, **options))["answer_relevancy"]
        assert len(server.requests) == sent and again.value == result.value


def test_options_are_checked(tmp_path: Path) -> None:
    from ragjudge.errors import InputError

    registry = JudgeRegistry()
    for name, options, field in [("answer_correctness", {"weights": [0, 0]}, "options.weights"),
                                 ("answer_correctness", {"weights": "half"}, "options.weights"),
                                 ("answer_relevancy", {"encoder": "word2vec"}, "options.encoder"),
                                 ("context_precision", {"user_input": "last"}, "options.user_input"),
                                 ("context_recall", {"format_fix_retries": -1}, "options.format_fix_retries")]:
        with pytest.raises(InputError) as err:
            registry.build(name, options)
        assert err.value.field == field, (name, options, str(err.value))


def test_specs() -> None:
    registry = JudgeRegistry()
    for name in JUDGES:
        spec = registry.spec(name)
        assert spec.kind == "python" and spec.bench is None and spec.metric == name
        assert registry.build(name).needs_llm
    assert registry.spec("faithfulness").implementation == registry.spec("rl_f").implementation
    assert registry.spec("answer_correctness_llm").options["weights"] == [1.0, 0.0]
    ctx = JudgeContext(judge_models=[MODEL, "openai/judge-b"])
    assert registry.build("answer_relevancy").describe_models(ctx) == \
        [MODEL, "sentence-transformers/all-MiniLM-L6-v2 (bundled)"]
    assert registry.build("context_recall").describe_models(ctx) == [MODEL]


def test_scripted_model_reads_ragas_prompts() -> None:
    """Guard for the scripted judge: ragas's prompts still end with the item's JSON input."""
    from ragas.metrics._context_precision import QAC, ContextPrecisionPrompt

    text = ContextPrecisionPrompt().to_string(QAC(question="q", context="c", answer="a"))
    assert rm.prompt_input(Request(path="/v1/chat/completions", body={"messages": [
        {"role": "user", "content": text}]})) == {"question": "q", "context": "c", "answer": "a"}
