"""The statistics of `ragjudge.trust`: PPI++ means and paired differences equal ppi-python's (and the paper's
formulas), the intervals cover the truth as often as they claim in simulation, and on MTRAG's real human ratings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import norm
from shared_data import SHARED_DATA, requires_shared

from ragjudge.trust.bootstrap import judge_only_difference, judge_only_mean
from ragjudge.trust.ppi import (labels_only_mean, labels_only_rows, ppi_mean, ppi_paired_difference, ppi_rows,
                                power_tuned_lambda)


def _arrays(seed: int, n: int = 50, big_n: int = 400, *, rho: float = 0.7) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    y = rng.normal(0.6, 0.2, n)
    f_lab = 0.1 + rho * y + rng.normal(0, 0.15, n)
    f_unl = 0.1 + rho * rng.normal(0.6, 0.2, big_n) + rng.normal(0, 0.15, big_n)
    return y, f_lab, f_unl


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_ppi_mean_equals_ppi_python(seed: int, confidence: float) -> None:
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python (the `dev` extra) is the reference implementation")
    y, f_lab, f_unl = _arrays(seed)
    got = ppi_mean(y, f_lab, f_unl, confidence=confidence)
    point = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, f_lab, f_unl)))
    low, high = (float(np.squeeze(v)) for v in ppi_py.ppi_mean_ci(y, f_lab, f_unl, alpha=1 - confidence))
    assert got.estimate == pytest.approx(point, abs=1e-9)
    assert got.low == pytest.approx(low, abs=1e-9) and got.high == pytest.approx(high, abs=1e-9)
    assert 0 < got.lam < 1  # power tuning at work, not a clip
    classic = labels_only_mean(y, confidence=confidence)
    c_low, c_high = (float(np.squeeze(v)) for v in ppi_py.classical_mean_ci(y, alpha=1 - confidence))
    assert (classic.low, classic.high) == pytest.approx((c_low, c_high), abs=1e-9)


def test_paired_difference_equals_ppi_python() -> None:
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python (the `dev` extra) is the reference implementation")
    ya, fa, ua = _arrays(3)
    yb, fb, ub = _arrays(4)
    got = ppi_paired_difference(ya, yb, fa, fb, ua, ub)
    low, high = (float(np.squeeze(v)) for v in ppi_py.ppi_mean_ci(yb - ya, fb - fa, ub - ua, alpha=0.05))
    point = float(np.squeeze(ppi_py.ppi_mean_pointestimate(yb - ya, fb - fa, ub - ua)))
    assert (got.estimate, got.low, got.high) == pytest.approx((point, low, high), abs=1e-9)


def test_ppi_is_the_papers_formula_and_lambda_minimises_the_variance() -> None:
    """Restated without ppi-python: θ̂(λ) = λ·mean(f_unl) + mean(Y − λ·f_lab); λ minimises the variance of θ̂."""
    y, f_lab, f_unl = _arrays(5)
    n, big_n = len(y), len(f_unl)
    got = ppi_mean(y, f_lab, f_unl)

    def variance(lam: float) -> float:  # the estimator's variance, every term estimated from all judge scores
        f_all = np.concatenate([f_lab, f_unl])
        return (lam ** 2 * np.var(f_all, ddof=1) * (1 / big_n + 1 / n) + np.var(y) / n
                - 2 * lam * np.cov(y, f_lab, ddof=0)[0, 1] / n)

    best = minimize_scalar(variance, bounds=(0, 1), method="bounded", options={"xatol": 1e-12}).x
    assert got.lam == pytest.approx(best, abs=1e-6)
    lam = got.lam
    estimate = lam * f_unl.mean() + (y - lam * f_lab).mean()
    se = np.sqrt(lam ** 2 * f_unl.var() / big_n + (y - lam * f_lab).var() / n)
    z = norm.ppf(0.975)
    assert (got.estimate, got.low, got.high) == pytest.approx((estimate, estimate - z * se, estimate + z * se),
                                                               abs=1e-12)
    assert ppi_mean(y, f_lab, f_unl, lam=0).low == pytest.approx(labels_only_mean(y).low, abs=1e-12)


def test_lambda_is_zero_for_a_useless_or_constant_judge() -> None:
    rng = np.random.default_rng(0)
    y = rng.normal(size=50)
    assert power_tuned_lambda(y, -y, rng.normal(size=100))[0] == 0.0  # anti-correlated: clipped to 0
    assert power_tuned_lambda(y, np.ones(50), np.ones(100))[0] == 0.0  # constant judge: no information


# --------------------------------------------------------------------------- coverage, in simulation

TRIALS, N_LABELS, N_SAMPLES, TRUE_MEAN = 1000, 50, 1000, 0.7


def _simulate(rho: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(labels, judge) for TRIALS runs of N_SAMPLES samples: labels with mean TRUE_MEAN, a judge that is biased
    (+0.1, scaled by 0.8) and noisy, correlating with the labels at about rho."""
    rng = np.random.default_rng(seed)
    y = TRUE_MEAN + 0.2 * rng.standard_normal((TRIALS, N_SAMPLES))
    noise_sd = 0.8 * 0.2 * np.sqrt(1 / rho ** 2 - 1)
    judge = 0.1 + 0.8 * y + noise_sd * rng.standard_normal((TRIALS, N_SAMPLES))
    return y, judge


