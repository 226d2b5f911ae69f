"""Check 6: a run's files feed the other commands (`report`, `export` and `correlate` read its sample log,
`retrieval-eval` its run files), and each of them refuses a line whose field is mistyped with one line naming
`file:line` and the field."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ragjudge.testing.conformance.case import CheckReport, NotApplicable
from ragjudge.testing.conformance.outcomes import is_html, one_line_error
from ragjudge.testing.conformance.runs import BenchRuns
from ragjudge.testing.conformance.summaries import read_output_json, validate


class DownstreamChecks(BenchRuns):
    def check_downstream(self) -> CheckReport:
        """Every command that applies: report, retrieval-eval (run files written), export and correlate (judged)."""
        report = self.check_report()
        if self.retrieval_runs():
            report.merge(self.check_retrieval_eval())
        if self.case.judged:
            report.merge(self.check_export()).merge(self.check_correlate())
        return report

    def check_report(self) -> CheckReport:
        return self._check_writer("report", "report.html", is_html)

    def check_export(self) -> CheckReport:
        return self._check_writer("export", "export.json", Path.exists)

    def _check_writer(self, command: str, file_name: str, written: Callable[[Path], bool]) -> CheckReport:
        """`ragjudge COMMAND RUN --out FILE` writes FILE from the clean run, and refuses a mistyped results line."""
        report = CheckReport(command, self.name)
        clean = self.clean(0)
        target = self._fresh(command) / file_name
        done = self.cli([command, str(clean.out), "--out", str(target)])
        if done.code != 0 or not written(target):
            report.problems.append(f"{command} of the clean run: {done.shown()}")
        else:
            report.passed.append(command)
        self._mistyped(clean.out / "samples.jsonl", report, lambda run, path: [
            command, str(run), "--out", str(path.parent / file_name)], folder=True)
        return report

    def retrieval_runs(self) -> list[tuple[Path, Path]]:
        """(run file, qrels) pairs `retrieval-eval` is checked on: declared, or the bench's run*.trec + qrels.trec."""
        out = self.clean(0).out
        if self.case.retrieval is not None:
            return [(out / run, Path(self._fill([qrels], self.data)[0])) for run, qrels in self.case.retrieval]
        qrels = out / "qrels.trec"
        return [(run, qrels) for run in sorted(out.glob("run*.trec"))] if qrels.exists() else []

    def check_retrieval_eval(self) -> CheckReport:
        from ragjudge.engine.summary import Summary, json_schema

        report = CheckReport("retrieval-eval", self.name)
        pairs = self.retrieval_runs()
        if not pairs:
            report.skipped.append("the bench writes no run file (run*.trec with qrels.trec) and the case declares none")
        for run, qrels in pairs:
            if not run.exists():
                report.problems.append(f"{run.name}: the declared run file was not written")
                continue
            done = self.cli(["retrieval-eval", str(run), "--qrels", str(qrels), "--format", "json"])
            problems = [] if done.code == 0 else [done.shown()]
            if done.code == 0:
                try:
                    problems += validate(json.loads(done.out), Summary, json_schema(), "its --format json")
                except json.JSONDecodeError:
                    problems.append(f"--format json printed no JSON: {done.out[:200]!r}")
            if problems:
                report.problems.append(f"retrieval-eval {run.name}: " + "; ".join(problems))
            else:
                report.passed.append(f"retrieval-eval {run.name}")
            self._mistyped(run, report, lambda _, path, qrels=qrels: [
                "retrieval-eval", str(path), "--qrels", str(qrels), "--format", "json"])
        return report

    def check_correlate(self) -> CheckReport:
        """correlate against ratings the kit makes up from the exported tasks: the plumbing, not the figures."""
        report = CheckReport("correlate", self.name)
        clean = self.clean(0)
        folder = self._fresh("correlate")
        exported = folder / "export.json"
        done = self.cli(["export", str(clean.out), "--out", str(exported)])
        if done.code != 0:
            report.problems.append(f"export (needed to make the ratings): {done.shown()}")
            return report
        humans, model = made_up_ratings(read_output_json(exported))
        (folder / "humans.json").write_text(json.dumps(humans))
        common = ["--bootstrap", "0", "--format", "json"]
        done = self.cli(["correlate", str(folder / "humans.json"), "--judges", f"{model}={clean.out}", *common])
        if done.code != 0:
            report.problems.append(f"correlate: {done.shown()}")
        else:
            report.passed.append("correlate")
        self._mistyped(clean.out / "samples.jsonl", report, lambda run, path: [
            "correlate", str(folder / "humans.json"), "--judges", f"{model}={run}", *common], folder=True)
        return report

    def _mistyped(self, results: Path, report: CheckReport, command: Callable[[Path, Path], list[str]], *,
                  folder: bool = False) -> None:
        """Each candidate field of one results line replaced by a string: exit 2 naming file:line and field."""
        if not results.exists():
            report.problems.append(f"{results.name} was not written")
            return
        try:
            faults = list(mistyped_fields(results))
        except NotApplicable as why:
            report.skipped.append(f"mistyped field in {results.name}: {why}")
            return
        for line, key, text in faults:
            place = self._fresh(f"mistyped-{report.check}-{key}")
            # the whole run folder when asked (report and export read run.json beside the results)
            run = shutil.copytree(results.parent, place / "run") if folder else place / results.name
            path = run / results.name if folder else run
            lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
            lines[line - 1] = text
            path.write_text("".join(lines), encoding="utf-8")
            done = self.cli(command(run, path))
            problems = one_line_error(done, [f"{path}:{line}"], (key,) if key else ())
            label = f"{report.check}: {results.name} line {line} {'field ' + repr(key) if key else ''} mistyped"
            report.add_refusal(label, done, problems)


