"""The plugin's command-line and ini options, resolved once per session into `Settings`.

Command-line values win over ini values. Paths given on the command line are relative to the
directory pytest was started in; paths in the ini file are relative to the ini file.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

DEFAULT_THRESHOLDS: dict[str, float] = {"rb_alg": 0.4, "rb_llm": 0.6, "rl_f": 0.7, "recall": 1.0}
"""Used when neither the assertion nor the configuration gives a threshold."""
DEFAULT_RECALL_K = 5
RECALL = "recall"
"""The retrieval pseudo-judge: Recall@k of the expected passage ids among the retrieved ones."""

_SPLIT = re.compile(r"[\s,]+")


@dataclass(frozen=True)
class Settings:
    judge_models: tuple[str, ...] = ()
    offline: bool = False
    cache_dir: Path | None = None
    """None: ragjudge's default ($RAGJUDGE_CACHE_DIR or ~/.cache/ragjudge)."""
    api_base: str | None = None
    thresholds: Mapping[str, float] = field(default_factory=dict)
    """Configured thresholds only; `threshold()` falls back to DEFAULT_THRESHOLDS."""
    report: Path | None = None
    bertscore_model: str | None = None
    encoder_backend: str | None = None
    """What runs RB_alg's BERTScore model: auto, torch or onnx (None: the spec's own, auto)."""
    judge_dirs: tuple[Path, ...] = ()
    recall_k: int = DEFAULT_RECALL_K
    verbosity: int = 0

    @property
    def llm_unavailable(self) -> str | None:
        """Why LLM judges cannot run in this session, or None when they can."""
        if self.offline:
            return "offline mode (--ragjudge-offline): LLM judges are never called"
        if not self.judge_models:
            return ("no judge model configured: pass --ragjudge-judge-models MODEL[,MODEL...] "
                    "or set ragjudge_judge_models in the ini file")
        return None

    def threshold(self, judge: str) -> float | None:
        return self.thresholds.get(judge, DEFAULT_THRESHOLDS.get(judge))


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragjudge", "ragjudge: judge RAG answers in tests")
    group.addoption("--ragjudge-judge-models", dest="ragjudge_judge_models", metavar="MODEL[,MODEL...]",
                    help="litellm judge model(s), comma-separated; panel judges (rb_llm) ask all and take the "
                         "median, other LLM judges the first. Without one, LLM judges skip. "
                         "(ini: ragjudge_judge_models)")
    group.addoption("--ragjudge-offline", dest="ragjudge_offline", action="store_true", default=None,
                    help="never call an LLM: LLM judges skip, algorithmic ones (rb_alg, idk_lexical, recall) "
                         "still run. (ini: ragjudge_offline)")
    group.addoption("--ragjudge-cache-dir", dest="ragjudge_cache_dir", metavar="DIR",
                    help="LLM response cache folder; an unchanged suite re-runs with no LLM call "
                         "(default: $RAGJUDGE_CACHE_DIR or ~/.cache/ragjudge). (ini: ragjudge_cache_dir)")
    group.addoption("--ragjudge-api-base", dest="ragjudge_api_base", metavar="URL",
                    help="base URL of an OpenAI-compatible server (vLLM, Ollama, a proxy). API keys come from "
                         "the provider's environment variables or RAGJUDGE_API_KEY. (ini: ragjudge_api_base)")
    group.addoption("--ragjudge-threshold", dest="ragjudge_threshold", action="append", default=[],
                    metavar="JUDGE=VALUE",
                    help="default pass threshold of a judge, repeatable (built in: "
                         + " ".join(f"{k}={v:g}" for k, v in DEFAULT_THRESHOLDS.items())
                         + "). (ini: ragjudge_thresholds)")
    group.addoption("--ragjudge-report", dest="ragjudge_report", metavar="PATH",
                    help="write every evaluation, score, rationale and a per-judge summary to this JSON file. "
                         "(ini: ragjudge_report)")
    group.addoption("--ragjudge-bertscore-model", dest="ragjudge_bertscore_model", metavar="MODEL",
                    help="RB_alg's BERTScore model: auto, bundled, or a model name/path. "
                         "(ini: ragjudge_bertscore_model)")
    group.addoption("--ragjudge-encoder-backend", dest="ragjudge_encoder_backend", metavar="auto|torch|onnx",
                    help="what runs RB_alg's BERTScore model: onnx (ONNX Runtime on the CPU), torch, or auto "
                         "(ONNX Runtime when installed). (ini: ragjudge_encoder_backend)")
    group.addoption("--ragjudge-recall-k", dest="ragjudge_recall_k", type=int, metavar="K",
                    help=f"default k of Recall@k (default {DEFAULT_RECALL_K}). (ini: ragjudge_recall_k)")

    parser.addini("ragjudge_judge_models", "ragjudge: judge model(s), comma- or space-separated", default="")
    parser.addini("ragjudge_offline", "ragjudge: never call an LLM (true/false)", type="bool", default=False)
    parser.addini("ragjudge_cache_dir", "ragjudge: LLM response cache folder (relative to the ini file)",
                  default="")
    parser.addini("ragjudge_api_base", "ragjudge: base URL of an OpenAI-compatible server", default="")
    parser.addini("ragjudge_thresholds", "ragjudge: default thresholds, e.g. 'rb_alg=0.4 rl_f=0.7'", default="")
    parser.addini("ragjudge_report", "ragjudge: JSON report path (relative to the ini file)", default="")
    parser.addini("ragjudge_bertscore_model", "ragjudge: RB_alg's BERTScore model (auto, bundled, name/path)",
                  default="")
    parser.addini("ragjudge_encoder_backend", "ragjudge: what runs RB_alg's BERTScore model (auto, torch, onnx)",
                  default="")
    parser.addini("ragjudge_judge_dirs", "ragjudge: extra judge spec folders (relative to the ini file)",
                  type="paths", default=[])
    parser.addini("ragjudge_recall_k", "ragjudge: default k of Recall@k", default="")


