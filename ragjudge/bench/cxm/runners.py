"""One CXMArena item put to a model: intent prediction (+ LLM-verified match), agent quality adherence,
tool calls, and multi-turn answers with their classification.

Each function answers one item with a prediction row (the rows `ragjudge cxm score` reads back); the
benches run them as solvers and scorers, so the engine journals each row and a rerun resumes. Calls go
through the LLMGateway (cache, retries, accounting). A failed call is a row with `error` (left out of the
metrics, counted); an answer the model under test gives in the wrong format is a wrong answer
(`parse_error`); a judge answer that cannot be read is an error.
"""

from __future__ import annotations

import difflib
import random
import re
from collections.abc import Sequence
from typing import Any

from ragjudge.bench.cxm.conversation import chat_messages
from ragjudge.bench.cxm.loaders import normalize_message_id, parse_answer
from ragjudge.bench.cxm.models import (
    Article,
    IntentCase,
    QualityCase,
    RagCase,
    Taxonomy,
    ToolCase,
    parse_arguments,
    render_conversation,
)
from ragjudge.bench.cxm.prompts import messages, parse_choice, parse_json
from ragjudge.errors import UsageError
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMError, LLMGateway, LLMResponse
from ragjudge.normalize import normalize_for_matching


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
    text = normalize_for_matching(text).strip("\"'`.").strip()  # quotes, dashes, spacing, case (ragjudge.normalize)
    return re.sub(r"\s*(?:->|>|/|»|:)\s*", ":", text)  # "Billing > Refund", "Billing / Refund" → "billing:refund"


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


PAPER_CUTOFF = 70.0
PAPER_FALLBACK = "others"
"""CXMArena's predictor maps an answer to the closest label by thefuzz's WRatio when it scores at least 70,
else to "others" (an unparsable answer is "others" too)."""


def _full_process(text: str) -> str:
    """thefuzz's default processing: ASCII only, lower case, non-alphanumerics as spaces, trimmed."""
    from rapidfuzz.utils import default_process

    return default_process(text.encode("ascii", "ignore").decode())


def map_intent_paper(raw: str | None, labels: Sequence[str]) -> str:
    """The official fuzzy mapping (thefuzz `process.extractOne(raw, labels, score_cutoff=70)`), via rapidfuzz."""
    from rapidfuzz import fuzz, process

    match = process.extractOne(PAPER_FALLBACK if raw is None else str(raw).strip(), list(labels),
                               scorer=fuzz.WRatio, processor=_full_process, score_cutoff=PAPER_CUTOFF)
    return match[0] if match else PAPER_FALLBACK


def _taxonomy_variables(taxonomy: Taxonomy) -> dict[str, Any]:
    entries = [{"label": e.label, "description": e.description} for e in taxonomy.entries]
    return {"taxonomy": entries, "taxonomy_name": taxonomy.name, "two_level": taxonomy.two_level,
            "taxonomy_text": "\n".join(f"{i + 1}. {e['label']}: {e['description']}" for i, e in enumerate(entries))}


async def predict_intent(gateway: LLMGateway, case: IntentCase, taxonomy: Taxonomy, model: str,
                         spec: JudgeSpec) -> dict[str, Any]:
    """The model's intent for one conversation, mapped onto the taxonomy's labels."""
    cutoff = float(spec.options.get("fuzzy_cutoff", 0.85))
    key = str(spec.options.get("output_key", "intent"))
    variables = {**_taxonomy_variables(taxonomy), "conversation": render_conversation(case.messages),
                 "transcript": case.transcript or render_conversation(case.messages, with_ids=False)}
    response = await _complete(gateway, model, messages(spec, variables), spec.params)
    row: dict[str, Any] = {"case_id": case.case_id, "taxonomy": taxonomy.name, "model": model}
    if isinstance(response, str):
        return {**row, "error": response}
    row.update(_usage(response), raw=response.text)
    parsed = parse_json(response.text, spec)
    value = parsed.value.get(key) if parsed.ok and isinstance(parsed.value, dict) else None
    if not parsed.ok or value is None:
        return {**row, "intent": None, "parse_error": parsed.error or f"unparsable output: no {key!r} in the JSON"}
    raw_intent = str(value).strip()
    label, how = map_intent(raw_intent, taxonomy.labels, cutoff)
    return {**row, "intent": label if label is not None else raw_intent, "raw_intent": raw_intent,
            "mapping": how, "in_taxonomy": label is not None}


