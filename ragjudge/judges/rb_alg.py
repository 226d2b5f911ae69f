"""RB_alg: MTRAG's algorithmic reference-based judge (BERTScore recall, ROUGE-L, BERT K-Precision)."""

from __future__ import annotations

import asyncio

from ragjudge.judges.base import Judge, JudgeContext, JudgeItem
from ragjudge.judges.spec import JudgeSpec
from ragjudge.metrics.bertscore import BertScorer, resolve_model
from ragjudge.metrics.rb_alg import rb_agg
from ragjudge.metrics.rouge import rouge_l_f
from ragjudge.models import JudgeResult


class RBAlgJudge(Judge):
    """Scores a whole batch with one BERTScore call over every (response, reference/passage) pair."""

    chunk_size = 512  # big chunks keep BERTScore batches full

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        self.config = resolve_model(str(spec.options.get("bertscore_model", "auto")))
        self.batch_size = int(spec.options.get("batch_size", 64))
        self._scorer: BertScorer | None = None

    def describe_models(self, ctx: JudgeContext) -> list[str]:
        return [self.config.describe()]

    @property
    def scorer(self) -> BertScorer:
        if self._scorer is None:  # loading the model is the expensive part: once per run
            self._scorer = BertScorer(self.config, batch_size=self.batch_size)
        return self._scorer

    async def judge(self, items: list[JudgeItem], ctx: JudgeContext) -> list[JudgeResult]:
        results = await asyncio.to_thread(self.score_batch, items)
        ctx.on_progress(len(items))
        return results

    def score_batch(self, items: list[JudgeItem]) -> list[JudgeResult]:
        candidates: list[str] = []
        references: list[str] = []
        owners: list[tuple[int, str]] = []  # (item index, "ref" | "psg") for each scored pair
        for i, item in enumerate(items):
            if self.not_applicable(item):
                continue
            candidates.append(item.prediction.text)
            references.append(item.task.reference or "")
            owners.append((i, "ref"))
            for passage in item.passages:
                candidates.append(item.prediction.text)
                references.append(passage.text)
                owners.append((i, "psg"))
        precision, recall, _ = self.scorer.score(candidates, references)

        recall_by_item: dict[int, float] = {}
        kprec_by_item: dict[int, float] = {}
        for (i, kind), p, r in zip(owners, precision, recall, strict=True):
            if kind == "ref":
                recall_by_item[i] = r
            else:
                kprec_by_item[i] = max(p, kprec_by_item.get(i, float("-inf")))

        results = []
        model = self.config.describe()
        for i, item in enumerate(items):
            if (reason := self.not_applicable(item)) is not None:
                results.append(self.result(model=model, details={"skipped": reason}))
                continue
            rouge = rouge_l_f(item.prediction.text, item.task.reference or "")
            components = {"RougeL_stemFalse": rouge, "BertscoreR": recall_by_item[i]}
            if i in kprec_by_item:
                components["BertKPrec"] = kprec_by_item[i]
                value = rb_agg(recall_by_item[i], rouge, kprec_by_item[i])
            else:  # no passages: as in the benchmark's scripts, no BertKPrec and RB_agg is 0
                value = 0.0
            results.append(self.result(value=value, label=f"{value:.4f}", model=model,
                                       details={**components, "bertscore_model": model}))
        return results
