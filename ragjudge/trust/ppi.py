"""Prediction-powered means (PPI++; Angelopoulos, Duchi and Zrnic, arXiv 2311.01453), and paired differences.

A person labelled n samples drawn uniformly at random; a judge scored those n (f_lab) and the N others (f_unl).
With the judge's weight λ the estimate of the labels' mean, unbiased for any λ (the labelled subset is random), and
its standard error (population variances, ddof 0) are

    θ̂ = λ · mean(f_unl) + mean(Y − λ · f_lab)
    se = sqrt(λ² · var(f_unl) / N + var(Y − λ · f_lab) / n)

and the power-tuned λ minimises se: λ = cov(Y, f_lab) / ((1 + n/N) · var(f_lab ∪ f_unl)), clipped to [0, 1]
(covariance with ddof 0 over the labelled samples, variance with ddof 1 over all); λ = 0 is the labels-only mean
(`labels_only_mean`). The interval is θ̂ ± z · se: `ppi_py.ppi_mean_ci`'s formulas (ppi-python 0.2.3, equal to
1e-9 in the tests). A paired difference (B − A on the same samples) is the same estimate on per-sample differences
of labels and of judge scores. Every function works on rows, arrays of shape (n,) or (trials, n), so a simulation
runs all trials at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import norm

from ragjudge.trust.intervals import Interval, Method


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return float(norm.ppf(1 - (1 - confidence) / 2))


def _rows(a: np.ndarray) -> np.ndarray:
    return np.atleast_2d(np.asarray(a, dtype=float))


def power_tuned_lambda(y: np.ndarray, f_lab: np.ndarray, f_unl: np.ndarray) -> np.ndarray:
    """PPI++'s λ per row (see the module docstring), clipped to [0, 1]; 0 when the judge is constant."""
    y, f_lab, f_unl = _rows(y), _rows(f_lab), _rows(f_unl)
    n, big_n = y.shape[1], f_unl.shape[1]
    cov = ((y - y.mean(axis=1, keepdims=True)) * (f_lab - f_lab.mean(axis=1, keepdims=True))).mean(axis=1)
    var_all = np.concatenate([f_lab, f_unl], axis=1).var(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = cov / ((1 + n / big_n) * var_all)
    return np.clip(np.nan_to_num(lam, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0)


def ppi_rows(y: np.ndarray, f_lab: np.ndarray, f_unl: np.ndarray, *, lam: float | np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, standard error, λ) per row; `lam` None: power-tuned."""
    y, f_lab, f_unl = _rows(y), _rows(f_lab), _rows(f_unl)
    if y.shape != f_lab.shape:
        raise ValueError(f"labels {y.shape} and the judge's scores on them {f_lab.shape} differ in shape")
    if y.shape[1] < 2 or f_unl.shape[1] < 1:
        raise ValueError("PPI needs at least 2 labelled samples and 1 unlabelled one")
    lams = power_tuned_lambda(y, f_lab, f_unl) if lam is None else np.broadcast_to(np.asarray(lam, float),
                                                                                  (y.shape[0],)).copy()
    lc = lams[:, None]
    estimate = (lc * f_unl).mean(axis=1) + (y - lc * f_lab).mean(axis=1)
    se = np.sqrt((lc * f_unl).var(axis=1) / f_unl.shape[1] + (y - lc * f_lab).var(axis=1) / y.shape[1])
    return estimate, se, lams


def ppi_mean(y: np.ndarray, f_lab: np.ndarray, f_unl: np.ndarray, *, confidence: float = 0.95,
             lam: float | None = None) -> Interval:
    """The PPI++ estimate of the labels' mean over all samples, with its interval."""
    estimate, se, lams = ppi_rows(y, f_lab, f_unl, lam=lam)
    n, unl = np.asarray(y).shape[-1], np.asarray(f_unl).shape[-1]
    return _interval(estimate, se, "ppi++", confidence, n_labels=n, n_samples=n + unl, lam=float(lams[0]))


def labels_only_rows(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, standard error) per row: the classical estimate (λ = 0; ddof 0, as ppi-python's baseline)."""
    y = _rows(y)
    return y.mean(axis=1), y.std(axis=1) / np.sqrt(y.shape[1])


def labels_only_mean(y: np.ndarray, *, confidence: float = 0.95) -> Interval:
    n = int(np.asarray(y).shape[-1])
    return _interval(*labels_only_rows(y), "labels only", confidence, n_labels=n, n_samples=n)


def _interval(estimate: np.ndarray, se: np.ndarray, method: Method, confidence: float, **counts: Any) -> Interval:
    """The first row's estimate ± z · se."""
    half = _z(confidence) * float(se[0])
    return Interval(float(estimate[0]), float(estimate[0]) - half, float(estimate[0]) + half, method, confidence,
                    **counts)


def ppi_paired_difference(y_a: np.ndarray, y_b: np.ndarray, f_lab_a: np.ndarray, f_lab_b: np.ndarray,
                          f_unl_a: np.ndarray, f_unl_b: np.ndarray, *, confidence: float = 0.95) -> Interval:
    """B − A on the same samples: PPI++ on the per-sample differences of labels and of judge scores."""
    return ppi_mean(np.asarray(y_b, float) - np.asarray(y_a, float),
                    np.asarray(f_lab_b, float) - np.asarray(f_lab_a, float),
                    np.asarray(f_unl_b, float) - np.asarray(f_unl_a, float), confidence=confidence)