async def verify_intent(gateway: LLMGateway, case: IntentCase, taxonomy: Taxonomy, row: dict[str, Any],
                        judge_model: str, spec: JudgeSpec) -> dict[str, Any]:
    """`verified_match` for one prediction row: exact matches and non-answers by rule, others by the judge.
    A judge that fails or cannot be read gives `verify_error` (and `error`: retried on the next run)."""
    gold = case.gold.get(taxonomy.name)
    if gold is None:
        return {}
    predicted = row.get("intent")
    if predicted is None or predicted == gold:  # no answer, or the very label: nothing for a judge to decide
        return {"verified_match": predicted == gold, "verified_by": "rule"}
    descriptions = {e.label: e.description for e in taxonomy.entries}
    variables = {"taxonomy_name": taxonomy.name, "conversation": render_conversation(case.messages),
                 "predicted": predicted, "gold": gold, "predicted_description": descriptions.get(predicted, ""),
                 "gold_description": descriptions.get(gold, "")}
    response = await _complete(gateway, judge_model, messages(spec, variables), spec.params)
    if isinstance(response, str):
        return {"verify_error": response, "error": response}
    parsed = parse_choice(response.text, spec)
    if parsed.error:
        gateway.forget(response)  # an unreadable verdict is never reused: the next run asks again
        return {"verify_error": f"{parsed.error}; raw: {response.text[:300]}", "error": parsed.error,
                "verify_raw": response.text}
    return {"verified_match": bool(parsed.value), "verified_by": judge_model, "verify_raw": response.text}


# -- agent quality adherence ----------------------------------------------------------------------------

def read_quality_answers(value: Any, case: QualityCase, spec: JudgeSpec | None = None
                         ) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """The model's answers → (answers in question order, ids of questions left unanswered, ids of questions
    answered with something that is no True/False/NA).

    Where the answers are and what they are called comes from the spec's options, so a prompt written for the
    release (a top-level list of {"Question", "Answer"}) runs unchanged: `answers_key` ("answers"; null for a
    top-level list), `question_key` ("question"), `answer_key` ("answer"), `evidence_key` ("message_ids").
    An item names its question by number or text; failing both, by its position in the list."""
    options = spec.options if spec is not None else {}
    answers_key = options.get("answers_key", "answers")
    q_key, a_key = options.get("question_key", "question"), options.get("answer_key", "answer")
    e_key = options.get("evidence_key", "message_ids")
    items = value if answers_key is None else (value.get(answers_key, []) if isinstance(value, dict) else [])
    answers: dict[str, dict[str, Any]] = {}
    unreadable: list[str] = []
    numbers = {str(i + 1): q.question_id for i, q in enumerate(case.questions)}
    by_text = {q.text.strip().casefold(): q.question_id for q in case.questions}
    for position, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            continue
        key = str(item.get(q_key, "")).strip().rstrip(".")
        question_id = numbers.get(key) or by_text.get(key.casefold())
        if question_id is None and position < len(case.questions):
            question_id = case.questions[position].question_id
        if question_id is None or question_id in answers or question_id in unreadable:
            continue
        try:
            answer = parse_answer(item.get(a_key))
        except ValueError:
            unreadable.append(question_id)
            continue
        evidence = [normalize_message_id(x) for x in item.get(e_key) or [] if isinstance(x, (str, int))]
        answers[question_id] = {"question_id": question_id, "answer": answer, "evidence": evidence}
    ordered = [answers[q.question_id] for q in case.questions if q.question_id in answers]
    missing = [q.question_id for q in case.questions
               if q.question_id not in answers and q.question_id not in unreadable]
    return ordered, missing, unreadable


