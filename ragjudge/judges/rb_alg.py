"""RB_alg: MTRAG's algorithmic reference-based judge (BERTScore recall, ROUGE-L, BERT K-Precision)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ragjudge.errors import InputError
from ragjudge.embeddings.device import check_device
from ragjudge.embeddings.onnx_encoder import check_backend
from ragjudge.embeddings.store import EmbeddingStore
from ragjudge.formats.samples import Score
from ragjudge.judges.base import Judge, JudgeContext, JudgedItem
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm.cache import default_cache_dir
from ragjudge.embeddings.bertscore import resolve_model
from ragjudge.metrics.rb_alg import rb_agg
from ragjudge.metrics.rouge import rouge_l_f

if TYPE_CHECKING:  # torch: imported with the model, in the worker thread that scores (LLM judges' requests go on)
    from ragjudge.embeddings.cached_bertscore import CachedBertScorer


NO_PASSAGES = ("zero", "not_applicable")


class RBAlgJudge(Judge):
    """Scores a whole batch at once: every distinct text is encoded once, or read from the embedding store."""

    chunk_size = 512  # big chunks: a passage shared by many answers is encoded once per chunk at worst

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        self.config = resolve_model(str(spec.options.get("bertscore_model", "auto")))
        self.device = check_device(str(spec.options.get("device", "auto")))
        """Where the BERTScore model runs (`auto`: CUDA, else MPS, else CPU); a spec's `device` option names one."""
        self.backend = check_backend(str(spec.options.get("backend", "auto")), "backend")
        """What runs it: `torch`, `onnx` (ONNX Runtime on the CPU) or `auto` (ONNX Runtime when installed)."""
        self.no_passages = str(spec.options.get("no_passages", "zero"))
        """A record without passages: `zero` (MTRAG's scripts: no BertKPrec, RB_agg 0, kept for MTRAG's figures) or
        `not_applicable` (plain records: left out of the mean with the reason, never a 0)."""
        if self.no_passages not in NO_PASSAGES:
            raise InputError(f"must be one of {', '.join(NO_PASSAGES)}, got {self.no_passages!r}", file=spec.source,
                             field="options.no_passages")
        self._scorer: CachedBertScorer | None = None

    @property
    def requires(self) -> list[str]:
        return [*super().requires, *(["passages"] if self.no_passages == "not_applicable" else [])]

    def not_applicable(self, item: JudgedItem) -> str | None:
        if (reason := super().not_applicable(item)) == "no passages":
            return "no passages (RB_agg needs BertKPrec, the answer against its passages)"
        return reason

    def describe_models(self, ctx: JudgeContext) -> list[str]:
        return [self.config.describe()]

    def runtime(self) -> dict[str, Any]:
        return self._scorer.facts if self._scorer is not None else {}

    def scorer_for(self, ctx: JudgeContext) -> CachedBertScorer:
        """The run's scorer, made once (the model loads on first need) with the context's cache folder."""
        if self._scorer is None:
            from ragjudge.embeddings.cached_bertscore import CachedBertScorer

            store = EmbeddingStore(ctx.cache_dir or default_cache_dir()) if ctx.use_cache else None
            self._scorer = CachedBertScorer(self.config, store=store, device=self.device, backend=self.backend)
        return self._scorer

    async def judge(self, items: list[JudgedItem], ctx: JudgeContext) -> list[Score]:
        results = await asyncio.to_thread(lambda: self.score_batch(items, self.scorer_for(ctx)))
        ctx.on_progress(len(items))
        return results

    def score_batch(self, items: list[JudgedItem], scorer: CachedBertScorer) -> list[Score]:
        # Each judged item's answer against its reference (passage None), then against each of its passages.
        pairs = [(i, passage) for i, item in enumerate(items) if not self.not_applicable(item)
                 for passage in [None, *item.contexts]]
        precision, recall, _ = scorer.score([items[i].answer for i, _ in pairs],
                                            [items[i].reference or "" if p is None else p.text for i, p in pairs])
        recall_by_item: dict[int, float] = {}
        kprec_by_item: dict[int, float] = {}
        for (i, passage), p, r in zip(pairs, precision, recall, strict=True):
            if passage is None:
                recall_by_item[i] = r
            else:
                kprec_by_item[i] = max(p, kprec_by_item.get(i, float("-inf")))

        results = []
        model = self.config.describe()
        for i, item in enumerate(items):
            if (reason := self.not_applicable(item)) is not None:
                results.append(self.result(model=model, details={"skipped": reason}))
                continue
            rouge = rouge_l_f(item.answer, item.reference or "")
            components = {"RougeL_stemFalse": rouge, "BertscoreR": recall_by_item[i]}
            if i in kprec_by_item:
                components["BertKPrec"] = kprec_by_item[i]
                value = rb_agg(recall_by_item[i], rouge, kprec_by_item[i])
            else:  # no passages: as in the benchmark's scripts, no BertKPrec and RB_agg is 0
                value = 0.0
            results.append(self.result(value=value, label=f"{value:.4f}", model=model,
                                       details={**components, "bertscore_model": model}))
        return results
