"""Run a model on the LLM-based CXMArena tasks: intent prediction (+ LLM-verified match), agent quality
adherence, tool calls, and multi-turn answers with their classification.

Each item's outcome is a prediction row (the same rows `ragjudge cxm score` reads back). Calls go through
the LLMGateway (cache, retries, accounting) and finished rows are journaled, so a rerun resumes.
A failed call is a row with `error` (left out of the metrics, counted); an answer the model under test
gives in the wrong format is a wrong answer (`parse_error`); a judge answer that cannot be read is an error.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import random
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ragjudge.cxm.conversation import chat_messages
from ragjudge.cxm.journal import StageJournal
from ragjudge.cxm.loaders import normalize_message_id, parse_answer
from ragjudge.cxm.models import (
    Article,
    IntentCase,
    QualityCase,
    RagCase,
    Taxonomy,
    ToolCase,
    parse_arguments,
    render_conversation,
)
from ragjudge.cxm.prompts import fingerprint_of, messages, parse_choice, parse_json
from ragjudge.cxm.retrieve import rank
from ragjudge.errors import UsageError
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMError, LLMGateway, LLMResponse
from ragjudge.progress import ProgressBars


@dataclass
class RunContext:
    gateway: LLMGateway
    journal: StageJournal
    bars: ProgressBars

    async def each(self, stage: str, label: str,
                   jobs: Sequence[tuple[str, str, Callable[[], Awaitable[dict[str, Any]]]]]) -> list[dict[str, Any]]:
        """Run (key, fingerprint, work) jobs concurrently (the gateway bounds concurrency), reusing journaled rows."""
        done = {key: row for key, fp, _ in jobs if (row := self.journal.get(stage, key, fp)) is not None}
        advance = self.bars.bar(label, total=len(jobs), completed=len(done))

        async def one(key: str, fp: str, work: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
            if key in done:
                return done[key]
            row = await work()
            self.journal.record(stage, key, fp, row)
            advance(1)
            return row

        return list(await asyncio.gather(*(one(key, fp, work) for key, fp, work in jobs)))


async def _complete(gateway: LLMGateway, model: str, msgs: list[dict[str, Any]],
                    params: dict[str, Any]) -> LLMResponse | str:
    """The response, or the error text of a call that failed for good."""
    try:
        return await gateway.complete(model, msgs, **params)
    except LLMError as exc:
        return str(exc)


def _usage(response: LLMResponse) -> dict[str, Any]:
    return {"prompt_tokens": response.prompt_tokens, "completion_tokens": response.completion_tokens,
            "cached": response.cached}


# -- intent prediction ----------------------------------------------------------------------------------

def _norm_label(text: str) -> str:
    text = text.strip().strip("\"'`.").strip()
    text = re.sub(r"\s*(?:->|>|/|»|:)\s*", ":", text)  # "Billing > Refund", "Billing / Refund" → "Billing:Refund"
    return " ".join(text.split()).casefold()


def map_intent(raw: str, labels: Sequence[str], fuzzy_cutoff: float) -> tuple[str | None, str]:
    """Map a model's intent to a taxonomy label: (label, how) with how = exact | normalized | fuzzy | none."""
    if raw in labels:
        return raw, "exact"
    by_norm = {_norm_label(label): label for label in labels}
    norm = _norm_label(raw)
    if norm in by_norm:
        return by_norm[norm], "normalized"
    close = difflib.get_close_matches(norm, list(by_norm), n=1, cutoff=fuzzy_cutoff)
    if close:
        return by_norm[close[0]], "fuzzy"
    return None, "none"


def _taxonomy_variables(taxonomy: Taxonomy) -> dict[str, Any]:
    return {"taxonomy": [{"label": e.label, "description": e.description} for e in taxonomy.entries],
            "taxonomy_name": taxonomy.name, "two_level": taxonomy.two_level}


