"""`ragjudge schema summary|sample`: the JSON Schemas of the result contract every summary follows and of the
sample log every run writes."""

import json
from typing import Annotated

import typer

from ragjudge.errors import UsageError

SCHEMAS = ("summary", "sample")


def schema_command(name: Annotated[str, typer.Argument(help="Which schema: summary (summary.json, --format json "
                                                       "of every bench and of retrieval-eval) or sample (each line "
                                                       "of samples.jsonl).")]) -> None:
    """Print a JSON Schema of ragjudge's outputs."""
    if name not in SCHEMAS:
        raise UsageError(f"unknown schema {name!r} (available: {', '.join(SCHEMAS)})")
    if name == "sample":
        from ragjudge.formats.samples import json_schema
    else:
        from ragjudge.engine.summary import json_schema

    print(json.dumps(json_schema(), indent=2, ensure_ascii=False))