def _intervals(y: np.ndarray, judge: np.ndarray, seed: int) -> tuple[np.ndarray, ...]:
    """Per trial: PPI++ (estimate, se) and labels-only (estimate, se), on N_LABELS random labelled samples."""
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random(y.shape), axis=1)  # a uniform random subset per trial
    lab, unl = order[:, :N_LABELS], order[:, N_LABELS:]
    take = np.take_along_axis
    est, se, _ = ppi_rows(take(y, lab, 1), take(judge, lab, 1), take(judge, unl, 1))
    c_est, c_se = labels_only_rows(take(y, lab, 1))
    return est, se, c_est, c_se


@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_ppi_interval_covers_the_true_mean(rho: float) -> None:
    y, judge = _simulate(rho, seed=0)
    est, se, c_est, c_se = _intervals(y, judge, seed=1)
    z = norm.ppf(0.975)
    coverage = np.mean(np.abs(est - TRUE_MEAN) <= z * se)
    assert 0.93 <= coverage <= 0.97, coverage
    assert np.mean(np.abs(judge.mean(axis=1) - TRUE_MEAN)) > 0.03  # the judge alone is off: the bias is real
    ratio = np.mean(se) / np.mean(c_se)
    assert ratio < (0.95 if rho == 0.5 else 0.8), ratio  # narrower than the labels alone
    assert np.mean(se < c_se) > 0.8


def test_coverage_over_ten_thousand_trials() -> None:
    """One seed's 1,000 trials estimate coverage to about ±0.015; ten seeds pooled pin it to ±0.005 (normal
    intervals at n = 50 cover slightly under 95%, as the labels-only interval does)."""
    hits, classic_hits = [], []
    for seed in range(10):
        y, judge = _simulate(0.5, seed=100 + seed)
        est, se, c_est, c_se = _intervals(y, judge, seed=200 + seed)
        hits.append(np.abs(est - TRUE_MEAN) <= norm.ppf(0.975) * se)
        classic_hits.append(np.abs(c_est - TRUE_MEAN) <= norm.ppf(0.975) * c_se)
    assert 0.93 <= np.mean(hits) <= 0.97, np.mean(hits)
    assert abs(np.mean(hits) - np.mean(classic_hits)) < 0.01  # as honest as the labels alone