async def predict_intents(ctx: RunContext, cases: Sequence[IntentCase], taxonomy: Taxonomy, model: str,
                          spec: JudgeSpec) -> list[dict[str, Any]]:
    cutoff = float(spec.options.get("fuzzy_cutoff", 0.85))
    fp = fingerprint_of(spec, model, taxonomy.model_dump())
    shared = _taxonomy_variables(taxonomy)

    def job(case: IntentCase) -> Callable[[], Awaitable[dict[str, Any]]]:
        async def work() -> dict[str, Any]:
            msgs = messages(spec, {**shared, "conversation": render_conversation(case.messages)})
            response = await _complete(ctx.gateway, model, msgs, spec.params)
            row: dict[str, Any] = {"case_id": case.case_id, "taxonomy": taxonomy.name, "model": model}
            if isinstance(response, str):
                return {**row, "error": response}
            row.update(_usage(response), raw=response.text)
            parsed = parse_json(response.text, spec)
            if not parsed.ok:
                return {**row, "intent": None, "parse_error": parsed.error}
            raw_intent = str(parsed.value["intent"]).strip()
            label, how = map_intent(raw_intent, taxonomy.labels, cutoff)
            return {**row, "intent": label if label is not None else raw_intent, "raw_intent": raw_intent,
                    "mapping": how, "in_taxonomy": label is not None}
        return work

    return await ctx.each("intent", f"intent {taxonomy.name}",
                          [(f"{taxonomy.name}/{c.case_id}", fp, job(c)) for c in cases])


async def verify_intents(ctx: RunContext, cases: Sequence[IntentCase], taxonomy: Taxonomy,
                         rows: Sequence[dict[str, Any]], judge_model: str, spec: JudgeSpec) -> list[dict[str, Any]]:
    """Add `verified_match` to each prediction row: exact matches without a call, others by the judge."""
    by_id = {c.case_id: c for c in cases}
    descriptions = {e.label: e.description for e in taxonomy.entries}
    shared = {"taxonomy_name": taxonomy.name}
    jobs = []
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        case = by_id[row["case_id"]]
        gold = case.gold.get(taxonomy.name)
        if row.get("error") or gold is None:
            out[row["case_id"]] = dict(row)
            continue
        predicted = row.get("intent")
        if predicted is None or predicted == gold:  # no answer, or the very label: nothing for a judge to decide
            out[row["case_id"]] = {**row, "verified_match": predicted == gold, "verified_by": "rule"}
            continue

        def work(case: IntentCase = case, gold: str = gold, predicted: str = predicted) -> Awaitable[dict[str, Any]]:
            async def run() -> dict[str, Any]:
                variables = {**shared, "conversation": render_conversation(case.messages), "predicted": predicted,
                             "gold": gold, "predicted_description": descriptions.get(predicted, ""),
                             "gold_description": descriptions.get(gold, "")}
                response = await _complete(ctx.gateway, judge_model, messages(spec, variables), spec.params)
                if isinstance(response, str):
                    return {"verify_error": response, "error": response}
                parsed = parse_choice(response.text, spec)
                if parsed.error:
                    return {"verify_error": f"{parsed.error}; raw: {response.text[:300]}", "error": parsed.error,
                            "verify_raw": response.text}
                return {"verified_match": bool(parsed.value), "verified_by": judge_model, "verify_raw": response.text}
            return run()

        fp = fingerprint_of(spec, judge_model, predicted, gold)
        jobs.append((f"{taxonomy.name}/{row['case_id']}", fp, work))
    verdicts = await ctx.each("verify", f"verify {taxonomy.name}", jobs)
    by_case = {r["case_id"]: r for r in rows}
    for (key, _, _), verdict in zip(jobs, verdicts):
        case_id = key.split("/", 1)[1]
        verdict = {k: v for k, v in verdict.items() if k != "error"}  # a judge failure is not a prediction failure
        out[case_id] = {**by_case[case_id], **verdict}
    return [out[r["case_id"]] for r in rows]


# -- agent quality adherence ----------------------------------------------------------------------------

def read_quality_answers(value: Any, case: QualityCase) -> tuple[list[dict[str, Any]], list[str]]:
    """The model's {"answers": [...]} → (answers by question_id, ids of questions left unanswered/unreadable)."""
    answers: dict[str, dict[str, Any]] = {}
    numbers = {str(i + 1): q.question_id for i, q in enumerate(case.questions)}
    by_text = {q.text.strip().casefold(): q.question_id for q in case.questions}
    for item in value.get("answers", []):
        key = str(item.get("question", "")).strip().rstrip(".")
        question_id = numbers.get(key) or by_text.get(key.casefold())
        if question_id is None or question_id in answers:
            continue
        try:
            answer = parse_answer(item.get("answer"))
        except ValueError:
            continue
        evidence = [normalize_message_id(x) for x in item.get("message_ids") or []]
        answers[question_id] = {"question_id": question_id, "answer": answer, "evidence": evidence}
    ordered = [answers[q.question_id] for q in case.questions if q.question_id in answers]
    missing = [q.question_id for q in case.questions if q.question_id not in answers]
    return ordered, missing


