"""The six CXMArena tasks end to end: load a data folder, run a model (or read predictions), score.

`run_task` writes to its output folder: journal.jsonl (resume), predictions.jsonl (what `score_task`
reads back), metrics.json (the reports and LLM usage).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragjudge import __version__
from ragjudge.cxm import loaders
from ragjudge.cxm import prompts as P
from ragjudge.cxm import runners as R
from ragjudge.cxm import score as S
from ragjudge.cxm.journal import StageJournal
from ragjudge.cxm.metrics import pairs_above
from ragjudge.cxm.report import TaskReport
from ragjudge.cxm.retrieve import rank, resolve_embedding_model
from ragjudge.cxm.tables import find_file
from ragjudge.errors import UsageError
from ragjudge.formats.jsonl import read_jsonl, to_jsonable, write_jsonl
from ragjudge.llm import LLMGateway, ResponseCache
from ragjudge.llm.gateway import validate_model
from ragjudge.progress import progress_bars

TASKS = ("intent", "quality", "tool-calls", "answer-classification", "kb-refinement", "article-search")
_ALIASES = {
    "intent-prediction": "intent", "intents": "intent",
    "agent-quality": "quality", "quality-adherence": "quality", "agent-quality-adherence": "quality", "aqm": "quality",
    "tools": "tool-calls", "tool-calling": "tool-calls", "tool-call": "tool-calls",
    "classification": "answer-classification", "multi-turn": "answer-classification",
    "multi-turn-rag": "answer-classification", "rag": "answer-classification",
    "kb": "kb-refinement", "kb-refinement-pairs": "kb-refinement",
    "search": "article-search",
}
DEFAULT_TOOL_COUNTS = (16, 32, 64, 96, 128)
DEFAULT_KS = (1, 3, 5, 10)


def task_name(value: str) -> str:
    name = value.strip().lower().replace("_", "-")
    name = _ALIASES.get(name, name)
    if name not in TASKS:
        raise UsageError(f"unknown CXMArena task {value!r} (available: {', '.join(TASKS)})")
    return name


def default_predictions(data: Path, task: str) -> Path:
    return data / "predictions" / f"{task}.jsonl"


@dataclass
class ScoreOptions:
    taxonomy: str | None = None
    ks: tuple[int, ...] = DEFAULT_KS
    baseline: bool = True
    embedding_model: str | None = None


def _rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    return list(read_jsonl(path))


def score_task(task: str, data: Path, predictions: Path | None, options: ScoreOptions) -> list[TaskReport]:
    """Score a predictions file (default: <data>/predictions/<task>.jsonl) against the task's gold data."""
    path = predictions or default_predictions(data, task)
    if task == "kb-refinement":
        gold = loaders.load_pairs(data)
        articles = _optional_articles(data, "kb-refinement")
        rows = _rows(path) if predictions is not None or path.exists() else None
        baseline = None
        if options.baseline:
            if articles is None:
                raise UsageError("the embedding baseline needs the KB articles (kb_refinement_articles.jsonl, "
                                 "articles.jsonl or Articles/KB_refinement_articles); or pass --no-baseline")
            baseline = S.embedding_baseline(articles, gold, options.embedding_model)
        if rows is None and baseline is None:
            raise UsageError(f"nothing to score: {path} does not exist and the baseline is off")
        return [S.score_pairs(gold, rows, path, articles, baseline, _embedding_label(options.embedding_model))]
    rows = _rows(path)
    if task == "intent":
        cases, taxonomies = loaders.load_intent(data)
        return S.score_intent(cases, taxonomies, rows, path, options.taxonomy)
    if task == "quality":
        return [S.score_quality(loaders.load_quality(data), rows, path)]
    if task == "tool-calls":
        catalog = loaders.load_tool_catalog(data)
        return [S.score_tools(loaders.load_tool_cases(data, catalog), rows, path)]
    if task == "answer-classification":
        return [S.score_classification(loaders.load_rag(data), rows, path)]
    if task == "article-search":
        articles = _optional_articles(data, "article-search")
        return [S.score_search(loaders.load_search(data), rows, options.ks, path, articles)]
    raise UsageError(f"unknown task {task!r}")


def score_all(data: Path, options: ScoreOptions) -> list[TaskReport]:
    """Every task whose predictions file is in <data>/predictions/."""
    found = [t for t in TASKS if default_predictions(data, t).exists()]
    if not found:
        raise UsageError(f"no predictions in {data / 'predictions'} "
                         f"(expected <task>.jsonl for tasks: {', '.join(TASKS)})")
    return [report for t in found for report in score_task(t, data, None, options)]


def _optional_articles(data: Path, kind: str) -> dict[str, Any] | None:
    names, release = loaders.ARTICLE_FILES[kind]
    return loaders.load_articles(data, kind) if find_file(data, names, release) else None


