"""The trust figures of a run, read from its sample log (`ragjudge.sample/1`): what `ragjudge.api.trust` exports and
`label-sample`, `correlate RUN --labels`, `report --human-labels` and `assert_mean` call."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragjudge.errors import InputError, UsageError
from ragjudge.formats.samples import Sample, iter_samples, locate_run, run_sample_log
from ragjudge.trust.bootstrap import judge_only_difference, judge_only_mean
from ragjudge.trust.intervals import Interval
from ragjudge.trust.labels import Label, by_metric, is_pass_fail, read_labels
from ragjudge.trust.ppi import labels_only_mean, ppi_mean, ppi_paired_difference

LABEL_SAMPLE_SCHEMA = "ragjudge.label-sample/1"
DISAGREEMENTS_SHOWN = 20


def run_samples(run: str | Path | list[Sample]) -> list[Sample]:
    """The samples of RUN (a run folder, results file or sample log), or the samples themselves."""
    if isinstance(run, list):
        return run
    path = run_sample_log(Path(run))
    samples = [s for _, s in iter_samples(path)]
    if not samples:
        raise InputError("contains no samples", file=str(path))
    return samples


def judge_values(samples: list[Sample], metric: str) -> dict[str, float]:
    """sample id → the judge's value of `metric` (samples where it failed or was not scored are left out)."""
    return {s.id: s.scores[metric].value for s in samples
            if metric in s.scores and s.scores[metric].value is not None}


# --------------------------------------------------------------------------- which samples to label


@dataclass
class LabelSample:
    path: Path
    run: str
    ids: list[str]
    n: int
    seed: int
    strata: str | None


def default_label_sample_path(run: str | Path) -> Path:
    """`RUN/label-sample.json` for a run folder; `<stem>.label-sample.json` beside a results file."""
    run = Path(run)
    samples, _, _ = locate_run(run)
    if run.is_dir() or samples.name == "samples.jsonl":
        return samples.with_name("label-sample.json")
    return samples.with_name(samples.name.removesuffix(".samples.jsonl") + ".label-sample.json")


def _stratum(sample: Sample, field: str) -> str | None:
    value = sample.labels.get(field, sample.metadata.get(field))
    if value is None:
        return None
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def label_sample(run: str | Path, *, n: int = 50, seed: int = 0, strata: str | None = None,
                 out: str | Path | None = None) -> LabelSample:
    """Draw n samples of RUN uniformly at random (within each stratum of the label or metadata field `strata`,
    proportionally) and write them as a `ragjudge.label-sample/1` JSON file for the report's labelling mode."""
    from ragjudge.formats.files import atomic_output, output_file
    from ragjudge.trust.sampling import draw

    if n < 1:
        raise UsageError(f"--n must be at least 1, got {n}")
    samples = [s for s in run_samples(run) if s.error is None]
    ids = [s.id for s in samples]
    if len(set(ids)) != len(ids):
        raise InputError("sample ids repeat in this run: a label could not say which sample it is for",
                         file=str(run_sample_log(Path(run))))
    by_stratum = None
    if strata:
        by_stratum = {s.id: _stratum(s, strata) for s in samples}
        if missing := [i for i, v in by_stratum.items() if v is None]:
            known = sorted({k for s in samples for k in (*s.labels, *s.metadata)})
            raise UsageError(f"--strata {strata}: sample {missing[0]!r} has no label or metadata field {strata!r} "
                             f"(fields: {', '.join(known) or 'none'})")
    drawn = draw(ids, n, seed, by_stratum)
    path = Path(out) if out is not None else default_label_sample_path(run)
    output_file(path, "label sample file (--out)")
    record = {"schema": LABEL_SAMPLE_SCHEMA, "run": str(run), "n": len(drawn), "seed": seed, "strata": strata,
              "n_samples": len(ids), "sample_ids": drawn}
    with atomic_output(path) as tmp:
        tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return LabelSample(path, str(run), drawn, n, seed, strata)


