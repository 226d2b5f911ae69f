"""The run's small logs (usage.jsonl, batches.jsonl) survive a kill mid-write like the journal does: a torn last
line is cut before the next invocation appends, so it cannot swallow the first new event."""

from __future__ import annotations

from pathlib import Path

from ragjudge.llm.batch_journal import BatchJournal, JournaledBatch
from ragjudge.llm.usage import UsageTracker, logged_usage


def test_usage_after_a_torn_line_counts_every_new_event(tmp_path: Path) -> None:
    log = tmp_path / "usage.jsonl"
    first = UsageTracker(log=log)
    first.record("openai/j", requests=1)
    first.close()
    with log.open("a") as fh:
        fh.write('{"model": "openai/j", "requ')  # killed mid-write
    assert logged_usage(log)["openai/j"]["requests"] == 1
    resumed = UsageTracker(log=log)
    resumed.record("openai/j", requests=1)
    resumed.record("openai/j", calls=1)
    resumed.close()
    totals = logged_usage(log)["openai/j"]
    assert totals["requests"] == 2 and totals["calls"] == 1


def test_a_batch_submitted_after_a_torn_line_is_remembered(tmp_path: Path) -> None:
    path = tmp_path / "batches.jsonl"
    path.write_text('{"event": "submitted", "batch_id": "b0", "input_fi')  # killed mid-write
    journal = BatchJournal(path)
    journal.submitted(JournaledBatch("b1", "f1", "http://x/v1", "openai/j", keys=["k1"]))
    journal.close()
    again = BatchJournal(path)
    assert again.open_batch("k1") is not None and again.open_batch("k1").batch_id == "b1"  # never submitted twice