def mistyped_fields(results: Path) -> Iterator[tuple[int, str, str]]:
    """(line, field, new line text) for one results line's fields replaced by a string: its objects (e.g.
    `metrics`), else its lists, else its numbers and booleans. JSON Lines; TREC runs: the rank and score."""
    text = results.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    numbered = [(i + 1, line) for i, line in enumerate(lines) if line.strip()]
    if not numbered:
        raise NotApplicable("the file is empty")
    number, line = numbered[1] if len(numbered) > 1 else numbered[0]
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        columns = line.split()
        if len(columns) == 6:  # a TREC run line: qid Q0 docid rank score tag
            for index, name in ((3, "rank"), (4, "score")):
                changed = list(columns)
                changed[index] = "high"
                yield number, name, " ".join(changed) + "\n"
            return
        raise NotApplicable("neither JSON Lines nor a TREC run") from None
    if not isinstance(record, dict):
        raise NotApplicable("its lines are not JSON objects")
    for kinds in ((dict,), (list,), (int, float, bool)):
        keys = [k for k, v in record.items() if isinstance(v, kinds)]
        if keys:
            for key in keys:
                yield number, key, json.dumps({**record, key: "high"}, ensure_ascii=False) + "\n"
            return
    raise NotApplicable("no field but text")


def made_up_ratings(exported: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """An InspectorRAGet file with the exported tasks and one human metric, rated 1-4 by two made-up annotators."""
    evaluations = exported.get("evaluations") or []
    models = [m.get("model_id") for m in exported.get("models") or []]
    model = str(models[0] if models else (evaluations[0].get("model_id") if evaluations else "model"))
    for i, ev in enumerate(evaluations):
        ev["annotations"] = {"kit_rating": {"a1": {"value": 1 + i % 4}, "a2": {"value": 1 + (i * 3 + 1) % 4}}}
    humans = {**exported, "metrics": [{"name": "kit_rating", "display_name": "kit_rating", "author": "human",
                                       "type": "numerical", "aggregator": "average", "range": [1, 4, 1]}],
              "evaluations": evaluations}
    return humans, model
