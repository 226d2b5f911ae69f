"""Reading, validating and comparing the summaries runs write (summary.json, run.json, `--format json`)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ragjudge.testing.conformance.case import ConformanceError


def read_output_json(path: Path) -> dict[str, Any]:
    """A JSON file a command wrote (summary.json, run.json, an export); ConformanceError if it cannot be read."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConformanceError(f"{path}: cannot be read as JSON ({exc})") from None


def validate(data: Any, model: Any, schema: dict[str, Any], where: str) -> list[str]:
    """Every way `data` fails the Summary `model` and its JSON `schema`."""
    import jsonschema
    from pydantic import ValidationError

    problems = []
    try:
        model.model_validate(data)
    except ValidationError as exc:
        problems.append(f"{where} does not validate against the Summary model: {str(exc).splitlines()[:3]}")
    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as exc:
        problems.append(f"{where} does not validate against the JSON Schema: {exc.message[:300]} at "
                        f"{'/'.join(str(p) for p in exc.absolute_path)}")
    return problems


def without_time(summary: dict[str, Any]) -> dict[str, Any]:
    run = summary.get("run")
    return {**summary, "run": {k: v for k, v in run.items() if k != "seconds"}} if isinstance(run, dict) else summary


def differences(want: dict[str, Any], got: dict[str, Any], volatile: Callable[[str, Mapping[str, Any]], bool],
                rel_tol: float = 0.0) -> list[str]:
    """Where two summaries of the same run differ: samples, errors, every metric's figures and every breakdown
    group's (volatile metrics aside), the headline."""

    def same(a: Any, b: Any) -> bool:
        if rel_tol and isinstance(a, float) and isinstance(b, float):
            return math.isclose(a, b, rel_tol=rel_tol, abs_tol=rel_tol * 1e-2)
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
            return all(same(x, y) for x, y in zip(a, b))
        if isinstance(a, dict) and isinstance(b, dict) and set(a) == set(b):
            return all(same(a[k], b[k]) for k in a)
        return a == b

    diffs = []
    for key in ("n_samples", "n_errors"):
        if want.get(key) != got.get(key):
            diffs.append(f"{key} {want.get(key)} → {got.get(key)}")
    metrics_want, metrics_got = want.get("metrics") or {}, got.get("metrics") or {}
    if set(metrics_want) != set(metrics_got):
        diffs.append(f"metrics {sorted(set(metrics_want) ^ set(metrics_got))} only in one")
    kept = {name for name, m in metrics_want.items() if not volatile(name, m)}
    for name in sorted(kept & set(metrics_got)):
        a, b = metrics_want[name], metrics_got[name]
        for part in ("value", "n", "errors", "std", "ci"):
            if not same(a.get(part), b.get(part)):
                diffs.append(f"{name}.{part} {a.get(part)} → {b.get(part)}")
    for key, breakdown in (want.get("breakdowns") or {}).items():
        other = (got.get("breakdowns") or {}).get(key)
        if other is None:
            diffs.append(f"breakdown {key} missing")
            continue
        groups_a, groups_b = breakdown.get("groups") or {}, other.get("groups") or {}
        if set(groups_a) != set(groups_b):
            diffs.append(f"breakdown {key}: groups {sorted(set(groups_a) ^ set(groups_b))} only in one")
            continue
        for group, stats in groups_a.items():
            for name, stat in (stats.get("metrics") or {}).items():
                if name in kept and not same(stat, (groups_b[group].get("metrics") or {}).get(name)):
                    diffs.append(f"breakdown {key}/{group}/{name} {stat} → "
                                 f"{(groups_b[group].get('metrics') or {}).get(name)}")
    head_a, head_b = want.get("headline") or {}, got.get("headline") or {}
    if head_a.get("metric") in kept and not same(head_a.get("value"), head_b.get("value")):
        diffs.append(f"headline {head_a.get('text')!r} → {head_b.get('text')!r}")
    return diffs
