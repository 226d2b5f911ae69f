"""Check 3 (`check_resume`): a run stopped part-way and rerun gives the clean run's figures, reusing what it had
finished: its journals cut as a kill leaves them (`resume="truncate"`: no race with a fast bench), or a real SIGKILL
(`resume="kill"`)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from ragjudge.testing.conformance.case import CheckReport
from ragjudge.testing.conformance.cli import OFFLINE_ENV
from ragjudge.testing.conformance.runs import BenchRuns, CleanRun
from ragjudge.testing.conformance.summaries import read_output_json

JOURNALS = ("predictions.jsonl", "judgements.jsonl")


class ResumeCheck(BenchRuns):
    def check_resume(self) -> CheckReport:
        """A run stopped part-way and rerun gives the clean run's figures, reusing what it had finished."""
        report = CheckReport(f"resume ({self.case.resume})", self.name)
        clean = self.clean(0)
        if self.case.resume == "kill":
            self._resume_after_kill(clean, report)
            return report
        journaled = False
        for stage, keep in zip(("solving", "scoring"), JOURNALS):
            records = journal_records(clean.out / keep)
            journaled = journaled or bool(records)
            if len(records) < 2:
                continue
            folder = self._fresh(f"resume-{stage}") / "run"
            folder.mkdir()
            if stage == "scoring" and (clean.out / "predictions.jsonl").exists():
                shutil.copy2(clean.out / "predictions.jsonl", folder / "predictions.jsonl")
            write_prefix(clean.out / keep, folder / keep, len(records) // 2)
            self._rerun_and_compare(clean, folder, f"stopped while {stage}", report)
        if not journaled:  # the bench journals nothing (its outputs are on disk already): a kill loses only the lock
            folder = self._fresh("resume-nothing-journaled") / "run"
            folder.mkdir()
            (folder / ".ragjudge.lock").write_text("0")
            self._rerun_and_compare(clean, folder, "stopped before anything was journaled (the bench journals "
                                    "nothing)", report)
        return report

    def _rerun_and_compare(self, clean: CleanRun, folder: Path, label: str, report: CheckReport,
                           env: Mapping[str, str] | None = None) -> None:
        done = self.cli(self.eval_args(0, self.data, folder, ["--format", "json"]), env)
        if done.code != clean.text.code:
            report.problems.append(f"{label}, rerun: {done.shown()} (the clean run exited {clean.text.code})")
            return
        summary = read_output_json(folder / "summary.json")
        if diff := self._differences(clean.summary, summary):
            report.problems.append(f"{label}: the resumed run's figures differ from a clean run's: "
                                   + "; ".join(diff[:8]))
            return
        for journal in JOURNALS:
            want, got = journal_keys(clean.out / journal), journal_keys(folder / journal)
            if sorted(got) != sorted(want):
                dup = len(got) - len(set(got))
                report.problems.append(f"{label}: {journal} after resuming holds {len(got)} records ({dup} "
                                       f"repeated), a clean run {len(want)}: finished work was not reused")
                return
        report.passed.append(label)

    def _resume_after_kill(self, clean: CleanRun, report: CheckReport) -> None:
        place = self._fresh("resume-kill")
        folder = place / "run"
        args = self.eval_args(0, self.data, folder)
        cache = {"RAGJUDGE_CACHE_DIR": str(place / "cache")}  # not the clean run's: its answers would come at once
        env = {**os.environ, **OFFLINE_ENV, **self.env(), **cache}
        env["PYTHONPATH"] = os.pathsep.join(self._import_path())
        with (place / "stderr.txt").open("w") as stderr:
            proc = subprocess.Popen([sys.executable, "-m", "ragjudge", *args], stdout=subprocess.DEVNULL,
                                    stderr=stderr, env=env)
        try:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and proc.poll() is None:
                if sum(len(journal_records(folder / j)) for j in JOURNALS) >= self.case.kill_after:
                    proc.send_signal(signal.SIGKILL)
                    break
                time.sleep(0.02)
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if proc.returncode != -signal.SIGKILL:
            err = (place / "stderr.txt").read_text(errors="replace").strip()[-600:]
            report.problems.append(f"the run ended (exit {proc.returncode}) before {self.case.kill_after} records "
                                   f"were journaled and it could be killed (use resume='truncate' for a fast bench); "
                                   f"`{shlex.join(['ragjudge', *args])}` stderr: {err or '(empty)'}")
            return
        if (folder / "summary.json").exists():
            report.problems.append("a killed run left a summary.json")
        self._rerun_and_compare(clean, folder, "killed", report, cache)


def journal_records(path: Path) -> list[bytes]:
    """The complete lines of a journal (a torn last line left out)."""
    return [line for line in path.read_bytes().split(b"\n")[:-1] if line.strip()] if path.is_file() else []


def journal_keys(path: Path) -> list[tuple[str, str]]:
    """(stage, sample) of each finished record (failures are retried on resume, so they may repeat)."""
    keys = []
    for line in journal_records(path):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        value = record.get("value")
        if isinstance(value, dict) and not value.get("error"):
            keys.append((str(record.get("stage")), str(record.get("key"))))
    return keys


def write_prefix(journal: Path, dest: Path, keep: int) -> None:
    """The first `keep` records of `journal` and half of the next: what a kill mid-write leaves."""
    records = journal_records(journal)
    torn = records[keep][: max(1, len(records[keep]) // 2)] if keep < len(records) else b""
    dest.write_bytes(b"".join(r + b"\n" for r in records[:keep]) + torn)
