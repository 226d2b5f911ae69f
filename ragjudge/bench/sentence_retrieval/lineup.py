"""The systems a run compares: the `--pipeline` reranker specs resolved (with the members an RRF spec fuses), each
grid expanded with the run's overrides (`-T collection`, `--rewrite-model`, `-T cross_encoder`), every problem found
before any work; then built over the run's dialogues once they are known (pool statistics are the loaded
candidates')."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragjudge.bench.sentence_retrieval.data import Dialogue
from ragjudge.bench.sentence_retrieval.queries import QueryConfig
from ragjudge.bench.sentence_retrieval.specs import RerankSpec, Setting, expand, load_rerank_spec
from ragjudge.bench.sentence_retrieval.systems import (CrossEncoderSystem, DenseSystem, InitialSystem, LexicalSystem,
                                                       RankingMemo, RRFSystem, System, tokens_for)
from ragjudge.errors import UsageError
from ragjudge.llm import LLMGateway

@dataclass(frozen=True)
class Overrides:
    """What the run's options change in every spec."""

    pipeline_dir: list[str] = field(default_factory=list)
    collection: str | None = None
    rewrite_model: str | None = None
    cross_encoder: str | None = None


@dataclass
class Lineup:
    selected: list[str]
    """The systems compared, in `--pipeline` order."""
    specs: dict[str, tuple[RerankSpec, list[Setting]]]
    """Every spec the run uses (RRF members included) with its grid."""
    pipeline_dir: list[str]

    def reranker(self, name: str) -> str:
        return self.specs[name][0].reranker.name

    def members(self, name: str) -> list[str]:
        spec, settings = self.specs[name]
        if spec.reranker.name != "rrf":
            return []
        return [load_rerank_spec(m, self.pipeline_dir).name for m in settings[0].options.members]

    def query_configs(self, name: str) -> list[QueryConfig]:
        """The queries a system reads (its members', for a fusion; none for the initial order)."""
        if self.reranker(name) == "initial":
            return []
        members = self.members(name)
        if members:
            return [q for m in members for q in self.query_configs(m)]
        return [s.query for s in self.specs[name][1]]

    def llm_models(self) -> list[str]:
        models = []
        for spec, settings in self.specs.values():
            models += [s.query.model for s in settings if s.query.strategy == "rewrite" and s.query.model]
            if spec.reranker.name == "dense" and settings[0].options.encoder == "litellm":
                models.append(settings[0].options.model)
        return list(dict.fromkeys(models))

    def build(self, dialogues: Sequence[Dialogue], gateway: LLMGateway | None, memo: RankingMemo) -> dict[str, System]:
        """Every selected system (and the members it fuses) over `dialogues`: candidates are analysed once per
        analyser, encoders shared by the systems that use the same one."""
        systems: dict[str, System] = {}
        analysed: dict[str, Any] = {}
        encoders: dict[str, Any] = {}

        def build(name: str) -> System:
            if name in systems:
                return systems[name]
            spec, settings = self.specs[name]
            kind = spec.reranker.name
            if kind == "initial":
                system: System = InitialSystem(spec, settings)
            elif kind in ("bm25", "lm"):
                system = LexicalSystem(spec, settings, tokens_for(dialogues, settings[0].options, analysed))
            elif kind == "dense":
                system = DenseSystem(spec, settings, gateway, encoders)
            elif kind == "cross_encoder":
                system = CrossEncoderSystem(spec, settings)
            else:
                system = RRFSystem(spec, settings, [build(m) for m in self.members(name)], memo)
            systems[name] = system
            return system

        for name in self.selected:
            build(name)
        return systems


def resolve(names: Sequence[str], overrides: Overrides) -> Lineup:
    """The specs `names` refer to, checked: each loads, expands and is named once; a rewrite has a model, a
    cross-encoder a folder, a fusion no cycle."""
    if not names:
        raise UsageError("--pipeline names no reranker spec")
    specs: dict[str, tuple[RerankSpec, list[Setting]]] = {}

    def visit(name: str, stack: tuple[str, ...]) -> str:
        spec = load_rerank_spec(name, overrides.pipeline_dir)
        if spec.name in stack:
            raise UsageError(f"reranker {spec.name!r} fuses itself (through {' -> '.join(stack)})")
        if spec.name in specs:
            if specs[spec.name][0].source != spec.source:
                raise UsageError(f"two reranker specs are named {spec.name!r}: {specs[spec.name][0].source} "
                                 f"and {spec.source}")
            return spec.name
        if spec.query.strategy == "rewrite" and overrides.rewrite_model:
            spec = spec.model_copy(update={"query": spec.query.model_copy(update={"model": overrides.rewrite_model})})
        if spec.query.strategy == "rewrite" and not spec.query.model:
            raise UsageError(f"reranker {spec.name!r} rewrites queries with an LLM: pass --rewrite-model MODEL")
        extra: dict[str, Any] = {"collection": overrides.collection} if overrides.collection else {}
        if spec.reranker.name == "cross_encoder" and not spec.reranker.options.get("model"):
            if not overrides.cross_encoder:
                raise UsageError(f"reranker {spec.name!r} needs a local cross-encoder: pass -T cross_encoder=PATH")
            extra["model"] = overrides.cross_encoder
        settings = expand(spec, extra)
        specs[spec.name] = (spec, settings)
        if spec.reranker.name == "rrf":
            for member in settings[0].options.members:
                visit(member, (*stack, spec.name))
        return spec.name

    selected = [visit(name, ()) for name in names]
    repeated = [n for n, c in Counter(selected).items() if c > 1]
    if repeated:
        raise UsageError(f"--pipeline names {repeated[0]!r} twice")
    return Lineup(selected, specs, list(overrides.pipeline_dir))
