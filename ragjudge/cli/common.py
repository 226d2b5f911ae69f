"""Options shared by commands, and the run settings (`ragjudge.api.RunSettings`) the run-level flags give."""

from typing import Annotated, Any

import typer
from typer.core import TyperArgument, TyperCommand

from ragjudge.errors import UsageError


class PlainArgsCommand(TyperCommand):
    """Typer shows a repeatable argument's type as `<list[str]>` even when a metavar names it; the metavar and
    the help say enough."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, TyperArgument) and param.metavar:
                param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]


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
CriterionOpt = Annotated[list[str] | None, typer.Option("--criterion", metavar="NAME=TEXT", help="A criterion in one "
                                                        "line, judged G-Eval's way (repeatable): NAME=\"Does the "
                                                        "answer cite the policy number?\"; its metric is NAME.")]
FormatOpt = Annotated[str, typer.Option("--format", help="table or json (json: summary on stdout, nothing else).")]
LimitOpt = Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N tasks.")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1, help="Concurrent LLM requests.")]
CacheDirOpt = Annotated[str | None, typer.Option("--cache-dir", help="Cache folder: LLM responses and embeddings "
                                                 "(default: $RAGJUDGE_CACHE_DIR or ~/.cache/ragjudge).")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", metavar="", help="Do not read or write the caches (LLM responses, "
                                                                   "embeddings).")]
EncoderBackendOpt = Annotated[str | None, typer.Option("--encoder-backend", metavar="auto|torch|onnx", help="What runs "
                                                     "every local encoder (dense retrieval, RB_alg's BERTScore): "
                                                     "onnx (ONNX Runtime on the CPU), torch, or auto (ONNX Runtime "
                                                     "when installed); default: each spec's own backend.")]
ApiBaseOpt = Annotated[str | None, typer.Option("--api-base", help="Base URL for an OpenAI-compatible server "
                                                "(vLLM, Ollama, a proxy).")]
BertModelOpt = Annotated[str | None, typer.Option("--bertscore-model", help="auto, bundled, or a model name/path "
                                                  "for RB_alg's BERTScore.")]
ConvOpt = Annotated[bool, typer.Option("--conversational-as-unanswerable", metavar="", help="Condition conversational turns as "
                                       "unanswerable, as the benchmark's scripts do (default: excluded, as in the paper).")]
JudgeDirOpt = Annotated[list[str] | None, typer.Option("--judge-dir", metavar="<dir>", help="Extra folder of judge specs (repeatable).")]
RetriesOpt = Annotated[int, typer.Option("--max-retries", min=0, help="Retries per LLM call on 429/5xx/timeouts "
                                         "(2 at most while its endpoint answers 5xx to every request).")]
TimeoutOpt = Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds per LLM request.")]

ModelsOpt = Annotated[str | None, typer.Option("--models", help="Models file (litellm router format): endpoint, "
                                               "key variable and rpm/tpm per model; default $RAGJUDGE_MODELS.")]
RpmOpt = Annotated[float | None, typer.Option("--rpm", min=0.001, help="Requests per minute per endpoint: calls are "
                                              "paced below it (and learnt from x-ratelimit headers when not given).")]
TpmOpt = Annotated[float | None, typer.Option("--tpm", min=1, help="Tokens per minute per endpoint (pacing).")]
RetrySecondsOpt = Annotated[float | None, typer.Option("--retry-seconds", min=1, help="How long one LLM request "
                                                       "may be retried through rate limits and outages "
                                                       "[default: 600].")]
NoPreflightOpt = Annotated[bool, typer.Option("--no-preflight", help="Do not check credentials and reachability of "
                                              "every model before starting.")]
RetryErrorsOpt = Annotated[bool, typer.Option("--retry-errors", help="Ask a judge again when its answer cannot be "
                                              "parsed (without it, a rerun re-reads the answer it paid for, with "
                                              "the parser as it is now, and sends nothing).")]
BatchOpt = Annotated[bool, typer.Option("--batch", help="Send the run's LLM requests through the provider's batch "
                                         "interface (openai/, azure/, litellm_proxy/ models): half the price, answers "
                                         "within 24 h; rerun the same command to collect submitted batches.")]
MinPanelOpt = Annotated[int | None, typer.Option("--min-panel", min=1, help="Panel members that must answer for "
                                                 "a panel score (default: a majority).")]

# For `ragjudge eval`: None means "not given", so a flag a bench cannot use is an error, not ignored.
EvalConcurrencyOpt = Annotated[int | None, typer.Option("--concurrency", min=1, help="Concurrent LLM requests "
                                                        "(default: 16).")]
EvalRetriesOpt = Annotated[int | None, typer.Option("--max-retries", min=0, help="Retries per LLM call on "
                                                    "429/5xx/timeouts (default: 6; 2 at most while its endpoint "
                                                    "answers 5xx to every request).")]
EvalTimeoutOpt = Annotated[float | None, typer.Option("--timeout", min=0.1, help="Seconds per LLM request "
                                                      "(default: 120).")]


def run_settings(*, limit: int | None, concurrency: int | None, cache_dir: str | None, no_cache: bool,
                 api_base: str | None, max_retries: int | None, timeout: float | None, models: str | None = None,
                 rpm: float | None = None, tpm: float | None = None, retry_seconds: float | None = None,
                 no_preflight: bool = False, retry_errors: bool = False, batch: bool = False,
                 encoder_backend: str | None = None) -> dict[str, Any]:
    """The run settings the flags give (`ragjudge.api.RunSettings`), leaving out what was not given."""
    values = {"limit": limit, "concurrency": concurrency, "cache_dir": cache_dir, "use_cache": False if no_cache
              else None, "api_base": api_base, "max_retries": max_retries, "timeout": timeout, "models": models,
              "rpm": rpm, "tpm": tpm, "retry_seconds": retry_seconds, "preflight": False if no_preflight else None,
              "retry_errors": retry_errors or None, "batch": batch or None, "encoder_backend": encoder_backend}
    return {k: v for k, v in values.items() if v is not None}