def _embedding_label(model: str | None) -> str:
    name = resolve_embedding_model(model)
    return "MiniLM embedding" if name == "minilm" else f"{name} embedding"


# -- running a model ------------------------------------------------------------------------------------

@dataclass
class RunSettings:
    task: str
    data: Path
    model: str | None = None
    """The model under test: an LLM (litellm name) or, for search/KB refinement, bm25 / dense / an embedding model."""
    judge_model: str | None = None
    out: Path | None = None
    taxonomy: str | None = None
    tool_counts: tuple[int, ...] = DEFAULT_TOOL_COUNTS
    forced_tool_call: bool = False
    retriever: str = "bm25"
    k: int = 5
    query: str = "all_user_turns"
    """How a multi-turn conversation becomes the retrieval query for generated answers."""
    ks: tuple[int, ...] = DEFAULT_KS
    limit: int | None = None
    judge_dirs: list[str] = field(default_factory=list)
    pipeline_dirs: list[str] = field(default_factory=list)
    concurrency: int = 8
    cache_dir: str | None = None
    use_cache: bool = True
    api_base: str | None = None
    max_retries: int = 6
    timeout: float = 120.0
    show_progress: bool = True


@dataclass
class RunOutcome:
    reports: list[TaskReport]
    out: Path
    gateway: LLMGateway | None

    @property
    def exit_code(self) -> int:
        return 1 if any(r.problems for r in self.reports) else 0


def default_out(task: str, model: str | None) -> Path:
    slug = re.sub(r"[^A-Za-z0-9_.]+", "_", model or "none").strip("_")
    return Path("runs") / f"cxm-{task}-{slug}"


def _gateway(settings: RunSettings, models: list[str]) -> LLMGateway:
    for m in models:
        validate_model(m, settings.api_base)
    cache = ResponseCache(settings.cache_dir) if settings.use_cache else None
    return LLMGateway(cache=cache, concurrency=settings.concurrency, max_retries=settings.max_retries,
                      timeout=settings.timeout, api_base=settings.api_base)


def _need(value: str | None, what: str, task: str) -> str:
    if not value:
        raise UsageError(f"--task {task} needs {what}")
    return value


def run_task(settings: RunSettings) -> RunOutcome:
    task = task_name(settings.task)
    if task in ("intent", "quality", "tool-calls"):
        _need(settings.model, "a model under test (--model / --gen)", task)
    if settings.judge_model and task not in ("intent", "answer-classification"):
        raise UsageError(f"--task {task} uses no judge model (only intent and answer-classification do)")
    if settings.forced_tool_call and task != "tool-calls":
        raise UsageError("--force-tool-call is for --task tool-calls")
    if task == "answer-classification":
        _need(settings.judge_model, "a judge model (--judge-model / --judge-models)", task)
        if settings.query not in R.QUERY_STRATEGIES:
            raise UsageError(f"unknown query strategy {settings.query!r} (available: {', '.join(R.QUERY_STRATEGIES)})")
    out = settings.out or default_out(task, settings.model)
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    book = P.PromptBook(settings.judge_dirs)
    llm_tasks = ("intent", "quality", "tool-calls", "answer-classification")
    llm_models = [m for m in (settings.model, settings.judge_model) if m] if task in llm_tasks else []
    gateway = _gateway(settings, list(dict.fromkeys(llm_models))) if llm_models else None
    journal = StageJournal(out / "journal.jsonl")
    try:
        with progress_bars(settings.show_progress) as bars:
            ctx = R.RunContext(gateway=gateway, journal=journal, bars=bars) if gateway else None  # type: ignore[arg-type]
            rows, reports = asyncio.run(_run(task, settings, book, ctx))
    finally:
        journal.close()
    write_jsonl(out / "predictions.jsonl", rows)
    (out / "metrics.json").write_text(json.dumps(to_jsonable({
        "ragjudge_version": __version__, "task": task, "data": str(settings.data), "model": settings.model,
        "judge_model": settings.judge_model, "reports": [r.to_dict() for r in reports],
        "usage": gateway.usage.as_dict() if gateway else {}, "seconds": round(time.time() - started, 2),
    }), indent=2, ensure_ascii=False), encoding="utf-8")
    return RunOutcome(reports=reports, out=out, gateway=gateway)


def _limit(items: list[Any], limit: int | None) -> list[Any]:
    return items[:limit] if limit else items