def read_label_sample(path: str | Path) -> list[str]:
    """The sample ids of a `ragjudge.label-sample/1` file, in the order drawn."""
    from ragjudge.formats.jsonl import read_json

    data = read_json(path, "label sample file")
    if not isinstance(data, dict) or data.get("schema") != LABEL_SAMPLE_SCHEMA:
        raise InputError(f"not a {LABEL_SAMPLE_SCHEMA} file (from `ragjudge label-sample`)", file=str(path),
                         field="schema")
    ids = data.get("sample_ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise InputError("must be a list of sample ids", file=str(path), field="sample_ids")
    return ids


# --------------------------------------------------------------------------- agreement and means with labels


def means(judge: dict[str, float], labels: dict[str, float], *, confidence: float = 0.95,
          seed: int = 0) -> dict[str, Interval | None]:
    """The metric's mean three ways: the judge's over every sample (bootstrap), the labels' alone, and PPI++."""
    labelled = [k for k in judge if k in labels]
    unlabelled = [k for k in judge if k not in labels]
    y = np.array([labels[k] for k in labelled])
    out: dict[str, Interval | None] = {
        "judge only": judge_only_mean(np.array(list(judge.values())), confidence=confidence, seed=seed),
        "labels only": labels_only_mean(y, confidence=confidence) if len(y) >= 2 else None,
        "ppi++": None,
    }
    if len(labelled) >= 2 and unlabelled:
        out["ppi++"] = ppi_mean(y, np.array([judge[k] for k in labelled]), np.array([judge[k] for k in unlabelled]),
                                confidence=confidence)
    return out


def agreement_with_labels(run: str | Path | list[Sample], labels: str | Path | list[Label], *, metrics: list[str] | None = None,
                          resamples: int = 1000, seed: int = 0, confidence: float = 0.95,
                          report: str = "report.html") -> dict[str, Any]:
    """Per labelled metric of RUN: how many samples are labelled, the judge's agreement with the labels (with
    bootstrap intervals), the disagreements (linked to their sample in `report`), and the mean three ways."""
    from ragjudge.trust.agreement import agreement

    label_list = _labels(labels)
    source = str(labels) if isinstance(labels, (str, Path)) else "labels"
    samples = run_samples(run)
    known = {s.id for s in samples}
    if unknown := sorted({label.sample_id for label in label_list} - known):
        raise InputError(f"sample {unknown[0]!r} is not in {_name(run)}" + (f" (and {len(unknown) - 1} more)"
                                                                     if len(unknown) > 1 else ""),
                         file=source, field="sample_id")
    labelled = by_metric(label_list)
    scored = sorted({m for s in samples for m in s.scores})
    wanted = metrics or sorted(labelled)
    for metric in wanted:
        if metric not in scored:
            raise UsageError(f"metric {metric!r} is not scored in {_name(run)} (scores there: "
                             f"{', '.join(scored) or 'none'})")
        if metric not in labelled:
            raise UsageError(f"no label for metric {metric!r} in {source} (labelled: {', '.join(labelled)})")
    rows = []
    for metric in wanted:
        judge = judge_values(samples, metric)
        keys = [k for k in judge if k in labelled[metric]]
        pass_fail = is_pass_fail(label_list, metric)
        row: dict[str, Any] = {"metric": metric, "n_labelled": len(keys), "n_samples": len(judge)}
        x = np.array([judge[k] for k in keys])
        y = np.array([labelled[metric][k] for k in keys])
        if len(keys) >= 3:
            figures = agreement(x, y, pass_fail=pass_fail, resamples=resamples, seed=seed, confidence=confidence)
            decisions = figures.pop("decisions", None)
            row["agreement"] = figures
            if decisions is not None:  # pass/fail: every sample the judge decided otherwise
                shown = [k for k, d, h in zip(keys, decisions, y.astype(bool), strict=True) if d != h]
            else:
                shown = sorted(keys, key=lambda k: -abs(judge[k] - labelled[metric][k]))[:DISAGREEMENTS_SHOWN]
            row["disagreements"] = [{"sample_id": k, "judge": judge[k], "label": bool(labelled[metric][k]) if pass_fail
                                     else labelled[metric][k], "link": f"{report}#task={k}"} for k in shown]
        else:
            row["agreement"] = None
            row["disagreements"] = []
        row["means"] = {k: v.as_dict() if v else None
                        for k, v in means(judge, labelled[metric], confidence=confidence, seed=seed).items()}
        rows.append(row)
    return {"run": _name(run), "labels": source, "confidence": confidence, "bootstrap": resamples, "seed": seed,
            "metrics": rows}


def _name(run: str | Path | list[Sample]) -> str:
    return "the run" if isinstance(run, list) else str(run)


# --------------------------------------------------------------------------- two runs on the same samples


def paired_difference(run_a: str | Path | list[Sample], run_b: str | Path | list[Sample], metric: str, *,
                      labels_a: str | Path | list[Label] | None = None, labels_b: str | Path | list[Label] | None = None,
                      confidence: float = 0.95, seed: int = 0) -> dict[str, Interval | None]:
    """B − A on the samples both runs scored: the judge-only (paired bootstrap) interval, and with labels of both
    runs' answers on the same samples, PPI++'s."""
    a, b = judge_values(run_samples(run_a), metric), judge_values(run_samples(run_b), metric)
    shared = [k for k in a if k in b]
    if len(shared) < 2:
        raise UsageError(f"{_name(run_a)} and {_name(run_b)} share {len(shared)} sample(s) with a {metric} score: a "
                         "paired difference needs the same samples in both")
    out: dict[str, Interval | None] = {
        "judge only": judge_only_difference(np.array([a[k] for k in shared]), np.array([b[k] for k in shared]),
                                            confidence=confidence, seed=seed),
        "ppi++": None,
    }
    if labels_a is not None and labels_b is not None:
        la = by_metric(_labels(labels_a)).get(metric, {})
        lb = by_metric(_labels(labels_b)).get(metric, {})
        lab = [k for k in shared if k in la and k in lb]
        unl = [k for k in shared if k not in lab]
        if len(lab) >= 2 and unl:
            arr = lambda d, ks: np.array([d[k] for k in ks])  # noqa: E731
            out["ppi++"] = ppi_paired_difference(arr(la, lab), arr(lb, lab), arr(a, lab), arr(b, lab),
                                                 arr(a, unl), arr(b, unl), confidence=confidence)
    return out


def _labels(labels: str | Path | list[Label]) -> list[Label]:
    return read_labels(labels) if isinstance(labels, (str, Path)) else list(labels)
