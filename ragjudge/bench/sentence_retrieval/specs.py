"""Reranker specs: YAML files in `pipelines/rerank/` (and `--pipeline-dir` folders) naming a reranker, its options,
the query strategy and the grid tuned on each validation half (docs/benches/sentence-retrieval.md, Systems).

Grid keys are reranker options or the query's `beta` / `delta`; the settings are every combination, in the order
written. A separate kind from retrieval pipelines (which search a corpus), hence their own folder.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ragjudge.bench.sentence_retrieval.queries import QueryConfig
from ragjudge.embeddings.device import Device
from ragjudge.errors import InputError, UsageError
from ragjudge.retrieval.dense import EncoderOptions
from ragjudge.specs import load_yaml_spec, spec_search_path

RERANK_FOLDER = "rerank"
QUERY_GRID_KEYS = ("beta", "delta")


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid")


class InitialOptions(_Options):
    pass


class LexicalOptions(_Options):
    collection: Literal["pool", "dialogue"] = "pool"
    """Collection statistics from every distinct candidate of the loaded dialogues, or from the dialogue's own."""
    stemmer: str | None = "english"
    stopwords: Literal["en", "none"] | list[str] = "en"
    candidate_stopwords: bool = False
    """Remove stop words from candidates too (the paper removes them from dialogues only)."""
    title: bool = False
    """Score the candidate's Wikipedia page title with its sentence."""


class BM25Options(LexicalOptions):
    k1: float = Field(1.2, gt=0)
    b: float = Field(0.75, ge=0, le=1)
    method: Literal["lucene", "robertson", "atire"] = "lucene"


class LMOptions(LexicalOptions):
    mu: float = Field(1000, gt=0)


class DenseOptions(EncoderOptions):
    title: bool = False


class CrossEncoderOptions(_Options):
    model: str | None = None
    """A local folder holding a sentence-transformers CrossEncoder (none ships with ragjudge);
    `-T cross_encoder=PATH` fills it when the spec leaves it empty."""
    batch_size: int = Field(32, ge=1)
    max_length: int | None = 512
    device: Device = "auto"
    """Where the model runs: `auto` (CUDA, else Apple MPS, else CPU), `cpu`, `cuda`, `cuda:N` or `mps`."""
    title: bool = False


class RRFOptions(_Options):
    members: list[str] = Field(min_length=2)
    """Names (or YAML paths) of the reranker specs to fuse."""
    weights: list[float] | None = None
    rrf_k: int = Field(60, ge=1)

    @model_validator(mode="after")
    def _one_weight_per_member(self) -> RRFOptions:
        if self.weights is not None and len(self.weights) != len(self.members):
            raise ValueError(f"weights: {len(self.weights)} given for {len(self.members)} members")
        return self


OPTIONS: dict[str, type[_Options] | type[EncoderOptions]] = {
    "initial": InitialOptions, "bm25": BM25Options, "lm": LMOptions, "dense": DenseOptions,
    "cross_encoder": CrossEncoderOptions, "rrf": RRFOptions,
}
RerankerName = Literal["initial", "bm25", "lm", "dense", "cross_encoder", "rrf"]
GRIDABLE: dict[str, tuple[str, ...]] = {
    "initial": (), "bm25": ("k1", "b", "method", "collection"), "lm": ("mu", "collection"), "dense": (),
    "cross_encoder": (), "rrf": ("rrf_k", "weights"),
}
"""Reranker options a grid may vary (the others shape what is loaded or analysed once per system)."""


class RerankerSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: RerankerName
    options: dict[str, Any] = Field(default_factory=dict)


class RerankSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    reranker: RerankerSpec
    query: QueryConfig = Field(default_factory=QueryConfig)
    grid: dict[str, list[Any]] = Field(default_factory=dict)
    source: str | None = Field(None, exclude=True)

    def record(self) -> dict[str, Any]:
        return {**self.model_dump(mode="json"), "source": self.source}


class Setting(BaseModel):
    """One point of a spec's grid: the reranker's options and the query it scores."""

    model_config = ConfigDict(frozen=True)

    key: str
    options: Any
    query: QueryConfig


def setting_key(values: dict[str, Any]) -> str:
    if not values:
        return "default"
    return ",".join(f"{k}={v:g}" if isinstance(v, (int, float)) else f"{k}={v}" for k, v in values.items())


