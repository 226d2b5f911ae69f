"""The `ragjudge` command line: each command in its own module; `main` turns errors into one line. No module here
uses `from __future__ import annotations`: typer reads every command's parameters at each start, and string
annotations cost it a compile and an eval each (0.15 s of a 0.3 s argument error).
"""

import os
import sys

import typer

from ragjudge.errors import EnvironmentFault, RagjudgeError, RagjudgeWarning
from ragjudge.llm.redact import redact

app = typer.Typer(
    name="ragjudge",
    help="Evaluate RAG systems on multi-turn conversations, with judges whose quality is itself measured.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: wraps at 80 columns and in a pipe, never cuts an option name
)


def _version(value: bool) -> None:
    if value:
        from ragjudge.version import __version__

        typer.echo(f"ragjudge {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", metavar="", callback=_version, is_eager=True, help="Show the version."),
) -> None:
    """ragjudge: evaluate RAG on multi-turn conversations."""


def _register() -> None:
    """The commands, in the order `--help` lists them."""
    from ragjudge.cli import (benches_cmd, cache_cmd, correlate_cmd, cxm_cmd, dialsim_cmd, eval_cmd, export_cmd,
                              judge_cmd, label_sample_cmd, report_cmd, retrieval_eval_cmd, retrieve_cmd, schema_cmd)
    from ragjudge.cli.common import PlainArgsCommand

    app.command("eval")(eval_cmd.eval_command)
    app.command("judge")(judge_cmd.judge_command)
    app.command("retrieve")(retrieve_cmd.retrieve_command)
    app.command("retrieval-eval")(retrieval_eval_cmd.retrieval_eval_command)
    app.command("correlate")(correlate_cmd.correlate_command)
    app.command("export", cls=PlainArgsCommand)(export_cmd.export_command)
    app.add_typer(benches_cmd.app, name="benches")
    app.command("report", cls=PlainArgsCommand)(report_cmd.report_command)
    app.add_typer(cxm_cmd.app, name="cxm")
    app.command("schema")(schema_cmd.schema_command)
    app.command("label-sample")(label_sample_cmd.label_sample_command)
    app.add_typer(dialsim_cmd.app, name="dialsim")
    app.add_typer(cache_cmd.app, name="cache")


_register()


EXIT_OK, EXIT_TASK_ERRORS, EXIT_INPUT, EXIT_ENVIRONMENT, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
"""Exit codes: 1 some samples had errors; 2 bad input or options; 3 the machine (disk full, read-only or
vanished folder, permission denied); 130 interrupted (rerun to resume)."""


def main() -> None:
    """Console entry point: user and OS errors are one line on stderr (exit 2 or 3), never a traceback."""
    from ragjudge.llm._litellm import quiet_dropped_requests

    quiet_dropped_requests()
    _warnings_as_lines()
    try:
        code = app(standalone_mode=False)  # without standalone mode, click returns the exit code
    except EnvironmentFault as exc:
        _fail(str(exc), EXIT_ENVIRONMENT)
    except RagjudgeError as exc:  # a provider that cannot be reached says exit 3 itself (`exit_code`)
        _fail(str(exc), getattr(exc, "exit_code", EXIT_INPUT))
    except (IsADirectoryError, NotADirectoryError) as exc:  # a folder given where a file is wanted, or back
        _fail(str(EnvironmentFault.from_os_error(exc)), EXIT_INPUT)
    except BrokenPipeError:  # `ragjudge ... | head`: the reader left; nothing to report
        _quiet_broken_pipe()
    except OSError as exc:  # full disk, read-only or vanished folder, permission denied: not a bug
        if os.environ.get("RAGJUDGE_DEBUG"):
            raise
        _fail(str(EnvironmentFault.from_os_error(exc)), EXIT_ENVIRONMENT)
    except KeyboardInterrupt:  # typer turns Ctrl-C inside a command into exit code 130 (below)
        code = 130
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:  # click usage errors (typer vendors its own click) and anything unexpected
        usage_errors, aborts = _click_exception_types()
        if isinstance(exc, usage_errors):
            _fail(_usage_line(exc), exc.exit_code)  # type: ignore[attr-defined]
        if not isinstance(exc, aborts):
            if os.environ.get("RAGJUDGE_DEBUG"):
                raise
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            typer.echo(f"error: internal error: {type(exc).__name__}: {redact(first)[:300]} "
                       "(this is a bug; set RAGJUDGE_DEBUG=1 to see the traceback)", err=True)
            sys.exit(1)
        code = 130
    if code == 130:
        typer.echo("interrupted: finished work is saved; rerun the same command to resume", err=True)
    sys.exit(code if isinstance(code, int) else 0)


def _warnings_as_lines() -> None:
    """ragjudge's own warnings (RagjudgeWarning) are one `warning:` line, like every other warning it prints,
    not Python's `file.py:117: EmbeddingCacheWarning: ...` followed by a line of source."""
    import warnings

    if getattr(warnings.showwarning, "ragjudge_lines", False):
        return
    fallback = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: object = None,
             line: str | None = None) -> None:
        if issubclass(category, RagjudgeWarning):
            typer.echo("warning: " + " ".join(redact(str(message)).split()), err=True)
        else:
            fallback(message, category, filename, lineno, file, line)  # type: ignore[arg-type]

    show.ragjudge_lines = True  # type: ignore[attr-defined]
    warnings.showwarning = show


def _usage_line(exc: Exception) -> str:
    """Click's usage error (a mistyped option, a value out of range) as one line naming the help to read,
    instead of its three (usage, "Try ...", a blank line, the error)."""
    message = exc.format_message()  # type: ignore[attr-defined]
    ctx = getattr(exc, "ctx", None)
    names: list[str] = []
    while ctx is not None and ctx.parent is not None:
        names.insert(0, ctx.info_name)
        ctx = ctx.parent
    return f"{message} (see ragjudge {' '.join([*names, '--help'])})"


def _fail(message: str, code: int) -> None:
    """One line, whatever the message holds (a library's multi-line text, a value with newlines)."""
    typer.echo("error: " + " ".join(redact(message).split()), err=True)
    sys.exit(code)


def _quiet_broken_pipe() -> None:
    try:  # stdout is gone: point it at devnull so the interpreter's final flush does not complain
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(EXIT_OK)


def _click_exception_types() -> tuple[tuple[type, ...], tuple[type, ...]]:
    """(usage errors, aborts): typer >= 0.29 vendors its own click, older versions use click itself."""
    import click

    usage: list[type] = [click.ClickException]
    aborts: list[type] = [click.Abort, typer.Abort]
    try:
        from typer._click import exceptions as vendored  # type: ignore[import-not-found]

        usage.append(vendored.ClickException)
    except (ImportError, AttributeError):
        pass
    return tuple(usage), tuple(aborts)