async def predict_quality(gateway: LLMGateway, case: QualityCase, model: str, spec: JudgeSpec) -> dict[str, Any]:
    questions = [{"number": i + 1, "text": q.text} for i, q in enumerate(case.questions)]
    variables = {"conversation": render_conversation(case.messages), "questions": questions,
                 "transcript": case.transcript or render_conversation(case.messages),
                 "question_list": str([q.text for q in case.questions])}
    response = await _complete(gateway, model, messages(spec, variables), spec.params)
    row: dict[str, Any] = {"case_id": case.case_id, "model": model}
    if isinstance(response, str):
        return {**row, "error": response}
    row.update(_usage(response), raw=response.text)
    parsed = parse_json(response.text, spec)
    if not parsed.ok:
        return {**row, "answers": [], "parse_error": parsed.error}
    answers, missing, unreadable = read_quality_answers(parsed.value, case, spec)
    if missing or unreadable:
        row["parse_error"] = f"no readable answer for question(s) {', '.join(missing + unreadable)}"
    if unreadable:
        row["unreadable"] = unreadable
    return {**row, "answers": answers}


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


async def call_tools(gateway: LLMGateway, case: ToolCase, offered: list[str], catalog: dict[str, dict[str, Any]],
                     model: str, spec: JudgeSpec, kb: list[dict[str, str]], *, forced: bool = False) -> dict[str, Any]:
    """One conversation offered `offered` tools: the tool calls the model makes (tool_choice=required if forced)."""
    params = {**spec.params, "tools": [catalog[n] for n in offered]}
    if forced:
        params["tool_choice"] = "required"
    msgs = messages(spec, {"articles": kb}, chat=chat_messages(case.messages))
    response = await _complete(gateway, model, msgs, params)
    row: dict[str, Any] = {"case_id": case.case_id, "n_tools": len(offered), "mode": "forced" if forced else "auto",
                           "model": model, "offered": offered}
    if isinstance(response, str):
        return {**row, "error": response}
    return {**row, **_usage(response), "tool_calls": _calls(response), "text": response.text}


# -- multi-turn answers and their classification ---------------------------------------------------------

QUERY_STRATEGIES = ("last_turn", "all_user_turns", "full_conversation")


def conversation_query(case: RagCase, strategy: str = "all_user_turns") -> str:
    """The retrieval query for a conversation: the customer's last message, all customer messages, or all
    messages (the pipelines' strategies without an LLM)."""
    customer = [m.text for m in case.messages if m.speaker == "customer" and m.text.strip()]
    if strategy == "last_turn":
        return customer[-1] if customer else case.messages[-1].text
    if strategy == "all_user_turns":
        return "\n".join(customer) if customer else case.messages[-1].text
    if strategy == "full_conversation":
        return "\n".join(m.text for m in case.messages if m.text.strip())
    raise UsageError(f"unknown query strategy {strategy!r} (available: {', '.join(QUERY_STRATEGIES)})")


def read_query(text: str, spec: JudgeSpec) -> tuple[str | None, str | None]:
    """The search query in a query-formation answer: the whole text (as CXMArena's prompt asks for), or with
    `options.output_key` the value of that key of the answer's JSON. (query, error)."""
    key = spec.options.get("output_key")
    if key:
        from ragjudge.judges.json_parse import candidates

        found = [c[key] for c in candidates(text or "") if isinstance(c, dict) and isinstance(c.get(key), str)]
        value = found[0] if found else None
        if not isinstance(value, str) or not value.strip():
            return None, f"unparsable query: no text under {key!r}; raw: {text[:300]}"
        return value.strip(), None
    query = text.strip().strip("`").strip()
    return (query, None) if query else (None, "empty query from the query-formation model")


