"""The `ragjudge` command line. Each command lives in its own module; `main` turns errors into one line."""

from __future__ import annotations

import os
import sys

import typer

from ragjudge import __version__
from ragjudge.errors import RagjudgeError
from ragjudge.llm.redact import redact

app = typer.Typer(
    name="ragjudge",
    help="Evaluate RAG systems on multi-turn conversations, with judges whose quality is itself measured.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ragjudge {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
) -> None:
    """ragjudge: evaluate RAG on multi-turn conversations."""


def _register() -> None:
    from ragjudge.cli import eval_cmd, judge_cmd, retrieval_eval_cmd, retrieve_cmd

    app.command("eval")(eval_cmd.eval_command)
    app.command("judge")(judge_cmd.judge_command)
    app.command("retrieve")(retrieve_cmd.retrieve_command)
    app.command("retrieval-eval")(retrieval_eval_cmd.retrieval_eval_command)
    from ragjudge.cli import correlate_cmd, export_cmd

    app.command("correlate")(correlate_cmd.correlate_command)
    app.command("export")(export_cmd.export_command)
    from ragjudge.cli import benches_cmd, cxm_cmd

    app.add_typer(benches_cmd.app, name="benches")
    from ragjudge.cli import report_cmd

    app.command("report")(report_cmd.report_command)
    app.add_typer(cxm_cmd.app, name="cxm")


_register()


def main() -> None:
    """Console entry point: user errors are one line on stderr and exit 2, never a traceback."""
    try:
        code = app(standalone_mode=False)  # without standalone mode, click returns the exit code
    except RagjudgeError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:  # typer turns Ctrl-C inside a command into exit code 130 (below)
        code = 130
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:  # click usage errors (typer vendors its own click) and anything unexpected
        usage_errors, aborts = _click_exception_types()
        if isinstance(exc, usage_errors):
            exc.show()  # type: ignore[attr-defined]
            sys.exit(exc.exit_code)  # type: ignore[attr-defined]
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
