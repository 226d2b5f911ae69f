"""The retrieval pipeline's flags, one declaration for every command that runs a pipeline (`eval`, `retrieve`)."""

from pathlib import Path
from typing import Annotated

import typer

PIPELINE_HELP = "Retrieval pipeline spec: a name (`pipelines/`) or a path to a spec YAML file."
PipelineOpt = Annotated[str, typer.Option("--pipeline", help=PIPELINE_HELP)]
OptionalPipelineOpt = Annotated[str | None, typer.Option("--pipeline", help=PIPELINE_HELP)]
CorpusOpt = Annotated[Path | None, typer.Option("--corpus", help="BEIR corpus JSONL ({_id, title, text} a line) the "
                                                "pipeline retrieves from: its index is built once and reused. "
                                                "Optional only for an existing Elasticsearch index.")]
PipelineDirOpt = Annotated[list[str] | None, typer.Option("--pipeline-dir", metavar="<dir>", help="Extra folder of "
                                                          "pipeline specs (repeatable); overrides built-in specs of "
                                                          "the same name.")]
IndexDirOpt = Annotated[Path | None, typer.Option("--index-dir", help="Where indexes are kept and reused "
                                                  "(default: <cache dir>/indexes).")]
RewriteModelOpt = Annotated[str | None, typer.Option("--rewrite-model", help="litellm model for a pipeline whose "
                                                     "query strategy is rewrite (overrides the spec's query.model).")]