def expand(spec: RerankSpec, overrides: dict[str, Any] | None = None) -> list[Setting]:
    """Every grid point, validated; `overrides` (bench options such as the collection) apply to all."""
    model = OPTIONS[spec.reranker.name]
    fields = set(model.model_fields)
    base = {**spec.reranker.options, **{k: v for k, v in (overrides or {}).items() if k in fields}}
    gridable = set(GRIDABLE[spec.reranker.name]) | set(QUERY_GRID_KEYS)
    for key, values in spec.grid.items():
        if key not in gridable:
            what = "cannot vary in a grid" if key in fields else f"is not a {spec.reranker.name} grid parameter"
            raise InputError(f"{key!r} {what} (grid keys: {', '.join(sorted(gridable))})", file=spec.source,
                             field=f"grid.{key}")
        if not values:
            raise InputError("needs at least one value", file=spec.source, field=f"grid.{key}")
        if key in QUERY_GRID_KEYS and spec.query.strategy != "turn_mixture":
            raise InputError(f"{key!r} applies to the turn_mixture query strategy only", file=spec.source,
                             field=f"grid.{key}")
    keys = list(spec.grid)
    settings = []
    for combo in itertools.product(*(spec.grid[k] for k in keys)) if keys else [()]:
        values = dict(zip(keys, combo, strict=True))
        reranker_values = {k: v for k, v in values.items() if k in fields}
        query_values = {k: v for k, v in values.items() if k not in fields}
        try:
            options = model.model_validate({**base, **reranker_values})
            query = QueryConfig.model_validate({**spec.query.model_dump(), **query_values})
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            section = "grid" if where in values else ("query" if where in QueryConfig.model_fields else
                                                      "reranker.options")
            raise InputError(err["msg"].removeprefix("Value error, "), file=spec.source,
                             field=f"{section}.{where}") from None
        settings.append(Setting(key=setting_key(values), options=options, query=query))
    return settings


# ------------------------------------------------------------------------------------------------ finding

def search_folders(extra_dirs: list[str | Path] | None = None) -> list[Path]:
    """User folders (each folder and its `rerank/`), then the built-in `pipelines/rerank/`."""
    folders: list[Path] = []
    *users, builtin = spec_search_path("pipelines", extra_dirs)
    for folder in users:
        if not folder.is_dir() and folder in [Path(d) for d in extra_dirs or []]:
            raise UsageError(f"pipeline spec folder not found: {folder}")
        folders += [folder, folder / RERANK_FOLDER]
    return folders + [builtin / RERANK_FOLDER]


def available_rerankers(extra_dirs: list[str | Path] | None = None) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for folder in reversed(search_folders(extra_dirs)):
        for path in sorted(folder.glob("*.y*ml")) if folder.is_dir() else []:
            found[path.stem] = path
    return found


def load_rerank_spec(name: str, extra_dirs: list[str | Path] | None = None) -> RerankSpec:
    """A reranker spec by name (user folders first) or a path to a YAML file."""
    if name.endswith((".yaml", ".yml")) or "/" in name:
        path = Path(name)
        if not path.is_file():
            raise UsageError(f"reranker spec file not found: {name}")
    else:
        path = next((f / f"{name}{ext}" for f in search_folders(extra_dirs) for ext in (".yaml", ".yml")
                     if (f / f"{name}{ext}").is_file()), None)
        if path is None:
            from ragjudge.retrieval.spec import available_pipelines

            retrieval = available_pipelines(extra_dirs).get(name)
            if retrieval is not None:
                raise UsageError(f"{name!r} ({retrieval}) is a retrieval pipeline (it searches a corpus), not a "
                                 f"reranker spec; sentence retrieval reranks given candidates: see "
                                 f"pipelines/{RERANK_FOLDER}/")
            raise UsageError(f"unknown reranker {name!r} for sentence retrieval (available: "
                             f"{', '.join(sorted(available_rerankers(extra_dirs))) or 'none'}; specs live in "
                             f"pipelines/{RERANK_FOLDER}/ or a --pipeline-dir folder)")
    import yaml

    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError:
        raw = None  # load_yaml_spec reports it with its line
    if isinstance(raw, dict) and "retriever" in raw and "reranker" not in raw:
        raise UsageError(f"{path} is a retrieval pipeline (it searches a corpus), not a reranker spec; "
                         f"sentence retrieval reranks given candidates: see pipelines/{RERANK_FOLDER}/")
    spec = load_yaml_spec(path, RerankSpec, "reranker", defaults={"name": path.stem})
    if spec.name != path.stem:
        raise InputError(f"name {spec.name!r} must match the file name {path.stem!r}", file=str(path), field="name")
    spec = spec.model_copy(update={"source": str(path)})
    expand(spec)  # every grid point is valid before any work
    return spec