async def form_query(gateway: LLMGateway, case: RagCase, model: str, spec: JudgeSpec) -> dict[str, Any]:
    """One conversation → one search query written by an LLM (the paper's multi-turn retrieval step)."""
    variables = {"conversation": case.transcript or render_conversation(case.messages, with_ids=False),
                 "messages": [m.model_dump() for m in case.messages]}
    response = await _complete(gateway, model, messages(spec, variables), spec.params)
    if isinstance(response, str):
        return {"error": response}
    query, error = read_query(response.text, spec)
    out: dict[str, Any] = {"query_raw": response.text, **_usage(response)}
    return {**out, "error": error} if error else {**out, "query": query}


async def judge_contradiction(gateway: LLMGateway, a: Article, b: Article, judge_model: str,
                              spec: JudgeSpec) -> dict[str, Any]:
    """{"contradictory": bool} for one article pair, or {"error", "raw"} when the call fails or has no verdict."""
    variables = {"a": {"id": a.id, "text": a.full_text}, "b": {"id": b.id, "text": b.full_text}}
    response = await _complete(gateway, judge_model, messages(spec, variables), spec.params)
    if isinstance(response, str):
        return {"error": response}
    parsed = parse_choice(response.text, spec)
    if parsed.error:
        return {"error": parsed.error, "raw": response.text[:1000]}
    return {"contradictory": bool(parsed.value)}


async def generate_response(gateway: LLMGateway, case: RagCase, retrieved: list[str], articles: dict[str, Article],
                            model: str, spec: JudgeSpec) -> dict[str, Any]:
    """The model's reply to the last message, from the retrieved articles."""
    kb = [{"id": i, "text": articles[i].text} for i in retrieved]
    msgs = messages(spec, {"articles": kb}, chat=chat_messages(case.messages))
    response = await _complete(gateway, model, msgs, spec.params)
    row: dict[str, Any] = {"case_id": case.case_id, "ranking": retrieved, "model": model}
    if isinstance(response, str):
        return {**row, "error": response}
    return {**row, **_usage(response), "response": response.text}


def read_answer_class(value: Any, spec: JudgeSpec) -> tuple[str | None, str | None]:
    labels = {str(k).casefold(): str(v) for k, v in (spec.options.get("labels") or {}).items()}
    category = str(value.get("category", "")).strip().strip(".").casefold()
    if category in labels:
        return labels[category], None
    known = sorted(set(labels.values()))
    return None, f"unparsable judge output: category {value.get('category')!r} is not one of {known}"


async def classify_response(gateway: LLMGateway, case: RagCase, given: dict[str, Any], articles: dict[str, Article],
                            judge_model: str, spec: JudgeSpec) -> dict[str, Any]:
    """Label one reply Correct / Incorrect / Hallucination / Refusal. `given`: the row with `response` (and
    `ranking`, the articles the replier saw besides the gold ones; `retrieved_ids` in rows written before)."""
    gold = [{"id": i, "text": articles[i].text} for i in case.kb_ids if i in articles]
    seen = given.get("ranking") if given.get("ranking") is not None else given.get("retrieved_ids")
    others = [{"id": i, "text": articles[i].text} for i in seen or []
              if i in articles and i not in case.kb_ids]
    variables = {"conversation": render_conversation(case.messages, with_ids=False),
                 "response": given["response"], "reference": case.reference or "",
                 "gold_articles": gold, "other_articles": others}
    response = await _complete(gateway, judge_model, messages(spec, variables), spec.params)
    row: dict[str, Any] = {"case_id": case.case_id, "judge_model": judge_model}
    if isinstance(response, str):
        return {**row, "error": response}
    row.update(judge_raw=response.text)
    parsed = parse_json(response.text, spec)
    label, error = (None, parsed.error) if not parsed.ok else read_answer_class(parsed.value, spec)
    if error:
        gateway.forget(response)  # an unreadable verdict is never reused: the next run asks again
        return {**row, "error": error}
    return {**row, "label": label}