async def predict_quality(ctx: RunContext, cases: Sequence[QualityCase], model: str,
                          spec: JudgeSpec) -> list[dict[str, Any]]:
    fp = fingerprint_of(spec, model)

    def job(case: QualityCase) -> Callable[[], Awaitable[dict[str, Any]]]:
        async def work() -> dict[str, Any]:
            variables = {"conversation": render_conversation(case.messages),
                         "questions": [{"number": i + 1, "text": q.text} for i, q in enumerate(case.questions)]}
            response = await _complete(ctx.gateway, model, messages(spec, variables), spec.params)
            row: dict[str, Any] = {"case_id": case.case_id, "model": model}
            if isinstance(response, str):
                return {**row, "error": response}
            row.update(_usage(response), raw=response.text)
            parsed = parse_json(response.text, spec)
            if not parsed.ok:
                return {**row, "answers": [], "parse_error": parsed.error}
            answers, missing = read_quality_answers(parsed.value, case)
            if missing:
                row["parse_error"] = f"no readable answer for question(s) {', '.join(missing)}"
            return {**row, "answers": answers}
        return work

    # question texts are part of the key: the same conversation with other questions is another job
    def key(case: QualityCase) -> str:
        digest = hashlib.sha256("\n".join(q.text for q in case.questions).encode()).hexdigest()[:8]
        return f"{case.case_id}/{digest}"

    return await ctx.each("quality", "quality", [(key(c), fp, job(c)) for c in cases])


# -- tool calls -----------------------------------------------------------------------------------------

def offered_tools(case: ToolCase, catalog: Sequence[str], size: int) -> list[str] | None:
    """The case's own candidate list for `size`, else the expected tools plus distractors: a seeded
    permutation of the rest of the catalog, so a smaller offer is always contained in a larger one.
    None if the catalog has fewer than `size` tools."""
    if size in case.candidates:
        return list(case.candidates[size])
    if size > len(catalog):
        return None
    expected = list(dict.fromkeys(c.name for c in case.expected))
    rng = random.Random(f"cxm-tools/{case.case_id}")
    rest = [name for name in catalog if name not in expected]
    rng.shuffle(rest)
    names = expected + rest[: max(0, size - len(expected))]
    random.Random(f"cxm-tools/{case.case_id}/{size}").shuffle(names)
    return names


def _calls(response: LLMResponse) -> list[dict[str, Any]]:
    out = []
    for call in response.tool_calls:
        parsed = parse_arguments(call.get("arguments"))
        out.append({"name": call.get("name"), "arguments": parsed if parsed is not None else call.get("arguments")})
    return out


