"""`ragjudge schema summary`: the JSON Schema of the result contract every summary follows."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from ragjudge.errors import UsageError

SCHEMAS = ("summary",)


def schema_command(name: Annotated[str, typer.Argument(help="Which schema: summary (summary.json, --format json "
                                                       "of every bench and of retrieval-eval).")]) -> None:
    """Print a JSON Schema of ragjudge's outputs."""
    if name not in SCHEMAS:
        raise UsageError(f"unknown schema {name!r} (available: {', '.join(SCHEMAS)})")
    from ragjudge.engine.summary import json_schema

    print(json.dumps(json_schema(), indent=2, ensure_ascii=False))
