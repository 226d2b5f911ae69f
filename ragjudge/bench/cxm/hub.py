"""Fetch the public CXMArena release from the Hugging Face Hub as `<out>/<Config>/<split>.jsonl`, columns unchanged.

An unreachable hub (no network, `HF_HUB_OFFLINE` with nothing cached) is the environment saying no, not bad input:
one line, exit 3 (`EnvironmentFault`), saying where to get the data by hand. One quick request comes first, so a
machine without network hears it in a second rather than after `datasets`' retries (half a minute of log lines).
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragjudge.errors import EnvironmentFault, RagjudgeError
from ragjudge.formats.jsonl import write_jsonl

REPO = "sprinklr-huggingface/CXM_Arena"
PROBE_TIMEOUT = 15.0
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
    from datasets import load_dataset  # a dependency of ragas, as huggingface_hub is of transformers

    return load_dataset(repo, config)


def _endpoint() -> str:
    """The hub `datasets` will call: huggingface_hub's endpoint ($HF_ENDPOINT, else https://huggingface.co)."""
    from huggingface_hub import constants

    return str(constants.ENDPOINT).rstrip("/")


def _offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def _by_hand(repo: str) -> str:
    return (f"get it where there is network (`ragjudge cxm fetch --out DIR`, or {_endpoint()}/datasets/{repo}) "
            "and pass that folder with --data")


def _unreachable(exc: BaseException) -> bool:
    """The request never got an answer from the hub: refused, DNS, no route, timed out, or offline mode."""
    from ragjudge.llm.faults import is_connection_error

    names = {"ConnectError", "ConnectTimeout", "ReadTimeout", "TimeoutException", "NetworkError", "ProxyError",
             "OfflineModeIsEnabled", "LocalEntryNotFoundError"}
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (ConnectionError, TimeoutError, socket.gaierror)) or \
                any(k.__name__ in names for k in type(current).__mro__):
            return True
        current = current.__cause__ or current.__context__
    return is_connection_error(exc)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]


def check_hub(repo: str = REPO) -> None:
    """One quick request (the dataset's page on the hub's API) before `datasets` starts: raise EnvironmentFault
    when the hub cannot be reached. Any answer, even an error, means it can: `datasets` then says what is wrong."""
    if _offline():  # no request at all: datasets reads its cache, or says it has nothing
        return
    from huggingface_hub import HfApi

    try:
        HfApi(endpoint=_endpoint()).dataset_info(repo, timeout=PROBE_TIMEOUT)
    except Exception as exc:
        if _unreachable(exc):
            raise EnvironmentFault(f"cannot reach the Hugging Face Hub at {_endpoint()} to fetch {repo}: "
                                   f"{_reason(exc)}; {_by_hand(repo)}") from None


def fetch(out: Path, configs: list[str] | None = None,
          load: Callable[[str, str], Any] = _hf_load, repo: str = REPO) -> list[Path]:
    """Download (through the Hugging Face cache) and write each split as JSONL. Returns the files written.

    EnvironmentFault (exit 3) when the hub cannot be reached; RagjudgeError (exit 2) for anything else."""
    selected = configs or list(CONFIGS)
    for config in selected:
        if config not in CONFIGS:
            raise RagjudgeError(f"unknown CXMArena config {config!r} (available: {', '.join(CONFIGS)})")
    if load is _hf_load:
        check_hub(repo)
    written = []
    for config in selected:
        try:
            dataset = load(repo, config)
        except Exception as exc:  # network, auth, hub errors: one line, what to do next
            if _unreachable(exc):
                offline = " (HF_HUB_OFFLINE is set: unset it to download)" if _offline() else ""
                raise EnvironmentFault(f"cannot reach the Hugging Face Hub at {_endpoint()} to fetch {repo} config "
                                       f"{config}{offline}: {_reason(exc)}; {_by_hand(repo)}") from None
            raise RagjudgeError(f"could not load {repo} config {config}: {_reason(exc)}") from None
        for split in CONFIGS[config]:
            if split not in dataset:
                continue
            path = out / config / f"{split}.jsonl"
            write_jsonl(path, (dict(row) for row in dataset[split]))
            written.append(path)
    return written
