"""The command line answers at once (issue 36; figures: benchmarks/bench_startup.py): what keeps it so."""

from __future__ import annotations

from pathlib import Path

CLI = Path(__file__).resolve().parents[1] / "ragjudge" / "cli"


def test_no_cli_module_postpones_its_annotations() -> None:
    """typer resolves every command's parameters at each start: postponed (string) annotations cost a compile and
    an eval each, half of an argument error's time."""
    postponed = [p.name for p in sorted(CLI.glob("*.py"))
                 if "from __future__ import annotations" in p.read_text(encoding="utf-8").splitlines()]
    assert postponed == []
