"""The plugin's command-line and ini options, resolved once per session into `Settings`: command-line values win;
paths are relative to pytest's start directory on the command line, to the ini file in it.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest

from ragjudge.engine.run_settings import SETTINGS, Setting

DEFAULT_THRESHOLDS: dict[str, float] = {"rb_alg": 0.4, "rb_llm": 0.6, "rl_f": 0.7, "recall": 1.0}
"""Used when neither the assertion nor the configuration gives a threshold."""
DEFAULT_RECALL_K = 5
RECALL = "recall"
"""The retrieval pseudo-judge: Recall@k of the expected passage ids among the retrieved ones."""

_SPLIT = re.compile(r"[\s,]+")
_METAVAR = {int: "N", float: "NUMBER"}
PLUGIN_SETTINGS = [s for s in SETTINGS if (s.llm if s.plugin is None else s.plugin)]
"""The run settings the plugin takes (`--ragjudge-cache-dir`, ini `ragjudge_cache_dir`), from their declaration."""


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
    run: Mapping[str, Any] = field(default_factory=dict)
    """The other run settings given (`--ragjudge-max-retries 3`: {"max_retries": 3}); absent: the default."""
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
    group.addoption("--ragjudge-recall-k", dest="ragjudge_recall_k", type=int, metavar="K",
                    help=f"default k of Recall@k (default {DEFAULT_RECALL_K}). (ini: ragjudge_recall_k)")

    parser.addini("ragjudge_judge_models", "ragjudge: judge model(s), comma- or space-separated", default="")
    parser.addini("ragjudge_offline", "ragjudge: never call an LLM (true/false)", type="bool", default=False)
    parser.addini("ragjudge_thresholds", "ragjudge: default thresholds, e.g. 'rb_alg=0.4 rl_f=0.7'", default="")
    parser.addini("ragjudge_report", "ragjudge: JSON report path (relative to the ini file)", default="")
    parser.addini("ragjudge_bertscore_model", "ragjudge: RB_alg's BERTScore model (auto, bundled, name/path)",
                  default="")
    parser.addini("ragjudge_judge_dirs", "ragjudge: extra judge spec folders (relative to the ini file)",
                  type="paths", default=[])
    parser.addini("ragjudge_recall_k", "ragjudge: default k of Recall@k", default="")
    for setting in PLUGIN_SETTINGS:
        ini, switch = f"ragjudge_{setting.name}", setting.type is bool
        group.addoption(_option(setting), dest=ini, help=f"{setting.flag_help} (ini: {ini})",
                        **{"action": "store_const", "const": not setting.default} if switch else
                        {"metavar": _metavar(setting)})
        parser.addini(ini, f"ragjudge: {setting.help}", type="bool" if switch else None,
                      default=setting.default if switch else "")


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

    run = {s.name: value for s in PLUGIN_SETTINGS if (value := _run_setting(config, s)) is not None}
    return Settings(
        judge_models=models,
        offline=offline,
        cache_dir=run.pop("cache_dir", None),
        api_base=run.pop("api_base", None),
        thresholds=thresholds,
        report=path(opt.ragjudge_report, "ragjudge_report"),
        bertscore_model=(opt.ragjudge_bertscore_model or str(config.getini("ragjudge_bertscore_model")).strip()
                         or None),
        encoder_backend=run.pop("encoder_backend", None),
        judge_dirs=tuple(Path(p) for p in config.getini("ragjudge_judge_dirs")),
        recall_k=recall_k,
        verbosity=config.get_verbosity(),
        run=run,
    )


def _option(setting: Setting) -> str:
    return "--ragjudge-" + setting.cli_flag.removeprefix("--")


def _metavar(setting: Setting) -> str:
    return "|".join(_choices(setting)) or ("PATH" if setting.path else _METAVAR.get(setting.kind, "TEXT"))


def _choices(setting: Setting) -> tuple[str, ...]:
    return get_args(setting.kind) if get_origin(setting.kind) is Literal else ()


def _run_setting(config: pytest.Config, setting: Setting) -> Any:
    """A run setting from the command line, else the ini file (None: from neither), checked as the engine would."""
    ini = f"ragjudge_{setting.name}"
    given = getattr(config.option, ini)
    if setting.type is bool:
        return bool(config.getini(ini)) if given is None else given
    text, source = (given, _option(setting)) if given else (str(config.getini(ini)).strip(), f"ini {ini}")
    if not text:
        return None
    if setting.path:
        return _cli_path(config, text) if given else _ini_path(config, text)
    if choices := _choices(setting):
        if text.strip().lower() not in choices:
            raise pytest.UsageError(f"ragjudge {setting.name.replace('_', ' ')}: {text!r} is not one of "
                                    f"{', '.join(choices)}")
        return text.strip().lower()
    if setting.kind not in (int, float):
        return text
    try:
        value = setting.kind(text)
    except ValueError:
        kind = "an integer" if setting.kind is int else "a number"
        raise pytest.UsageError(f"{source}: {text!r} is not {kind}") from None
    if (setting.ge is not None and value < setting.ge) or (setting.gt is not None and value <= setting.gt):
        bound = f">= {setting.ge:g}" if setting.ge is not None else f"> {setting.gt:g}"
        raise pytest.UsageError(f"{source} must be {bound}, got {text}")
    return value
