"""How often the offline judges are right, on labelled answers: precision, recall, false alarms, the misses.

Sets (from the shared development data, `../shared/data` or $RAGJUDGE_SHARED_DATA; never copied into ragjudge):
- `idk_lexical` on the MTRAG-UN reference answers (`mtrag-un/generation/reference.jsonl`): those of UNANSWERABLE
  tasks decline (positives), those of ANSWERABLE and PARTIAL tasks answer (negatives);
- `idk_lexical` on the MTRAG reference answers in `mtrag/generation/*.jsonl` (same labels), and on MTRAG
  predictions wherever a file there carries an IDK judgement (`metrics.idk_eval`; none does today: the
  predictions of responses-10.jsonl have no IDK label, so they are not scored);
- `idk_lexical` on the 15 labelled responses of MTRAG's IDK prompt (`judges/idk.yaml`; yes / partial / no);
- the clarification judge `underspecified_lexical` on the MTRAG-UN reference answers (UNDERSPECIFIED tasks ask
  the user to clarify: positives; the other classes: negatives), once that judge exists (issue 22); until then
  the set is listed as skipped.

A judge "flags" an answer when its value is 1 (IDK yes), the decision IDK conditioning acts on; a partial (0.5)
counts as answering. Each set is split by task id (`ragjudge.judges.labelled.half_of`) into the half read while
writing the rules and a held-out half; both are reported, with every miss and false alarm.

Run: python benchmarks/bench_offline_judges.py [--data PATH] [--json OUT.json] [--no-misses]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

from ragjudge.judges.labelled import (
    HALVES,
    Labelled,
    idk_labelled_predictions,
    idk_prompt_examples,
    judge_answers,
    read_reference_set,
    score,
)
from ragjudge.judges.registry import JudgeRegistry

REPO = Path(__file__).resolve().parents[1]
IDK_JUDGE = "idk_lexical"
CLARIFICATION_JUDGE = "underspecified_lexical"
"""The offline clarification judge of issue 22. Measured here as soon as a spec of that name exists."""


def shared_data(given: str | None) -> Path | None:
    """--data, else $RAGJUDGE_SHARED_DATA, else the first shared/data folder above the repository."""
    setting = given or os.environ.get("RAGJUDGE_SHARED_DATA", "")
    if setting.strip():
        path = Path(setting).expanduser().resolve()
        return path if path.is_dir() else None
    return next((p / "shared" / "data" for p in REPO.parents if (p / "shared" / "data").is_dir()), None)


def _pct(value: float | None) -> str:
    return "   -  " if value is None else f"{value:6.3f}"


def _short(text: str, width: int = 150) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def report(title: str, judge: str, items: list[Labelled], registry: JudgeRegistry, *, halves: bool = True,
           misses: bool = True) -> dict[str, object]:
    verdicts = judge_answers(judge, items, registry)
    scores = score(verdicts)
    print(f"\n## {title}\n")
    print(f"{'half':<9} {'pos':>4} {'neg':>4} {'TP':>4} {'FP':>4} {'precision':>9} {'recall':>7} "
          f"{'false alarms':>14}   judge labels: positives | negatives")
    rows = [*HALVES, "all"] if halves else ["all"]
    for name in rows:
        s = scores[name]
        fa = "-" if s.false_alarm_rate is None else f"{s.false_alarm_rate:.1%} ({s.false_positives}/{s.negatives})"
        labels = " | ".join(", ".join(f"{k} {v}" for k, v in sorted(s.labels[side].items())) or "-"
                            for side in ("positive", "negative"))
        print(f"{name:<9} {s.positives:>4} {s.negatives:>4} {s.true_positives:>4} {s.false_positives:>4} "
              f"{_pct(s.precision):>9} {_pct(s.recall):>7} {fa:>14}   {labels}")
    out: dict[str, object] = {"judge": judge, "title": title, "halves": halves,
                              **{name: scores[name].as_dict() for name in rows}}
    expected = [v for v in verdicts if v.item.expected]
    if expected:
        agree = sum(v.result.label == v.item.expected for v in expected)
        confusion = Counter(f"{v.item.expected}->{v.result.label}" for v in expected)
        print(f"exact agreement with the three labels: {agree}/{len(expected)}  "
              f"({', '.join(f'{k} {n}' for k, n in sorted(confusion.items()))})")
        out["agreement"] = {"agree": agree, "n": len(expected), "confusion": dict(confusion)}
    if misses:
        for name in rows:
            s = scores[name] if name != "all" or not halves else None
            if s is None:
                continue
            for kind, found in (("miss", s.misses), ("false alarm", s.false_alarms)):
                for v in found:
                    print(f"  {name} {kind}: {v.item.task.task_id} [{v.item.task.answerability or v.item.expected}"
                          f" -> {v.result.label}] {_short(v.item.text)!r}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="the shared data folder (holding mtrag/ and mtrag-un/)")
    parser.add_argument("--json", type=Path, help="also write every figure and mistake to this JSON file")
    parser.add_argument("--no-misses", action="store_true", help="print the figures only")
    args = parser.parse_args()
    data = shared_data(args.data)
    registry = JudgeRegistry()
    results: dict[str, object] = {}
    misses = not args.no_misses
    print("Offline judges on labelled answers: a judge flags an answer when its value is 1. Halves by "
          "sha256(task id): 'rules' was read while writing the rules, 'held-out' was not.")

    un = data / "mtrag-un" / "generation" / "reference.jsonl" if data else None
    if un is None or not un.exists():
        print(f"\nMTRAG-UN: skipped, no {un or '../shared/data/mtrag-un'} (set --data or RAGJUDGE_SHARED_DATA)")
    else:
        items = read_reference_set(un, ["UNANSWERABLE"], ["ANSWERABLE", "PARTIAL"])
        results["idk_lexical/mtrag-un-references"] = report(
            f"{IDK_JUDGE} on MTRAG-UN reference answers: UNANSWERABLE declines (positive), ANSWERABLE/PARTIAL "
            f"answers (negative)", IDK_JUDGE, items, registry, misses=misses)
        if CLARIFICATION_JUDGE in registry.specs:
            items = read_reference_set(un, ["UNDERSPECIFIED"], ["ANSWERABLE", "PARTIAL", "UNANSWERABLE"])
            results[f"{CLARIFICATION_JUDGE}/mtrag-un-references"] = report(
                f"{CLARIFICATION_JUDGE} on MTRAG-UN reference answers: UNDERSPECIFIED asks to clarify (positive), "
                f"the other classes do not (negative)", CLARIFICATION_JUDGE, items, registry, misses=misses)
        else:
            print(f"\n## clarification judge on MTRAG-UN reference answers (UNDERSPECIFIED positives)\n\nskipped: "
                  f"no judge named {CLARIFICATION_JUDGE!r} yet (issue 22); this set is measured once it exists")
            results[f"{CLARIFICATION_JUDGE}/mtrag-un-references"] = {"skipped": f"no judge {CLARIFICATION_JUDGE}"}

    mtrag = data / "mtrag" / "generation" if data else None
    if mtrag is None or not mtrag.is_dir():
        print("\nMTRAG: skipped, no ../shared/data/mtrag/generation")
    else:
        files = sorted(mtrag.glob("*.jsonl"))
        refs: list[Labelled] = []
        labelled: list[Labelled] = []
        sources = []
        for file in files:
            found = read_reference_set(file, ["UNANSWERABLE"], ["ANSWERABLE", "PARTIAL"])
            sources += [file.name] if found else []
            refs += found
            labelled += idk_labelled_predictions(file)
        if refs:
            results["idk_lexical/mtrag-references"] = report(
                f"{IDK_JUDGE} on MTRAG reference answers ({', '.join(sources)}): UNANSWERABLE "
                f"declines, ANSWERABLE/PARTIAL answers", IDK_JUDGE, refs, registry, misses=misses)
        if labelled:
            results["idk_lexical/mtrag-predictions"] = report(
                f"{IDK_JUDGE} on MTRAG predictions with an IDK judgement (metrics.idk_eval = 1 positive)",
                IDK_JUDGE, labelled, registry, misses=misses)
        else:
            print(f"\nMTRAG predictions: none in {mtrag} carries an IDK label (metrics.idk_eval): not scored")
            results["idk_lexical/mtrag-predictions"] = {"skipped": "no prediction with an IDK label"}

    results["idk_lexical/idk-prompt-examples"] = report(
        f"{IDK_JUDGE} on the 15 labelled responses of MTRAG's IDK prompt (judges/idk.yaml; all read while writing "
        f"the rules, so no held-out half)", IDK_JUDGE, idk_prompt_examples(registry), registry, halves=False,
        misses=misses)

    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
        print(f"\nwritten: {args.json}")


if __name__ == "__main__":
    sys.exit(main())
