"""Options shared by commands, and the run-level flags, derived from the run settings' one declaration
(`engine.run_settings`), with the settings (`ragjudge.api.RunSettings`) they give."""

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, Literal, get_args, get_origin

import typer
from typer.core import TyperArgument, TyperCommand

from ragjudge.engine.run_settings import SETTINGS, flag, settings as declared
from ragjudge.errors import UsageError


class PlainArgsCommand(TyperCommand):
    """Typer shows a repeatable argument's type as `<list[str]>` even when a metavar names it; the metavar and
    the help say enough."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, TyperArgument) and param.metavar:
                param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]


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
BertModelOpt = Annotated[str | None, typer.Option("--bertscore-model", help="auto, bundled, or a model name/path "
                                                  "for RB_alg's BERTScore.")]
ConvOpt = Annotated[bool, typer.Option("--conversational-as-unanswerable", metavar="", help="Condition conversational turns as "
                                       "unanswerable, as the benchmark's scripts do (default: excluded, as in the paper).")]
JudgeDirOpt = Annotated[list[str] | None, typer.Option("--judge-dir", metavar="<dir>", help="Extra folder of judge specs (repeatable).")]
MinPanelOpt = Annotated[int | None, typer.Option("--min-panel", min=1, help="Panel members that must answer for "
                                                 "a panel score (default: a majority).")]


def _param(name: str) -> str:
    """The command parameter behind a run setting's flag: `--no-cache` is `no_cache`."""
    return flag(name).removeprefix("--").replace("-", "_")


def setting_option(name: str) -> Any:
    """A run setting's flag, from its declaration: a switch (default False) or a value (default None: not given, so
    a flag a bench cannot use is an error, not ignored); its bound, help and default as declared."""
    setting = declared()[name]
    if setting.type is bool:
        return Annotated[bool, typer.Option(setting.cli_flag, metavar="", help=setting.flag_help)]
    kind = setting.kind
    metavar = "|".join(get_args(kind)) if get_origin(kind) is Literal else None  # checked with the others
    return Annotated[(kind if kind in (int, float) else str) | None, typer.Option(
        setting.cli_flag, min=setting.ge, metavar=metavar, show_default=False, help=setting.flag_help)]


def run_settings(**flags: Any) -> dict[str, Any]:
    """The run settings (`ragjudge.api.RunSettings`) the flags give, by parameter name (`no_cache=True` is
    `use_cache=False`), leaving out what was not given."""
    out = {}
    for setting in SETTINGS:
        value = flags.pop(_param(setting.name), None)
        if isinstance(value, bool):  # a switch is given when it is on, and says the opposite of its default
            value = (not setting.default) if value else None
        if value is not None:
            out[setting.name] = value
    if flags:
        raise TypeError(f"not run settings: {', '.join(flags)}")
    return out


def with_run_settings(command: Callable[..., None]) -> Callable[..., None]:
    """Give `command` a flag for every run setting (typer reads the signature); it receives the ones given as
    `settings`, ready for the API. A setting declared in `engine.run_settings` appears here with no other change."""
    names = {_param(name): name for name in declared()}

    @functools.wraps(command)
    def run(**kwargs: Any) -> None:
        flags = {param: kwargs.pop(param) for param in names}
        command(**kwargs, settings=run_settings(**flags))

    own = [p for p in inspect.signature(command).parameters.values() if p.name != "settings"]
    added = [inspect.Parameter(param, inspect.Parameter.KEYWORD_ONLY, annotation=setting_option(name),
                               default=False if declared()[name].type is bool else None)
             for param, name in names.items()]
    run.__signature__ = inspect.signature(command).replace(parameters=own + added)  # type: ignore[attr-defined]
    return run


LimitOpt = setting_option("limit")
ConcurrencyOpt = setting_option("concurrency")
CacheDirOpt = setting_option("cache_dir")
NoCacheOpt = setting_option("use_cache")
EncoderBackendOpt = setting_option("encoder_backend")
ApiBaseOpt = setting_option("api_base")
ModelsOpt = setting_option("models")
RpmOpt = setting_option("rpm")
TpmOpt = setting_option("tpm")
NoPreflightOpt = setting_option("preflight")