@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_paired_difference_covers_the_true_difference(rho: float) -> None:
    """System B is 0.05 better than A on average; the same samples labelled for both."""
    ya, ja = _simulate(rho, seed=21)
    rng = np.random.default_rng(22)
    yb = ya + 0.05 + 0.15 * rng.standard_normal(ya.shape)  # paired: B's quality follows A's per sample
    noise_sd = 0.8 * np.std(yb - ya) * np.sqrt(1 / rho ** 2 - 1)
    jb = ja + 0.02 + 0.8 * (yb - ya) + noise_sd * rng.standard_normal(ya.shape)  # judge of the difference: biased
    est, se, _, c_se = _intervals(yb - ya, jb - ja, seed=23)
    coverage = np.mean(np.abs(est - 0.05) <= norm.ppf(0.975) * se)
    assert 0.93 <= coverage <= 0.97, coverage
    assert np.mean(se) < np.mean(c_se)


# --------------------------------------------------------------------------- judge only (bootstrap)


def test_judge_only_bootstrap_is_seeded_and_percentile() -> None:
    values = np.random.default_rng(0).random(200)
    first, again = judge_only_mean(values, seed=3), judge_only_mean(values, seed=3)
    assert first == again and first.method == "judge only" and first.n_samples == 200
    assert first.low < values.mean() < first.high
    normal_half = 1.96 * values.std(ddof=1) / np.sqrt(200)
    assert first.width == pytest.approx(2 * normal_half, rel=0.15)  # the bootstrap agrees with the CLT here
    assert judge_only_mean(values[:1]) is None
    diff = judge_only_difference(values, values + 0.1)
    assert diff.estimate == pytest.approx(0.1) and diff.width == pytest.approx(0.0, abs=1e-12)


# --------------------------------------------------------------------------- MTRAG's real human ratings


def _bench_module():
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_trust_human.py"
    spec = importlib.util.spec_from_file_location("bench_trust_human", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@requires_shared("mtrag", "human/reference_subset_with_human_evaluations.json")
def test_real_human_ratings_50_labels_cover_the_human_mean() -> None:
    """MTRAG's 477 human-rated answers; the judge is RL_F (on every answer); 50 random answers labelled: the
    interval covers the mean of all 477 human faithfulness ratings in at least 90 of 100 draws, and is narrower
    than the labels alone. The figures of docs/trust.md (benchmarks/bench_trust_human.py prints them)."""
    bench = _bench_module()
    y, f = bench.paired_arrays(SHARED_DATA / bench.HUMAN_FILE, "faithfulness", "rl_f")
    assert len(y) == 477
    truth = y.mean()
    assert truth == pytest.approx(0.816, abs=5e-4)
    judge = judge_only_mean(f)
    assert not judge.covers(truth)  # the judge alone is confidently off: what the labels are for
    bounds = bench.draws(y, f, 50, 100)
    covered = {m: int(np.sum((b[:, 0] <= truth) & (truth <= b[:, 1]))) for m, b in bounds.items()}
    width = {m: float(np.mean(b[:, 1] - b[:, 0])) for m, b in bounds.items()}
    assert covered["ppi++"] >= 90, covered
    assert width["ppi++"] < width["labels only"], width
    assert (covered["ppi++"], round(width["ppi++"], 3), round(width["labels only"], 3)) == (95, 0.131, 0.168)


def test_resampled_means_in_blocks_are_the_one_draw_recipe() -> None:
    """Drawn a block of rows at a time (bounded memory) and still the documented recipe: 1,000 rows of n indices
    from one seeded generator, each row's mean; and the draw counts of `correlation` give the same means."""
    from ragjudge.metrics import bootstrap

    values = np.random.default_rng(1).random(2_345)
    rng = np.random.default_rng(0)
    recipe = values[rng.integers(0, len(values), size=(1000, len(values)))].mean(axis=1)
    assert np.array_equal(bootstrap.resampled_means(values), recipe)  # 2,345 x 1,000 > one block of 1M
    counts = bootstrap.draw_counts(len(values), 1000, 0)
    assert np.allclose(counts @ values / len(values), recipe, rtol=0, atol=1e-12)