def parse_thresholds(entries: list[str], source: str) -> dict[str, float]:
    """`["rb_alg=0.4 rl_f=0.7", "recall=1"]` -> {"rb_alg": 0.4, "rl_f": 0.7, "recall": 1.0}."""
    out: dict[str, float] = {}
    for entry in entries:
        for token in _SPLIT.split(entry.strip()):
            if not token:
                continue
            name, sep, value = token.partition("=")
            try:
                if not sep or not name:
                    raise ValueError
                out[name.strip()] = float(value)
            except ValueError:
                raise pytest.UsageError(f"{source}: {token!r} is not JUDGE=NUMBER (e.g. rl_f=0.7)") from None
    return out


def _names(value: str) -> tuple[str, ...]:
    return tuple(v for v in _SPLIT.split(value.strip()) if v)


def _ini_path(config: pytest.Config, value: str) -> Path:
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    return (base / value).resolve()


def _cli_path(config: pytest.Config, value: str) -> Path:
    return (config.invocation_params.dir / value).resolve()


def settings_from(config: pytest.Config,
                  judge_names: list[str] | Callable[[], list[str]] | None = None) -> Settings:
    """Resolve options; `judge_names` (when given) validates the threshold names. A callable is only
    called when thresholds are configured, so suites without any do not pay for reading the judge specs."""
    opt = config.option
    models = _names(opt.ragjudge_judge_models or "") or _names(str(config.getini("ragjudge_judge_models")))
    offline = bool(opt.ragjudge_offline) or bool(config.getini("ragjudge_offline"))

    def path(option: str | None, ini_name: str) -> Path | None:
        if option:
            return _cli_path(config, option)
        ini_value = str(config.getini(ini_name)).strip()
        return _ini_path(config, ini_value) if ini_value else None

    thresholds = parse_thresholds([str(config.getini("ragjudge_thresholds"))], "ini ragjudge_thresholds")
    thresholds.update(parse_thresholds(list(opt.ragjudge_threshold or []), "--ragjudge-threshold"))
    if judge_names is not None and thresholds:
        known = set(judge_names() if callable(judge_names) else judge_names) | {RECALL}
        unknown = sorted(set(thresholds) - known)
        if unknown:
            raise pytest.UsageError(f"ragjudge thresholds: unknown judge(s) {', '.join(unknown)} "
                                    f"(available: {', '.join(sorted(known))})")

    recall_k = opt.ragjudge_recall_k
    if recall_k is None:
        ini_k = str(config.getini("ragjudge_recall_k")).strip()
        try:
            recall_k = int(ini_k) if ini_k else DEFAULT_RECALL_K
        except ValueError:
            raise pytest.UsageError(f"ini ragjudge_recall_k: {ini_k!r} is not an integer") from None
    if recall_k < 1:
        raise pytest.UsageError(f"ragjudge recall k must be 1 or more, got {recall_k}")

    return Settings(
        judge_models=models,
        offline=offline,
        cache_dir=path(opt.ragjudge_cache_dir, "ragjudge_cache_dir"),
        api_base=(opt.ragjudge_api_base or str(config.getini("ragjudge_api_base")).strip() or None),
        thresholds=thresholds,
        report=path(opt.ragjudge_report, "ragjudge_report"),
        bertscore_model=(opt.ragjudge_bertscore_model or str(config.getini("ragjudge_bertscore_model")).strip()
                         or None),
        encoder_backend=_backend(opt.ragjudge_encoder_backend or str(config.getini("ragjudge_encoder_backend")).strip()
                                 or None),
        judge_dirs=tuple(Path(p) for p in config.getini("ragjudge_judge_dirs")),
        recall_k=recall_k,
        verbosity=config.get_verbosity(),
    )


def _backend(value: str | None) -> str | None:
    from ragjudge.embeddings.onnx_encoder import check_backend
    from ragjudge.errors import UsageError

    try:
        return check_backend(value, "ragjudge encoder backend") if value is not None else None
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
