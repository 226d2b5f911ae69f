"""How narrow PPI++ makes a mean on MTRAG's real human ratings (the figures in docs/trust.md).

MTRAG's human evaluation (`mtrag/human/reference_subset_with_human_evaluations.json` of the shared data: 477 answers of
3 systems, each rated by people) stands in for an app whose every answer a person rated. A judge (an algorithm
metric in the same file) scored all 477; we pretend only `--n` random answers were labelled, estimate the human mean
from them with PPI++ and with the labels alone, and compare with the mean of all 477 human ratings, over `--draws`
seeded draws. Human ratings (median of the raters, 1-4) are mapped to [0, 1] as (r - 1) / 3.

    python benchmarks/bench_trust_human.py [--human faithfulness] [--judge rl_f] [--n 50] [--draws 100]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # a sibling script, also when loaded by a test
from bench_offline_judges import shared_data  # noqa: E402 (the same --data / $RAGJUDGE_SHARED_DATA lookup)

from ragjudge.correlation import load_humans
from ragjudge.trust.bootstrap import judge_only_mean
from ragjudge.trust.ppi import labels_only_mean, ppi_mean

HUMAN_FILE = Path("mtrag") / "human" / "reference_subset_with_human_evaluations.json"


def paired_arrays(path: Path, human: str, judge: str) -> tuple[np.ndarray, np.ndarray]:
    """(human rating in [0, 1], judge value) for every answer both rated, in a fixed order."""
    ds = load_humans(path)
    h, j = ds.humans[human].values, ds.judges[judge].values
    keys = sorted(set(h) & set(j))
    scale = ds.humans[human].scale()
    low, high = min(scale.levels), max(scale.levels)
    return (np.array([(h[k] - low) / (high - low) for k in keys]), np.array([j[k] for k in keys]))


def draws(y: np.ndarray, f: np.ndarray, n: int, count: int, confidence: float = 0.95) -> dict[str, np.ndarray]:
    """Per seeded draw of n labelled answers: PPI++ and labels-only intervals (low, high)."""
    out: dict[str, list[tuple[float, float]]] = {"ppi++": [], "labels only": []}
    for seed in range(count):
        labelled = np.random.default_rng(seed).permutation(len(y))[:n]
        rest = np.setdiff1d(np.arange(len(y)), labelled)
        ppi = ppi_mean(y[labelled], f[labelled], f[rest], confidence=confidence)
        classic = labels_only_mean(y[labelled], confidence=confidence)
        out["ppi++"].append((ppi.low, ppi.high))
        out["labels only"].append((classic.low, classic.high))
    return {k: np.array(v) for k, v in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="the shared data folder (holding mtrag/)")
    parser.add_argument("--human", default="faithfulness")
    parser.add_argument("--judge", default="rl_f")
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--draws", type=int, default=100)
    args = parser.parse_args()
    data = shared_data(args.data)
    path = data / HUMAN_FILE if data is not None else HUMAN_FILE
    if not path.is_file():
        sys.exit(f"no {path}: point --data (or RAGJUDGE_SHARED_DATA) at the shared data folder")
    y, f = paired_arrays(path, args.human, args.judge)
    truth = float(y.mean())
    judge = judge_only_mean(f)
    print(f"{len(y)} answers; human {args.human} mean {truth:.3f}; judge {args.judge} mean {f.mean():.3f} "
          f"(judge-only interval [{judge.low:.3f}, {judge.high:.3f}], covers the human mean: {judge.covers(truth)}); "
          f"correlation {np.corrcoef(y, f)[0, 1]:.3f}")
    for method, bounds in draws(y, f, args.n, args.draws).items():
        covered = int(np.sum((bounds[:, 0] <= truth) & (truth <= bounds[:, 1])))
        width = bounds[:, 1] - bounds[:, 0]
        print(f"{method:12s} {args.n} labels: covers the all-{len(y)} human mean in {covered}/{args.draws} draws; "
              f"mean width {width.mean():.3f} (median {np.median(width):.3f})")


if __name__ == "__main__":
    main()
