"""MTRAG's generation settings: which passages the generator sees (the paper's Section 5)."""

from __future__ import annotations

from ragjudge.errors import UsageError
from ragjudge.generation import GenerationInput
from ragjudge.models import Passage, Task

SETTINGS = ("reference", "reference+rag", "rag")
RAG_PASSAGES = 5
"""The paper's N: passages the generator sees in the reference+rag and rag settings."""
MAX_REFERENCES_FOR_TOP_UP = 2
"""reference+rag only uses tasks with at most this many reference passages, as in the paper."""
WITHOUT_PASSAGES = ("UNANSWERABLE", "CONVERSATIONAL")
"""In the reference setting these turns are answered from no passage at all."""


def check_setting(setting: str) -> None:
    if setting not in SETTINGS:
        raise UsageError(f"unknown setting {setting!r} (available: {', '.join(SETTINGS)})")


def needs_retrieval(setting: str) -> bool:
    check_setting(setting)
    return setting != "reference"


def tasks_for_setting(tasks: list[Task], setting: str) -> list[Task]:
    """reference+rag keeps only tasks with at most two reference passages (room for retrieved ones)."""
    check_setting(setting)
    return [t for t in tasks if setting != "reference+rag" or len(t.contexts) <= MAX_REFERENCES_FOR_TOP_UP]


def reference_passages(task: Task) -> list[Passage]:
    """What the generator sees in the reference setting: the task's reference passages, none for unanswerable or
    conversational turns."""
    return [] if task.answerability in WITHOUT_PASSAGES else list(task.contexts)


def generation_inputs(tasks: list[Task], setting: str,
                      retrieved: dict[str, list[Passage]] | None = None) -> list[GenerationInput]:
    """Which passages the generator sees in `setting` (docs/benches/mtrag.md). A reference passage takes its own
    retrieval score if it was retrieved, else the top retrieved score (it ranks first); each carries `origin`.
    """
    check_setting(setting)
    if setting == "reference":
        return [GenerationInput(t, reference_passages(t)) for t in tasks]
    if retrieved is None:
        raise UsageError(f"setting {setting} needs retrieved passages: pass --pipeline and --corpus")
    inputs = []
    for task in tasks:
        ranked = [p.model_copy(update={"metadata": {**p.metadata, "origin": "retrieved"}})
                  for p in retrieved.get(task.key, [])]
        if setting == "rag":
            inputs.append(GenerationInput(task, ranked[:RAG_PASSAGES]))
            continue
        by_id = {p.document_id: p for p in ranked}
        top = max((p.score for p in ranked if p.score is not None), default=1.0)
        chosen = []
        for ref in task.contexts:
            hit = by_id.get(ref.document_id)
            score = hit.score if hit is not None and hit.score is not None else top
            chosen.append(ref.model_copy(update={"score": score, "metadata": {**ref.metadata, "origin": "reference"}}))
        seen = {p.document_id for p in chosen}
        chosen += [p for p in ranked if p.document_id not in seen][: max(0, RAG_PASSAGES - len(chosen))]
        inputs.append(GenerationInput(task, chosen))
    return inputs