async def predict_tool_calls(ctx: RunContext, cases: Sequence[ToolCase], catalog: dict[str, dict[str, Any]],
                             sizes: Sequence[int], model: str, spec: JudgeSpec, articles: dict[str, Article],
                             *, forced: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    """One row per (case, number of offered tools). Returns (rows, notes about sizes that could not be offered)."""
    names = list(catalog)
    mode = "forced" if forced else "auto"
    jobs = []
    skipped: dict[int, int] = {}
    for case in cases:
        kb = [{"id": a.id, "text": a.text} for k in case.kb_ids if (a := articles.get(k)) is not None]
        for size in sizes:
            offered = offered_tools(case, names, size)
            if offered is None:
                skipped[size] = skipped.get(size, 0) + 1
                continue

            def work(case: ToolCase = case, size: int = size, offered: list[str] = offered,
                     kb: list[dict[str, str]] = kb) -> Awaitable[dict[str, Any]]:
                async def run() -> dict[str, Any]:
                    params = {**spec.params, "tools": [catalog[n] for n in offered]}
                    if forced:
                        params["tool_choice"] = "required"
                    msgs = messages(spec, {"articles": kb}, chat=chat_messages(case.messages))
                    response = await _complete(ctx.gateway, model, msgs, params)
                    row: dict[str, Any] = {"case_id": case.case_id, "n_tools": size, "mode": mode, "model": model,
                                           "offered": offered}
                    if isinstance(response, str):
                        return {**row, "error": response}
                    return {**row, **_usage(response), "tool_calls": _calls(response), "text": response.text}
                return run()

            jobs.append((f"{case.case_id}@{size}/{mode}", fingerprint_of(spec, model, mode, offered), work))
    notes = [f"{n} case(s) not run with {size} tools: the catalog has only {len(names)} tools"
             for size, n in sorted(skipped.items())]
    rows = await ctx.each("tools", f"tool calls ({mode})", jobs) if jobs else []
    return rows, notes


# -- multi-turn answers and their classification ---------------------------------------------------------

QUERY_STRATEGIES = ("last_turn", "all_user_turns", "full_conversation")


def conversation_query(case: RagCase, strategy: str = "all_user_turns") -> str:
    """The retrieval query for a conversation: the customer's last message, all customer messages, or all
    messages (the pipelines' strategies without LLM rewriting)."""
    customer = [m.text for m in case.messages if m.speaker != "agent" and m.text.strip()]
    if strategy == "last_turn":
        return customer[-1] if customer else case.messages[-1].text
    if strategy == "all_user_turns":
        return "\n".join(customer)
    if strategy == "full_conversation":
        return "\n".join(m.text for m in case.messages if m.text.strip())
    raise UsageError(f"unknown query strategy {strategy!r} (available: {', '.join(QUERY_STRATEGIES)})")


async def generate_responses(ctx: RunContext, cases: Sequence[RagCase], articles: dict[str, Article], model: str,
                             spec: JudgeSpec, *, retriever: str = "bm25", k: int = 5, query: str = "all_user_turns",
                             pipeline_dirs: list[str] | None = None) -> list[dict[str, Any]]:
    """Retrieve k articles for the conversation, then let the model reply to the last message from them."""
    rankings = rank(retriever, articles, [conversation_query(c, query) for c in cases], k, pipeline_dirs)
    fp = fingerprint_of(spec, model)

    def job(case: RagCase, retrieved: list[str]) -> Callable[[], Awaitable[dict[str, Any]]]:
        async def work() -> dict[str, Any]:
            kb = [{"id": i, "text": articles[i].text} for i in retrieved]
            msgs = messages(spec, {"articles": kb}, chat=chat_messages(case.messages))
            response = await _complete(ctx.gateway, model, msgs, spec.params)
            row: dict[str, Any] = {"case_id": case.case_id, "retrieved_ids": retrieved, "model": model}
            if isinstance(response, str):
                return {**row, "error": response}
            return {**row, **_usage(response), "response": response.text}
        return work

    return await ctx.each("respond", "agent replies",
                          [(f"{c.case_id}/{'|'.join(r)}", fp, job(c, r)) for c, r in zip(cases, rankings)])


def read_answer_class(value: Any, spec: JudgeSpec) -> tuple[str | None, str | None]:
    labels = {str(k).casefold(): str(v) for k, v in (spec.options.get("labels") or {}).items()}
    category = str(value.get("category", "")).strip().strip(".").casefold()
    if category in labels:
        return labels[category], None
    known = sorted(set(labels.values()))
    return None, f"unparsable judge output: category {value.get('category')!r} is not one of {known}"


async def classify_responses(ctx: RunContext, cases: Sequence[RagCase], articles: dict[str, Article],
                             responses: dict[str, dict[str, Any]], judge_model: str,
                             spec: JudgeSpec) -> list[dict[str, Any]]:
    """Label each reply Correct / Incorrect / Hallucination / Refusal. `responses`: case_id → row with
    `response` (and `retrieved_ids`, the articles the replier saw besides the gold ones)."""
    jobs = []
    for case in cases:
        given = responses.get(case.case_id)
        if given is None or given.get("error") or given.get("response") is None:
            continue

        def work(case: RagCase = case, given: dict[str, Any] = given) -> Awaitable[dict[str, Any]]:
            async def run() -> dict[str, Any]:
                gold = [{"id": i, "text": articles[i].text} for i in case.kb_ids if i in articles]
                others = [{"id": i, "text": articles[i].text} for i in given.get("retrieved_ids") or []
                          if i in articles and i not in case.kb_ids]
                variables = {"conversation": render_conversation(case.messages, with_ids=False),
                             "response": given["response"], "reference": case.reference or "",
                             "gold_articles": gold, "other_articles": others}
                response = await _complete(ctx.gateway, judge_model, messages(spec, variables), spec.params)
                row: dict[str, Any] = {"case_id": case.case_id, "judge_model": judge_model}
                if isinstance(response, str):
                    return {**row, "error": response}
                row.update(judge_raw=response.text)
                parsed = parse_json(response.text, spec)
                if not parsed.ok:
                    return {**row, "error": parsed.error}
                label, error = read_answer_class(parsed.value, spec)
                return {**row, "error": error} if error else {**row, "label": label}
            return run()

        fp = fingerprint_of(spec, judge_model, given["response"], given.get("retrieved_ids"))
        jobs.append((case.case_id, fp, work))
    return await ctx.each("classify", "classify replies", jobs)
