"""The retrieval pipeline's flags, one declaration for every command that runs a pipeline (`eval`, `retrieve`)."""

from pathlib import Path
from typing import Annotated, Any

import typer

HELP = {
    "--pipeline": "Retrieval pipeline spec: a name (`pipelines/`) or a path to a spec YAML file.",
    "--corpus": "BEIR corpus JSONL ({_id, title, text} a line) the pipeline retrieves from: its index is built once "
                "and reused. Optional only for an existing Elasticsearch index.",
    "--pipeline-dir": "Extra folder of pipeline specs (repeatable); overrides built-in specs of the same name.",
    "--index-dir": "Where indexes are kept and reused (default: <cache dir>/indexes).",
    "--rewrite-model": "litellm model for a pipeline whose query strategy is rewrite (overrides the spec's "
                       "query.model).",
}


def _flag(name: str, **extra: Any) -> Any:
    return typer.Option(name, help=HELP[name], **extra)


PipelineOpt = Annotated[str, _flag("--pipeline")]
OptionalPipelineOpt = Annotated[str | None, _flag("--pipeline")]
CorpusOpt = Annotated[Path | None, _flag("--corpus")]
PipelineDirOpt = Annotated[list[str] | None, _flag("--pipeline-dir", metavar="<dir>")]
IndexDirOpt = Annotated[Path | None, _flag("--index-dir")]
RewriteModelOpt = Annotated[str | None, _flag("--rewrite-model")]
