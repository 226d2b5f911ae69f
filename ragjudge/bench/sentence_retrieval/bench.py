"""`--bench sentence-retrieval`: rerank the 50 candidate Wikipedia sentences of each Reddit dialogue of
Harel et al. (SIGIR 2022) with any number of systems, tuned and tested over the paper's 50 splits.

A run writes one summary for all its systems: every system's MAP, nDCG@5 and MRR in the `system` breakdown,
the best system's (highest MAP) as the top-level metrics and the headline, and the best system's figures by
dialogue type in the `type` breakdown; why the best system and not `system/MAP` names is said in
`ragjudge.bench.sentence_retrieval.summary`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator

from ragjudge.engine.bench import (
    Bench,
    BenchOptions,
    MetricInfo,
    SampleResult,
    Scorer,
    Solver,
)
from ragjudge.bench.sentence_retrieval import protocol, reference, trec
from ragjudge.bench.sentence_retrieval import summary as summ
from ragjudge.bench.sentence_retrieval.data import (
    REPOSITORY,
    Dialogue,
    Split,
    find_splits,
    load_dialogues,
    load_splits,
)
from ragjudge.bench.sentence_retrieval.metrics import METRICS
from ragjudge.bench.sentence_retrieval.queries import QueryConfig
from ragjudge.bench.sentence_retrieval.solver import (
    QuerySolver,
    SystemScorer,
    metric_dict,
)
from ragjudge.bench.sentence_retrieval.specs import (
    RerankSpec,
    Setting,
    expand,
    load_rerank_spec,
)
from ragjudge.bench.sentence_retrieval.systems import (
    CrossEncoderSystem,
    DenseSystem,
    InitialSystem,
    LexicalSystem,
    RankingMemo,
    RRFSystem,
    System,
    tokens_for,
)
from ragjudge.engine.context import RunContext
from ragjudge.engine.summary import Headline, Metric, Summary, describe
from ragjudge.errors import UsageError


class SentenceRetrievalOptions(BenchOptions):
    data: str = Field(description="Folder holding dialogues.json and wikipedia_grounded_dialogues.json (JSON array "
                      f"or JSON lines; from {REPOSITORY}, datasets/).")
    pipeline: list[str] = Field(default_factory=lambda: ["initial", "bm25_rerank", "lm_rerank"],
                                description="Reranker specs to compare (names in pipelines/rerank/ or YAML paths).")
    pipeline_dir: list[str] = Field(default_factory=list, description="Extra folders of reranker specs.")
    splits: str | None = Field(None, description="The splits file (default: val_test_splits.json in --data or "
                               "its evaluation/ folder).")
    no_splits: bool = Field(False, description="Score all dialogues at once (parameters then tuned on them).")
    collection: Literal["pool", "dialogue"] | None = Field(None, description="Collection statistics of every "
                                                           "BM25/LM system: the candidate pool or each dialogue's "
                                                           "candidates (default: each spec's own, pool).")
    rewrite_model: str | None = Field(None, description="litellm model for specs whose query strategy is rewrite.")
    cross_encoder: str | None = Field(None, description="Local cross-encoder folder for cross_encoder specs that "
                                      "name none.")
    candidates: int = Field(50, ge=0, description="Candidates every dialogue must have (0: any number).")
    tune_on: Literal["MAP", "nDCG@5", "MRR"] = Field("MAP", description="Metric the validation halves pick by "
                                                     "(NDCG@5, the paper's spelling, is nDCG@5).")
    permutations: int = Field(10_000, ge=1, description="Random permutations per significance test (at least 1).")
    seed: int = Field(0, ge=0, description="Seed of the permutation tests (a whole number >= 0).")
    alpha: float = Field(0.05, gt=0, lt=1, description="Significance level (after Bonferroni), between 0 and 1.")

    @field_validator("tune_on", mode="before")
    @classmethod
    def _tune_on(cls, value: Any) -> Any:
        """Any case (`ndcg@5`, the paper's `NDCG@5`) names the same metric."""
        if isinstance(value, str):
            return {m.lower(): m for m in METRICS}.get(value.strip().lower(), value)
        return value


class SentenceRetrievalBench(Bench[SentenceRetrievalOptions, Dialogue]):
    name = "sentence-retrieval"
    description = ("Sentence retrieval for open-ended dialogues (Harel et al., SIGIR 2022): rerank 50 Wikipedia "
                   "sentences per Reddit dialogue; MAP, nDCG@5, MRR over 50 tuned splits, permutation tests.")
    Options = SentenceRetrievalOptions
    llm = "optional"
    data_help = (f"The dataset's two files cannot be downloaded by ragjudge: get datasets/dialogues.json, "
                 f"datasets/wikipedia_grounded_dialogues.json and evaluation/val_test_splits.json from {REPOSITORY} "
                 f"and pass their folder as --data. examples/sentret-mini is a small synthetic set in that format.")
    COUNTS = "the dialogues every system scored (each split's test half holds about half of them)"
    metrics = (MetricInfo("MAP", "mean average precision over each dialogue's candidates: the mean over the "
                          "splits of the test half's mean (top level: the best system's)", counts=COUNTS),
               MetricInfo("nDCG@5", "nDCG of the top 5, binary gains (the paper's NDCG@5)", counts=COUNTS),
               MetricInfo("MRR", "reciprocal rank of the first relevant sentence, no cut-off", counts=COUNTS))
    breakdowns = ("system", "type")
    unit = "dialogues"

    def __init__(self, options: SentenceRetrievalOptions, *, label: str | None = None):
        super().__init__(options, label=label)
        o = options
        if o.no_splits and o.splits:
            raise UsageError("-T splits and -T no_splits=true exclude each other")
        if not o.pipeline:
            raise UsageError("--pipeline names no reranker spec")
        self.specs: dict[str, tuple[RerankSpec, list[Setting]]] = {}
        self.selected = [self._resolve(name, ()) for name in o.pipeline]
        repeated = [n for n, c in Counter(self.selected).items() if c > 1]
        if repeated:
            raise UsageError(f"--pipeline names {repeated[0]!r} twice")
        self.splits: list[Split] | None = None
        self.splits_path: Path | None = None
        self.systems: dict[str, System] = {}
        self.memo = RankingMemo()
        self._dialogues: list[Dialogue] = []
        self._per_dialogue: dict[str, np.ndarray] = {}
        self._ids: list[str] = []

    # -- specs ---------------------------------------------------------------------------------------------

    def _resolve(self, name: str, stack: tuple[str, ...]) -> str:
        o = self.options
        spec = load_rerank_spec(name, o.pipeline_dir)
        if spec.name in stack:
            raise UsageError(f"reranker {spec.name!r} fuses itself (through {' -> '.join(stack)})")
        if spec.name in self.specs:
            if self.specs[spec.name][0].source != spec.source:
                raise UsageError(f"two reranker specs are named {spec.name!r}: {self.specs[spec.name][0].source} "
                                 f"and {spec.source}")
            return spec.name
        if spec.query.strategy == "rewrite" and o.rewrite_model:
            spec = spec.model_copy(update={"query": spec.query.model_copy(update={"model": o.rewrite_model})})
        if spec.query.strategy == "rewrite" and not spec.query.model:
            raise UsageError(f"reranker {spec.name!r} rewrites queries with an LLM: pass --rewrite-model MODEL")
        overrides: dict[str, Any] = {"collection": o.collection} if o.collection else {}
        if spec.reranker.name == "cross_encoder" and not spec.reranker.options.get("model"):
            if not o.cross_encoder:
                raise UsageError(f"reranker {spec.name!r} needs a local cross-encoder: pass -T cross_encoder=PATH")
            overrides["model"] = o.cross_encoder
        settings = expand(spec, overrides)
        self.specs[spec.name] = (spec, settings)
        if spec.reranker.name == "rrf":
            for member in settings[0].options.members:
                self._resolve(member, (*stack, spec.name))
        return spec.name

    def _members(self, name: str) -> list[str]:
        spec, settings = self.specs[name]
        if spec.reranker.name != "rrf":
            return []
        return [load_rerank_spec(m, self.options.pipeline_dir).name for m in settings[0].options.members]

    def _query_configs(self, name: str) -> list[QueryConfig]:
        if self.specs[name][0].reranker.name == "initial":
            return []
        members = self._members(name)
        if members:
            return [q for m in members for q in self._query_configs(m)]
        return [s.query for s in self.specs[name][1]]

    def llm_models(self) -> list[str]:
        models = []
        for spec, settings in self.specs.values():
            models += [s.query.model for s in settings if s.query.strategy == "rewrite" and s.query.model]
            if spec.reranker.name == "dense" and settings[0].options.encoder == "litellm":
                models.append(settings[0].options.model)
        return list(dict.fromkeys(models))

    # -- the run -------------------------------------------------------------------------------------------

    def load(self) -> list[Dialogue]:
        o = self.options
        dialogues = load_dialogues(o.data, o.candidates)
        if not o.no_splits:
            self.splits_path = Path(o.splits) if o.splits else find_splits(o.data)
            if self.splits_path is None:
                raise UsageError(f"no splits file in {o.data} (nor in {Path(o.data) / 'evaluation'}): pass -T splits="
                                 f"FILE (evaluation/val_test_splits.json from {REPOSITORY}) or -T no_splits=true")
            self.splits = load_splits(self.splits_path, {d.id for d in dialogues})
        return dialogues

    def _prepare(self, samples: Sequence[Dialogue], ctx: RunContext) -> None:
        """Build the systems over the dialogues this run scores (candidates are analysed once here)."""
        self._dialogues = list(samples)
        if self.splits is not None:  # with --limit, fail before any work if a half would be empty
            protocol.split_masks(self.splits, [d.id for d in samples], str(self.splits_path))
        analysed: dict[str, Any] = {}
        encoders: dict[str, Any] = {}

        def build(name: str) -> System:
            if name in self.systems:
                return self.systems[name]
            spec, settings = self.specs[name]
            kind = spec.reranker.name
            if kind == "initial":
                system: System = InitialSystem(spec, settings)
            elif kind in ("bm25", "lm"):
                system = LexicalSystem(spec, settings, tokens_for(self._dialogues, settings[0].options, analysed))
            elif kind == "dense":
                system = DenseSystem(spec, settings, ctx.gateway, encoders)
            elif kind == "cross_encoder":
                system = CrossEncoderSystem(spec, settings)
            else:
                system = RRFSystem(spec, settings, [build(m) for m in self._members(name)], self.memo)
            self.systems[name] = system
            return system

        for name in self.selected:
            build(name)

    def solver(self, ctx: RunContext) -> Solver[Dialogue]:
        configs = [q for name in self.selected for q in self._query_configs(name)]
        return QuerySolver(configs, self._prepare)

    def scorers(self, ctx: RunContext) -> list[Scorer[Dialogue]]:
        order = sorted(self.selected, key=lambda n: self.specs[n][0].reranker.name == "rrf")
        return [SystemScorer(self.systems[name], self.memo) for name in order]

    def summarize(self, results: Sequence[SampleResult[Dialogue]], ctx: RunContext) -> Summary:
        o = self.options
        ok = [r for r in results if not r.errors]
        dialogues = [r.sample for r in ok]
        self._ids = [d.id for d in dialogues]
        excluded = len(results) - len(ok)
        counts = {t: sum(d.type == t for d in dialogues) for t in summ.TYPES}
        details: dict[str, Any] = {"n_dialogues": {"scored": len(ok), "excluded": excluded, **counts}}
        details["labels"] = self._label_facts([r.sample for r in results])
        facts = self._query_facts(ok)
        details.update(facts)
        warnings = self._warnings(facts, excluded)
        catalog = self.catalog
        if not ok:
            metrics = {m: catalog.metric(m, None, n=0, errors=excluded) for m in METRICS}
            return self.summary(results, metrics, warnings=warnings, details=details, notes=[
                "no dialogue was scored by every system: see the errors in results.csv", *self._label_note(details)])
        masks = protocol.all_at_once(len(ok)) if o.no_splits or self.splits is None else \
            protocol.split_masks(self.splits, self._ids, str(self.splits_path))
        scored = [summ.Scored(name, self.systems[name].setting_keys,
                              np.array([r.scores[name]["metrics"] for r in ok]).transpose(1, 0, 2))
                  for name in self.selected]
        types = np.array([d.type for d in dialogues])
        result = summ.summarize_systems(scored, masks, types, tune_on=o.tune_on, permutations=o.permutations,
                                        seed=o.seed, alpha=o.alpha, with_splits=not o.no_splits)
        self._per_dialogue = {s.name: s.outcome.per_dialogue for s in scored if s.outcome}
        n_splits = 0 if o.no_splits else int(masks.test.shape[0])
        systems = result["systems"]
        for name, entry in systems.items():
            entry.update(self.systems[name].describe())
        best = summ.best_system(systems)
        details["protocol"] = {"n_splits": n_splits, "splits_file": str(self.splits_path) if self.splits_path else None,
                               "tuned_on": o.tune_on, "split_ids_not_scored": masks.dropped,
                               "unbalanced_splits": self._unbalanced(dialogues),
                               "std": "sample standard deviation (ddof=1) over the test halves"}
        details.update({"best_system": best, "best_by": "MAP", "systems": systems,
                        "significance": result["significance"]})
        metrics: dict[str, Metric] = {
            m: catalog.metric(m, systems[best]["metrics"][m]["value"], n=len(ok), errors=excluded,
                              std=systems[best]["metrics"][m]["std"], system=best, n_splits=n_splits)
            for m in METRICS}
        how = summ.how_scored(n_splits, o.tune_on)
        breakdowns = {"system": summ.system_breakdown(systems, len(ok), how),
                      "type": summ.type_breakdown(systems[best], counts, best)}
        tables = [summ.main_table(systems, len(ok), n_splits, o.tune_on), summ.type_table(systems)]
        if any(len(e["settings"]) > 1 for e in systems.values()):
            tables.append(summ.picks_table(systems))
        significance = summ.significance_table(result["significance"])
        if significance is not None:
            tables.append(significance)
        tables.append(reference.data_table(dialogues))
        which = f"{best}, the best of {len(systems)} systems by MAP" if len(systems) > 1 else best
        spread = systems[best]["metrics"]["MAP"]["std"]
        text = describe("MAP", metrics["MAP"], self.unit) + f" ({which}" + (
            f"; std {spread:.3f} over {n_splits} test halves)" if spread is not None else ")")
        return self.summary(results, metrics, breakdowns=breakdowns, tables=tables,
                            reference=reference.reference_tables(), notes=self._notes(details), warnings=warnings,
                            details=details, headline=Headline(metric="MAP", value=metrics["MAP"].value, text=text),
                            title=f"sentence-retrieval: {len(ok)} dialogues, {which}")

    def _unbalanced(self, dialogues: Sequence[Dialogue]) -> int:
        """Splits whose halves differ by more than one dialogue of a type (the paper balances them)."""
        if self.options.no_splits or not self.splits:
            return 0
        type_of = {d.id: d.type for d in dialogues}
        count = 0
        for split in self.splits:
            val = Counter(type_of[i] for i in split.val if i in type_of)
            test = Counter(type_of[i] for i in split.test if i in type_of)
            count += any(abs(val[t] - test[t]) > 1 for t in summ.TYPES)
        return count

    def _query_facts(self, ok: Sequence[SampleResult[Dialogue]]) -> dict[str, Any]:
        empty: Counter[str] = Counter()
        rewrite: Counter[str] = Counter()
        for r in ok:
            for key, parts in r.output.get("queries", {}).items():
                empty[key] += not parts
            for info in r.output.get("rewrite", {}).values():
                rewrite["fallback" if info.get("fallback") else str(info.get("class", "rewritten"))] += 1
        facts: dict[str, Any] = {"empty_queries": {k: v for k, v in empty.items() if v}}
        if rewrite:
            facts["query_rewrite"] = dict(rewrite)
        return facts

    @staticmethod
    def _label_facts(dialogues: Sequence[Dialogue]) -> dict[str, Any]:
        """The candidates' labels as the dataset defines them (1 relevant, anything else not): how many of each,
        and the labels written as neither 0 nor 1 (read as non-relevant), by value as written."""
        other = Counter(label for d in dialogues for label in d.other_labels)
        return {"relevant": sum(d.n_relevant for d in dialogues),
                "non_relevant": sum(len(d.candidates) - d.n_relevant for d in dialogues),
                "other": sum(other.values()), "other_values": dict(sorted(other.items())),
                "other_dialogues": sum(1 for d in dialogues if d.other_labels)}

    @staticmethod
    def _label_note(details: dict[str, Any]) -> list[str]:
        labels = details["labels"]
        if not labels["other"]:
            return []
        values = ", ".join(f"{v} ({n})" for v, n in labels["other_values"].items())
        return [f"{labels['other']} candidate label(s) in {labels['other_dialogues']} dialogue(s) were neither 0 nor "
                f"1 ({values}): read as non-relevant, as the dataset defines labels (1 relevant, anything else not)"]

    def _notes(self, details: dict[str, Any]) -> list[str]:
        notes = self._label_note(details)
        lexical = [n for n in self.selected if self.specs[n][0].reranker.name in ("bm25", "lm")]
        if lexical:
            stats = {n: details["systems"][n]["options"].get("collection", "grid") for n in lexical}
            notes.append("collection statistics: " + ", ".join(f"{n} {c}" for n, c in stats.items()) + " (the paper "
                         "used its Wikipedia sentence index, which is not public)")
        if details["empty_queries"]:
            notes.append("dialogues with an empty query (their candidates keep the initial order): " +
                         ", ".join(f"{k} {v}" for k, v in details["empty_queries"].items()))
        if details["protocol"]["unbalanced_splits"]:
            notes.append(f"{details['protocol']['unbalanced_splits']} split(s) do not balance ungrounded and grounded "
                         f"dialogues between their halves (the paper's do)")
        if details["protocol"]["split_ids_not_scored"]:
            notes.append(f"{details['protocol']['split_ids_not_scored']} split id(s) were not scored (--limit or "
                         f"errors) and were left out of their halves")
        return notes

    @staticmethod
    def _warnings(facts: dict[str, Any], excluded: int) -> list[str]:
        out = []
        fallbacks = facts.get("query_rewrite", {}).get("fallback", 0)
        if fallbacks:
            out.append(f"warning: {fallbacks} rewrite(s) fell back to the last turn (see 'rewrite' in results.jsonl)")
        if excluded:
            out.append(f"warning: {excluded} dialogue(s) had errors and were left out of every system's figures")
        return out

    # -- outputs -------------------------------------------------------------------------------------------

    def records(self, results: Sequence[SampleResult[Dialogue]]) -> list[dict[str, Any]]:
        position = {d: i for i, d in enumerate(self._ids)}
        out = []
        for r in results:
            d = r.sample
            systems = {}
            for name in self.selected:
                score = r.scores.get(name, {})
                entry: dict[str, Any] = {"error": score["error"]} if score.get("error") else {
                    "settings": {k: metric_dict(v) for k, v in zip(score["settings"], score["metrics"], strict=True)}}
                if d.id in position and name in self._per_dialogue:
                    values = self._per_dialogue[name][position[d.id]]
                    entry["tested"] = None if np.isnan(values[0]) else metric_dict(values.tolist())
                systems[name] = entry
            out.append({"id": d.id, "type": d.type, "n_relevant": d.n_relevant, "queries": r.output.get("queries"),
                        **({"rewrite": r.output["rewrite"]} if "rewrite" in r.output else {}),
                        "systems": systems, **({"errors": r.errors} if r.errors else {})})
        return out

    def rows(self, results: Sequence[SampleResult[Dialogue]]) -> list[dict[str, Any]]:
        position = {d: i for i, d in enumerate(self._ids)}
        rows = []
        for r in results:
            d = r.sample
            row: dict[str, Any] = {"id": d.id, "type": d.type, "n_relevant": d.n_relevant,
                                   "first_relevant": d.labels.index(1) + 1}
            for name in self.selected:
                values = self._per_dialogue.get(name)
                if values is not None and d.id in position and not np.isnan(values[position[d.id], 0]):
                    row.update({f"{name} {k}": v for k, v in metric_dict(values[position[d.id]].tolist()).items()})
            row["errors"] = "; ".join(f"{k}: {v}" for k, v in r.errors.items()) or None
            rows.append(row)
        return rows

    def artifacts(self, results: Sequence[SampleResult[Dialogue]], summary: Summary) -> dict[str, str]:
        ok = [r for r in results if not r.errors]
        systems = summary.details.get("systems")
        if not ok or not systems:
            return {}
        files = {"qrels.trec": trec.qrels_text([r.sample for r in ok])}
        for name in self.selected:
            keys = self.systems[name].setting_keys
            pick = keys.index(systems[name]["modal_pick"])
            orders = [np.asarray(r.scores[name]["rankings"][pick]) for r in ok]
            files[f"run.{name}.trec"] = trec.run_text(name, [r.sample for r in ok], orders)
        return files

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        return {"data": self.options.data, "splits": str(self.splits_path) if self.splits_path else None,
                "systems": {n: {**self.systems[n].describe(), "spec": self.specs[n][0].record()}
                            for n in self.selected if n in self.systems},
                "metrics": list(METRICS), **({"models": {"llm": models}} if (models := self.llm_models()) else {})}

    def out_slug(self) -> list[str]:
        return [Path(self.options.data).resolve().name]