def _numbered(rows: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    return [(i + 1, r) for i, r in enumerate(rows)]


async def _run(task: str, s: RunSettings, book: P.PromptBook,
               ctx: R.RunContext | None) -> tuple[list[dict[str, Any]], list[TaskReport]]:
    if task == "intent":
        assert ctx is not None and s.model
        cases, taxonomies = loaders.load_intent(s.data)
        cases = _limit(cases, s.limit)
        names = [s.taxonomy.lower()] if s.taxonomy else [t for t in taxonomies if any(t in c.gold for c in cases)]
        for name in names:
            if name not in taxonomies:
                raise UsageError(f"unknown taxonomy {name!r} (available: {', '.join(taxonomies)})")
            if not any(name in c.gold for c in cases):
                raise UsageError(f"no conversation has a gold intent in taxonomy {name!r}")
        if not names:
            raise UsageError("no conversation has a gold intent")
        rows: list[dict[str, Any]] = []
        for name in names:
            mine = [c for c in cases if name in c.gold]
            predicted = await R.predict_intents(ctx, mine, taxonomies[name], s.model, book.spec(P.INTENT_PREDICTION))
            if s.judge_model:
                predicted = await R.verify_intents(ctx, mine, taxonomies[name], predicted, s.judge_model,
                                                   book.spec(P.INTENT_MATCH))
            rows.extend(predicted)
        reports = []
        for name in names:
            mine = [c for c in cases if name in c.gold]
            reports += S.score_intent(mine, taxonomies, _numbered([r for r in rows if r["taxonomy"] == name]),
                                      taxonomy=name)
        return rows, reports
    if task == "quality":
        assert ctx is not None and s.model
        cases = _limit(loaders.load_quality(s.data), s.limit)
        rows = await R.predict_quality(ctx, cases, s.model, book.spec(P.QUALITY))
        return rows, [S.score_quality(cases, _numbered(rows))]
    if task == "tool-calls":
        assert ctx is not None and s.model
        catalog = loaders.load_tool_catalog(s.data)
        cases = _limit(loaders.load_tool_cases(s.data, catalog), s.limit)
        articles = _optional_articles(s.data, "multi-turn") or {}
        rows, notes = await R.predict_tool_calls(ctx, cases, catalog, s.tool_counts, s.model, book.spec(P.TOOL_CALL),
                                                 articles, forced=s.forced_tool_call)
        report = S.score_tools(cases, _numbered(rows))
        report.notes = notes + report.notes
        return rows, [report]
    if task == "answer-classification":
        assert ctx is not None and s.judge_model
        cases = _limit(loaders.load_rag(s.data), s.limit)
        articles = loaders.load_articles(s.data, "multi-turn")
        if s.model:
            generated = await R.generate_responses(ctx, cases, articles, s.model, book.spec(P.AGENT_RESPONSE),
                                                   retriever=s.retriever, k=s.k, query=s.query,
                                                   pipeline_dirs=s.pipeline_dirs)
            responses = {r["case_id"]: r for r in generated}
        else:
            responses = {c.case_id: {"case_id": c.case_id, "response": c.response, "retrieved_ids": c.retrieved_ids}
                         for c in cases if c.response is not None}
            if not responses:
                raise UsageError("the data has no responses to classify: give --model to generate them")
        classified = {r["case_id"]: r for r in await R.classify_responses(
            ctx, cases, articles, responses, s.judge_model, book.spec(P.ANSWER_CLASS))}
        rows = []
        for case in cases:
            given = responses.get(case.case_id)
            if given is None:
                continue
            verdict = classified.get(case.case_id, {})
            error = given.get("error") or verdict.get("error")
            row = {"case_id": case.case_id, "response": given.get("response"),
                   "retrieved_ids": given.get("retrieved_ids"), "label": verdict.get("label"),
                   "judge_model": s.judge_model, "judge_raw": verdict.get("judge_raw")}
            rows.append({**row, "error": error} if error else row)
        return rows, [S.score_classification(cases, _numbered(rows))]
    if task == "kb-refinement":
        gold = loaders.load_pairs(s.data)
        articles = loaders.load_articles(s.data, "kb-refinement")
        model = resolve_embedding_model(s.model)
        baseline = S.embedding_baseline(articles, gold, model)
        rows = []
        for kind, best in baseline["best"].items():
            if best is None:
                continue
            above = pairs_above(baseline["ids"], baseline["similarity"], best["threshold"])
            for pair in sorted(sorted(p) for p in above):
                rows.append({"kind": kind, "pair": pair, "threshold": best["threshold"]})
        report = S.score_pairs(gold, _numbered(rows), None, articles, baseline, _embedding_label(model))
        report.notes.append("predictions are the baseline's pairs at its best threshold per kind")
        return rows, [report]
    if task == "article-search":
        queries = _limit(loaders.load_search(s.data), s.limit)
        articles = loaders.load_articles(s.data, "article-search")
        pipeline = s.model or s.retriever
        rankings = rank(pipeline, articles, [q.query for q in queries], max(s.ks), s.pipeline_dirs)
        rows = [{"query_id": q.query_id, "ranking": r, "retriever": pipeline} for q, r in zip(queries, rankings)]
        return rows, [S.score_search(queries, _numbered(rows), s.ks, None, articles)]
    raise UsageError(f"unknown task {task!r}")

