"""The run settings, declared once: `SETTINGS` holds each one's name, type, default, bounds and help, and everything
else derives from it: the engine's validated options (`context.EngineOptions`), the command line's flags
(`cli/common.py`), the API's typed keywords (`ragjudge.api.RunSettings`), the engine's checks
(`prepare.engine_options`), run.json's `engine` record and the pytest plugin's options. Adding a setting is one
line here plus its use (docs/extending.md). Plain data, no pydantic model: the command line reads it at start, and
stays instant."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from ragjudge.defaults import DEFAULT_CONCURRENCY, DEFAULT_MAX_RETRIES, DEFAULT_RETRY_SECONDS, DEFAULT_TIMEOUT


@dataclass(frozen=True)
class Setting:
    """One run setting, the same for every bench."""

    name: str
    type: Any
    """Its values' type: the flag parses the type it names beside None (int, float, else text); a Literal's values
    are its choices, and its metavar."""
    default: Any
    help: str
    """The flag's help (with the default) and the engine option's description: one sentence, or a few, that say
    what it does to the run."""
    ge: float | None = None
    gt: float | None = None
    """Bounds: the engine checks both, the command line `ge` as it parses."""
    llm: bool = True
    """It only means something to a run that calls an LLM (or encodes through a cache): given to a bench that
    calls none, it is an error, never silently ignored."""
    recorded: bool = True
    """Written in run.json's `engine` record (not a machine's own path, which says nothing about the run)."""
    flag: str | None = None
    """The command-line flag when not `--name-with-dashes` (a switch that is on by default: `--no-...`)."""
    path: bool = False
    """A file or folder: the API also takes a `Path`; it is kept as text."""
    plugin: bool | None = None
    """The pytest plugin takes it too (`--ragjudge-max-retries`, ini `ragjudge_max_retries`; None: when `llm`): not
    one that means a whole run (`limit`, `batch`), nor a part of the gateway the plugin leaves at its default."""
    @property
    def kind(self) -> Any:
        """Its values' type beside None (a Literal: its choices)."""
        return next((t for t in get_args(self.type) or (self.type,) if t is not type(None)), str)

    @property
    def flag_help(self) -> str:
        """A flag's help: a switch on by default says what turning it off does; a value names its default."""
        if self.type is bool:
            return f"Do not {self.help[:1].lower()}{self.help[1:]}" if self.default is True else self.help
        default = self.default if not isinstance(self.default, float) else f"{self.default:g}"
        return self.help if self.default is None else f"{self.help} (default: {default})"

    @property
    def cli_flag(self) -> str:
        return self.flag or ("--no-" if self.default is True else "--") + self.name.replace("_", "-")


SETTINGS: tuple[Setting, ...] = (
    Setting("concurrency", int, DEFAULT_CONCURRENCY, "Concurrent LLM requests per endpoint at the start: more while "
            "answers come back as fast, fewer on 429s or slowing answers.", ge=1),
    Setting("fixed_concurrency", bool, False, "Make --concurrency a hard cap on LLM requests in flight that never "
            "moves (for a provider that punishes bursts) instead of a starting point."),
    Setting("max_retries", int, DEFAULT_MAX_RETRIES, "Retries per LLM call on 429/5xx/timeouts (2 at most while its "
            "endpoint answers 5xx to every request).", ge=0),
    Setting("timeout", float, DEFAULT_TIMEOUT, "Seconds per LLM request.", ge=0.1),
    Setting("cache_dir", str | None, None, "Cache folder: LLM responses and embeddings (default: $RAGJUDGE_CACHE_DIR "
            "or ~/.cache/ragjudge).", recorded=False, path=True),
    Setting("use_cache", bool, True, "Use the caches (LLM responses, embeddings).", flag="--no-cache"),
    Setting("encoder_backend", Literal["auto", "torch", "onnx"] | None, None, "What runs every local encoder (dense "
            "retrieval, RB_alg's BERTScore): onnx (ONNX Runtime on the CPU), torch, or auto (ONNX Runtime when "
            "installed); default: each spec's own backend.", llm=False, plugin=True),
    Setting("api_base", str | None, None, "Base URL of an OpenAI-compatible server (vLLM, Ollama, a proxy)."),
    Setting("models", str | None, None, "Models file (litellm router format): endpoint, key variable and rpm/tpm "
            "per model; default $RAGJUDGE_MODELS.", path=True, plugin=False),
    Setting("rpm", float | None, None, "Requests per minute per endpoint: calls are paced below it (and learnt from "
            "x-ratelimit headers when not given).", gt=0, plugin=False),
    Setting("tpm", float | None, None, "Tokens per minute per endpoint (pacing).", ge=1, plugin=False),
    Setting("retry_seconds", float, DEFAULT_RETRY_SECONDS, "How long one LLM request may be retried through rate "
            "limits and outages.", ge=1),
    Setting("preflight", bool, True, "Check credentials and reachability of every model before starting.",
            plugin=False),
    Setting("retry_errors", bool, False, "Ask a judge again when its answer cannot be parsed (without it, a rerun "
            "re-reads the answer it paid for, with the parser as it is now, and sends nothing)."),
    Setting("batch", bool, False, "Send the run's LLM requests through the provider's batch interface (openai/, "
            "azure/, litellm_proxy/ models): half the price, answers within 24 h; rerun the same command to collect "
            "submitted batches.", plugin=False),
    Setting("limit", int | None, None, "Only the first N samples.", ge=1, llm=False),
)
"""Every run setting, in the order the command line's help lists them."""


def settings() -> dict[str, Setting]:
    """The run settings by name."""
    return {s.name: s for s in SETTINGS}


def llm_settings() -> list[str]:
    """The settings that only mean something to a run that calls an LLM."""
    return [s.name for s in SETTINGS if s.llm]


def flag(name: str) -> str:
    """A setting's command-line flag: `--max-retries`; a switch that is on by default says the opposite,
    `--no-preflight`."""
    return settings()[name].cli_flag


def record(options: Any) -> dict[str, Any]:
    """run.json's `engine` record: the recorded settings' values (`options`: an EngineOptions)."""
    return options.model_dump(mode="json", include={s.name for s in SETTINGS if s.recorded})
