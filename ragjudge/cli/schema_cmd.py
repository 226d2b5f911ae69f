"""`ragjudge schema summary|sample|labels`: the JSON Schemas of the result contract every summary follows, of the
sample log every run writes and of the labels a person gives (`ragjudge.labels/1`)."""

import json
from typing import Annotated

import typer

from ragjudge.errors import UsageError

SCHEMAS = ("summary", "sample", "labels")


def schema_command(name: Annotated[str, typer.Argument(help="Which schema: summary (summary.json, --format json "
                                                       "of every bench and of retrieval-eval), sample (each line "
                                                       "of samples.jsonl) or labels (each line of a labels file).")]) -> None:
    """Print a JSON Schema of ragjudge's outputs."""
    if name not in SCHEMAS:
        raise UsageError(f"unknown schema {name!r} (available: {', '.join(SCHEMAS)})")
    if name == "sample":
        from ragjudge.formats.samples import json_schema
    elif name == "labels":
        from ragjudge.trust.labels import json_schema
    else:
        from ragjudge.engine.summary import json_schema

    print(json.dumps(json_schema(), indent=2, ensure_ascii=False))
