"""Checks 1 and 2: every system's summary keeps the result contract (`check_schema`) and its sample log the sample
record (`check_samples`), and several systems run and are reported together (`check_systems`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ragjudge.testing.conformance.case import CheckReport
from ragjudge.testing.conformance.outcomes import is_html
from ragjudge.testing.conformance.runs import BenchRuns, CleanRun
from ragjudge.testing.conformance.summaries import validate, without_time


class ContractChecks(BenchRuns):
    def check_schema(self) -> CheckReport:
        """summary.json and `--format json` keep the contract; the text output ends with the headline."""
        from ragjudge.engine.summary import SCHEMA_ID, Summary, json_schema

        report = CheckReport("schema", self.name)
        schema = json_schema()
        for system in range(len(self.case.systems)):
            run = self.clean(system)
            summary = run.summary
            problems = validate(summary, Summary, schema, "summary.json")
            if summary.get("schema") != SCHEMA_ID:
                problems.append(f"summary.json: schema is {summary.get('schema')!r}, not {SCHEMA_ID!r}")
            if summary.get("bench") != self.name:
                problems.append(f"summary.json: bench is {summary.get('bench')!r}, not {self.name!r}")
            headline = summary.get("headline") or {}
            metric = (summary.get("metrics") or {}).get(headline.get("metric"))
            if not headline:
                problems.append("summary.json has no headline")
            elif metric is None:
                problems.append(f"the headline names {headline.get('metric')!r}, which is not a metric")
            elif metric.get("value") != headline.get("value"):
                problems.append(f"the headline's value {headline.get('value')} is not its metric's "
                                f"{metric.get('value')}")
            try:
                printed = json.loads(run.json.out)
            except json.JSONDecodeError as exc:
                problems.append(f"--format json printed something that is not JSON ({exc}): {run.json.out[:200]!r}")
            else:
                problems += validate(printed, Summary, schema, "--format json")
                if without_time(printed) != without_time(summary):
                    problems.append("--format json differs from the summary.json it wrote")
            last = run.text.out.rstrip().splitlines()[-1].strip() if run.text.out.strip() else ""
            text_headline = ((run.text_summary or {}).get("headline") or {}).get("text")
            if text_headline is not None and last != text_headline.strip():
                problems.append(f"the text output's last line is {last!r}, not the headline {text_headline!r}")
            if "Traceback" in run.text.err or "Traceback" in run.json.err:
                problems.append("a traceback on stderr")
            if run.text_summary is not None and (diff := self._differences(run.text_summary, summary)):
                problems.append("rerunning a finished run changed its summary: " + "; ".join(diff[:5]))
            report.add(run.where, problems + self._inputs_problems(run) + run.problems)
        return report

    def check_samples(self) -> CheckReport:
        """samples.jsonl: one `ragjudge.sample/1` record per sample (the model and its published JSON Schema), unique
        ids, as many as the summary counts, and the summary's breakdown dimensions among the samples' labels (so a
        reader of samples can break figures down as the bench does)."""
        from ragjudge.formats.samples import Sample, json_schema

        report = CheckReport("samples", self.name)
        schema = json_schema()
        for system in range(len(self.case.systems)):
            run = self.clean(system)
            path = run.out / "samples.jsonl"
            if not path.is_file():
                report.problems.append(f"{run.where}: no samples.jsonl in the run folder")
                continue
            lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            problems = [p for n, line in enumerate(lines, 1) for p in validate(line, Sample, schema,
                                                                                f"samples.jsonl:{n}")]
            ids = [line.get("id") for line in lines]
            if len(set(ids)) != len(ids):
                problems.append("samples.jsonl repeats a sample id")
            if len(lines) != run.summary.get("n_samples"):
                problems.append(f"samples.jsonl has {len(lines)} samples, the summary counts "
                                f"{run.summary.get('n_samples')}")
            labels = {k for line in lines for k in (line.get("labels") or {})}
            missing = [d for d in (run.summary.get("breakdowns") or {}) if d not in labels]
            if missing:
                problems.append(f"no sample is labelled by the summary's breakdown(s) {', '.join(missing)}")
            report.add(run.where, problems[:10])
        return report

    def _inputs_problems(self, run: CleanRun) -> list[str]:
        inputs = run.run_info.get("inputs")
        if not isinstance(inputs, list):
            return ["run.json has no `inputs` list"]
        problems = []
        root = self.data.resolve()
        under = [e for e in inputs if isinstance(e, dict) and Path(str(e.get("path"))).resolve().is_relative_to(root)]
        if not under:
            problems.append(f"run.json `inputs` lists no file under the data folder {root} (read data through "
                            "ragjudge.formats.files, so errors can name the file and runs record what they read)")
        for entry in under:
            path = Path(str(entry["path"]))
            if not path.is_file():
                problems.append(f"run.json input {path} is not a file")
            elif entry.get("sha256") != hashlib.sha256(path.read_bytes()).hexdigest():
                problems.append(f"run.json input {path}: sha256 {entry.get('sha256')} is not the file's")
        return problems

    def check_systems(self) -> CheckReport:
        """Every system runs (exit 0); at least two are declared, with different options; report shows them all."""
        report = CheckReport("systems", self.name)
        if len(self.case.systems) < 2:
            report.problems.append("declare at least two systems or configurations (e.g. two --gen, --pipeline or "
                                   "-T option sets)")
        runs = [self.clean(system) for system in range(len(self.case.systems))]
        for run in runs:
            report.add(f"system {run.system}", [run.text.shown()] if run.text.code else [])
        options = [json.dumps((r.summary.get("run") or {}).get("options"), sort_keys=True) for r in runs]
        if len(set(options)) < len(options):
            report.problems.append("two systems ran with the same options: they are one configuration")
        if len(runs) > 1:
            html = self._fresh("report-systems") / "report.html"
            done = self.cli(["report", *[str(r.out) for r in runs], "--out", str(html)])
            report.add("report of every system together", [done.shown()] if done.code or not is_html(html) else [])
        return report
