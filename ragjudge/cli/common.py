"""Options shared by commands, and turning them into RunOptions."""

from __future__ import annotations

from typing import Annotated

import typer

from ragjudge.errors import UsageError
from ragjudge.evaluation.session import RunOptions


def split_list(value: str | None) -> list[str] | None:
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise UsageError("an empty list was given")
    return items


JudgesOpt = Annotated[str | None, typer.Option("--judges", help="Comma-separated judges (default: idk_lexical,rb_alg "
                                               "offline; idk,rb_alg,rb_llm,rl_f with --judge-models).")]
JudgeModelsOpt = Annotated[str | None, typer.Option("--judge-models", help="Comma-separated litellm model names; "
                                                    "panel judges (rb_llm) use all and take the median, others the first.")]
FormatOpt = Annotated[str, typer.Option("--format", help="table or json (json: summary on stdout, nothing else).")]
LimitOpt = Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N tasks.")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1, help="Concurrent LLM requests.")]
CacheDirOpt = Annotated[str | None, typer.Option("--cache-dir", help="LLM response cache folder "
                                                 "(default: $RAGJUDGE_CACHE_DIR or ~/.cache/ragjudge).")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the LLM response cache.")]
ApiBaseOpt = Annotated[str | None, typer.Option("--api-base", help="Base URL for an OpenAI-compatible server "
                                                "(vLLM, Ollama, a proxy).")]
BertModelOpt = Annotated[str | None, typer.Option("--bertscore-model", help="auto, bundled, or a model name/path "
                                                  "for RB_alg's BERTScore.")]
ConvOpt = Annotated[bool, typer.Option("--conversational-as-unanswerable", help="Condition conversational turns as "
                                       "unanswerable, as the benchmark's scripts do (default: excluded, as in the paper).")]
JudgeDirOpt = Annotated[list[str] | None, typer.Option("--judge-dir", help="Extra folder of judge specs (repeatable).")]
RetriesOpt = Annotated[int, typer.Option("--max-retries", min=0, help="Retries per LLM call on 429/5xx/timeouts.")]
TimeoutOpt = Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds per LLM request.")]


def run_options(*, judges: str | None, judge_models: str | None, fmt: str, concurrency: int, cache_dir: str | None,
                no_cache: bool, api_base: str | None, bertscore_model: str | None, conversational: bool,
                judge_dirs: list[str] | None, max_retries: int, timeout: float) -> RunOptions:
    if fmt not in ("table", "json"):
        raise UsageError(f"--format must be table or json, got {fmt!r}")
    return RunOptions(
        judges=split_list(judges), judge_models=split_list(judge_models) or [], judge_dirs=judge_dirs or [],
        bertscore_model=bertscore_model, concurrency=concurrency, max_retries=max_retries, timeout=timeout,
        cache_dir=cache_dir, use_cache=not no_cache, api_base=api_base,
        conversational_as_unanswerable=conversational, show_progress=True,
    )
