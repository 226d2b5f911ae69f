"""The run's record of submitted batches (`batches.jsonl` beside `usage.jsonl`), so a restart never submits twice.

One line per event, appended and synced before anything else happens: `submitted` (batch id, input file id,
endpoint, model, the custom ids = response-cache keys; `adopted` when it was found at the provider rather than
journaled at creation) and `finished` (its answers are in the response cache). A request whose key is in a
submitted, unfinished batch waits for that batch. A torn last line (a kill mid-write) is skipped.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from ragjudge.formats.jsonl import JsonlAppender, read_jsonl


@dataclass
class JournaledBatch:
    batch_id: str
    input_file_id: str
    endpoint: str
    model: str
    """The model's name as the user wrote it (its route, usage and progress bar)."""
    keys: list[str] = field(default_factory=list)
    adopted: bool = False
    finished: str | None = None
    """The batch's final status once its answers were read back, else None."""


class BatchJournal:
    """`path=None` keeps the record in memory only (a run that writes no files cannot resume anyway)."""

    def __init__(self, path: Path | None):
        self.path = path
        self.batches: dict[str, JournaledBatch] = {}
        self._open: dict[str, str] = {}
        self._out: JsonlAppender | None = None
        if path is not None and path.exists():
            self._load(path)

    def _load(self, path: Path) -> None:
        for _, event in read_jsonl(path, tolerate_truncated_tail=True):
            if not isinstance(event.get("batch_id"), str):
                continue
            if event.get("event") == "submitted":
                fields = {k: event[k] for k in JournaledBatch.__dataclass_fields__ if k in event}
                try:
                    self._remember(JournaledBatch(**fields))
                except TypeError:
                    continue
            elif event.get("event") == "finished" and event["batch_id"] in self.batches:
                self._forget(event["batch_id"], str(event.get("status") or "unknown"))

    # -- queries --------------------------------------------------------------------------------------

    def open_batch(self, key: str) -> JournaledBatch | None:
        """The submitted, unfinished batch that holds `key`, if any."""
        batch_id = self._open.get(key)
        return self.batches[batch_id] if batch_id is not None else None

    # -- events ---------------------------------------------------------------------------------------

    def submitted(self, batch: JournaledBatch) -> None:
        self._remember(batch)
        self._write({"event": "submitted", **{k: v for k, v in asdict(batch).items() if k != "finished"}})

    def finished(self, batch_id: str, status: str) -> None:
        self._forget(batch_id, status)
        self._write({"event": "finished", "batch_id": batch_id, "status": status})

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None

    def _remember(self, batch: JournaledBatch) -> None:
        self.batches[batch.batch_id] = batch
        if batch.finished is None:
            for key in batch.keys:
                self._open[key] = batch.batch_id

    def _forget(self, batch_id: str, status: str) -> None:
        batch = self.batches[batch_id]
        batch.finished = status
        for key in batch.keys:
            if self._open.get(key) == batch_id:
                del self._open[key]

    def _write(self, event: dict[str, object]) -> None:
        if self.path is None:
            return
        if self._out is None:  # a sync per line (one per batch): a paid submission survives even a crash
            self._out = JsonlAppender(self.path, sync_every=0)
        self._out.append(event)
