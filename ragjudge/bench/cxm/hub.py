"""Fetch the public CXMArena release from the Hugging Face Hub into the folder layout the loaders read:
`<out>/<Config>/<split>.jsonl`, one file per config and split, columns unchanged."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragjudge.errors import RagjudgeError
from ragjudge.formats.jsonl import write_jsonl

REPO = "sprinklr-huggingface/CXM_Arena"
CONFIGS = {
    "Intent_Prediction": ("train",),
    "Taxonomy": ("taxonomy_1", "taxonomy_2", "taxonomy_3"),
    "Agent_Quality_Adherence": ("train",),
    "Tool_Calling": ("train",),
    "Tools_Description": ("train",),
    "Multi_Turn": ("train",),
    "KB_Refinement": ("similarity_pairs", "contradictory_pairs"),
    "Article_Search": ("train",),
    "Articles": ("article_search_articles", "KB_refinement_articles", "multi_turn_articles"),
}
TASK_CONFIGS = {
    "intent": ("Intent_Prediction", "Taxonomy"),
    "quality": ("Agent_Quality_Adherence",),
    "tool-calls": ("Tool_Calling", "Tools_Description", "Articles"),
    "answer-classification": ("Multi_Turn", "Articles"),
    "kb-refinement": ("KB_Refinement", "Articles"),
    "article-search": ("Article_Search", "Articles"),
    "multiturn-retrieval": ("Multi_Turn", "Articles"),
}


def _hf_load(repo: str, config: str) -> Any:
    try:
        from datasets import load_dataset
    except ImportError:  # pragma: no cover - datasets ships with ragas
        raise RagjudgeError("fetching CXMArena needs the `datasets` package (pip install datasets)") from None
    return load_dataset(repo, config)


def fetch(out: Path, configs: list[str] | None = None,
          load: Callable[[str, str], Any] = _hf_load, repo: str = REPO) -> list[Path]:
    """Download (through the Hugging Face cache) and write each split as JSONL. Returns the files written."""
    written = []
    for config in configs or list(CONFIGS):
        if config not in CONFIGS:
            raise RagjudgeError(f"unknown CXMArena config {config!r} (available: {', '.join(CONFIGS)})")
        try:
            dataset = load(repo, config)
        except Exception as exc:  # network, auth, hub errors: one line, what to do next
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise RagjudgeError(f"could not load {repo} config {config}: {first[:200]}. Offline? Download the "
                                "dataset elsewhere and copy the folder, or set HF_HUB_OFFLINE=0") from None
        for split in CONFIGS[config]:
            if split not in dataset:
                continue
            path = out / config / f"{split}.jsonl"
            write_jsonl(path, (dict(row) for row in dataset[split]))
            written.append(path)
    return written
