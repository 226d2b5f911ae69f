"""Options shared by commands, and turning the run-level ones into EngineOptions."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ragjudge.engine.context import EngineOptions
from ragjudge.errors import UsageError


def split_list(value: str | None) -> list[str] | None:
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise UsageError("an empty list was given")
    return items


def check_format(fmt: str) -> str:
    if fmt not in ("table", "json"):
        raise UsageError(f"--format must be table or json, got {fmt!r}")
    return fmt


JudgesOpt = Annotated[str | None, typer.Option("--judges", help="Comma-separated judges (default: idk_lexical,rb_alg "
                                               "offline; idk,rb_alg,rb_llm,rl_f with --judge-models).")]
JudgeModelsOpt = Annotated[str | None, typer.Option("--judge-models", help="Comma-separated litellm model names; "
                                                    "panel judges (rb_llm) use all and take the median, others the first.")]
FormatOpt = Annotated[str, typer.Option("--format", help="table or json (json: summary on stdout, nothing else).")]
LimitOpt = Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N tasks.")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1, help="Concurrent LLM requests.")]
CacheDirOpt = Annotated[str | None, typer.Option("--cache-dir", help="LLM response cache folder "
                                                 "(default: $RAGJUDGE_CACHE_DIR or ~/.cache/ragjudge).")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", metavar="", help="Do not read or write the LLM response cache.")]
ApiBaseOpt = Annotated[str | None, typer.Option("--api-base", help="Base URL for an OpenAI-compatible server "
                                                "(vLLM, Ollama, a proxy).")]
BertModelOpt = Annotated[str | None, typer.Option("--bertscore-model", help="auto, bundled, or a model name/path "
                                                  "for RB_alg's BERTScore.")]
ConvOpt = Annotated[bool, typer.Option("--conversational-as-unanswerable", metavar="", help="Condition conversational turns as "
                                       "unanswerable, as the benchmark's scripts do (default: excluded, as in the paper).")]
JudgeDirOpt = Annotated[list[str] | None, typer.Option("--judge-dir", metavar="<dir>", help="Extra folder of judge specs (repeatable).")]
RetriesOpt = Annotated[int, typer.Option("--max-retries", min=0, help="Retries per LLM call on 429/5xx/timeouts.")]
TimeoutOpt = Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds per LLM request.")]

# For `ragjudge eval`: None means "not given", so a flag a bench cannot use is an error, not ignored.
EvalConcurrencyOpt = Annotated[int | None, typer.Option("--concurrency", min=1, help="Concurrent LLM requests "
                                                        "(default: 8).")]
EvalRetriesOpt = Annotated[int | None, typer.Option("--max-retries", min=0, help="Retries per LLM call on "
                                                    "429/5xx/timeouts (default: 6).")]
EvalTimeoutOpt = Annotated[float | None, typer.Option("--timeout", min=0.1, help="Seconds per LLM request "
                                                      "(default: 120).")]


def engine_options(*, bench_name: str, uses_llm: bool, limit: int | None, concurrency: int | None,
                   cache_dir: str | None, no_cache: bool, api_base: str | None, max_retries: int | None,
                   timeout: float | None) -> EngineOptions:
    """The run's options; LLM flags given to a bench that never calls an LLM are an error."""
    llm_flags = {"--concurrency": concurrency, "--cache-dir": cache_dir, "--no-cache": no_cache or None,
                 "--api-base": api_base, "--max-retries": max_retries, "--timeout": timeout}
    given = [flag for flag, value in llm_flags.items() if value is not None]
    if given and not uses_llm:
        raise UsageError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} not used by bench {bench_name} "
                         "(it calls no LLM)")
    values: dict[str, Any] = {"limit": limit, "cache_dir": cache_dir, "use_cache": not no_cache, "api_base": api_base}
    for key, value in (("concurrency", concurrency), ("max_retries", max_retries), ("timeout", timeout)):
        if value is not None:
            values[key] = value
    return EngineOptions(**values)
