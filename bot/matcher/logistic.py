"""The two pieces of scikit-learn that training used besides counting, without importing scikit-learn:
an L2-penalised logistic regression (:func:`logistic`) and the calibration's grouped stratified folds
(:func:`group_folds`).

Importing scikit-learn took ~0.55 s of the training helper's start on an idle machine (0.33 s of it
``scipy.stats``, which ``sklearn.utils.fixes`` imports), more than the regressions and folds themselves
by far. The regression is scikit-learn's objective (``LogisticRegression(C=C)``: the summed weighted log
loss plus ``|w|² / 2C``, the intercept not penalised) minimised by SciPy's trust-region Newton method with
the exact gradient and Hessian to a tight tolerance: scikit-learn's ``newton-cholesky`` stops once the
largest gradient component is below 1e-4, so the two agree to that solver's precision, and to 1e-9 with
scikit-learn's tolerance tightened (``tests/matcher/test_logistic.py``, scikit-learn as the oracle). The
folds are ``StratifiedGroupKFold(shuffle=True)``'s, step for step (the same folds): its algorithm follows
scikit-learn's ``sklearn/model_selection/_split.py`` (BSD-3-Clause, © the scikit-learn developers)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

# at the top, not in logistic(): the training helper imports this while it waits for the entries, not after "go"
from scipy.optimize import minimize
from scipy.special import expit

log = logging.getLogger(__name__)
GTOL = 1e-10  # the scaled objective's gradient norm at which the minimisation stops
# The largest gradient component scikit-learn's newton-cholesky stops at: a fit left with one below it is as
# good as the oracle's. trust-exact often ends one rounding step short of GTOL ("A bad approximation caused
# failure to predict improvement" at a norm of 1e-10): that is the minimum, and nothing to tell anyone.
FAILED_GRADIENT = 1e-4


def logistic(
    x: np.ndarray, y: np.ndarray, weights: np.ndarray, *, c: float = 1.0, intercept: bool = True
) -> tuple[np.ndarray, float]:
    """The coefficients and intercept (0.0 without ``intercept``) of the logistic regression of the 0/1
    labels ``y`` on the rows ``x`` with sample ``weights``: the minimum of
    ``sum(weights * log_loss) + |coef|² / 2c``, divided by ``sum(weights)`` as scikit-learn divides it."""
    x = np.asarray(x, dtype=np.float64)
    if intercept:
        x = np.column_stack([x, np.ones(len(x))])
    y = np.asarray(y, dtype=np.float64)
    sw = np.asarray(weights, dtype=np.float64)
    total = float(sw.sum())
    sw = sw / total
    penalty = np.full(x.shape[1], 1.0 / (c * total))
    if intercept:
        penalty[-1] = 0.0

    at: list = [None, None, None]  # the last point asked for, its decision values and probabilities

    def point(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # the minimiser asks for the loss, the gradient and the Hessian at each point: x @ w once
        if at[0] is None or not np.array_equal(at[0], w):
            z = x @ w
            at[:] = [w.copy(), z, expit(z)]
        return at[1], at[2]

    def loss(w: np.ndarray) -> float:
        z = point(w)[0]
        return float(sw @ (np.logaddexp(0.0, z) - y * z) + 0.5 * (penalty * w) @ w)

    def gradient(w: np.ndarray) -> np.ndarray:
        return x.T @ (sw * (point(w)[1] - y)) + penalty * w

    def hessian(w: np.ndarray) -> np.ndarray:
        p = point(w)[1]
        h = (x * (sw * p * (1.0 - p))[:, None]).T @ x
        h[np.diag_indices_from(h)] += penalty
        return h

    found = minimize(loss, np.zeros(x.shape[1]), jac=gradient, hess=hessian, method="trust-exact",
                     options={"gtol": GTOL, "maxiter": 200})
    if not found.success:  # the objective is strictly convex: say so only when it is not at the minimum
        left = np.abs(gradient(found.x))
        if not np.all(np.isfinite(found.x)) or not left.max(initial=0.0) < FAILED_GRADIENT:
            log.warning("logistic regression failed to converge (%s; largest gradient component %.2g, "
                        "scikit-learn's tolerance %.0e)", found.message, float(left.max(initial=np.nan)),
                        FAILED_GRADIENT)
    w = found.x
    return (w[:-1], float(w[-1])) if intercept else (w, 0.0)


def group_folds(labels: Sequence[int], groups: Sequence, n_splits: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``StratifiedGroupKFold(n_splits, shuffle=True, random_state=seed).split(_, labels, groups)`` as
    (train, test) index arrays: every group in one fold, the groups shuffled, then placed from the most
    unevenly labelled on, each in the fold that keeps the labels' shares across folds the most even
    (the emptier fold when two are as even). The same operations, so the same folds."""
    y = np.asarray(labels)
    _, y_inv, y_cnt = np.unique(y, return_inverse=True, return_counts=True)
    if np.all(n_splits > y_cnt):
        raise ValueError(f"n_splits={n_splits} cannot be greater than the number of members in each class.")
    _, groups_inv, groups_cnt = np.unique(np.asarray(groups), return_inverse=True, return_counts=True)
    if n_splits > len(groups_cnt):
        raise ValueError(f"Cannot have number of splits n_splits={n_splits} greater than the number of groups: {len(groups_cnt)}.")
    per_group = np.zeros((len(groups_cnt), len(y_cnt)))
    np.add.at(per_group, (groups_inv, y_inv), 1)
    perm = np.arange(len(groups_cnt))
    np.random.RandomState(seed).shuffle(perm)
    per_group = per_group[perm]
    inv_perm = np.empty_like(perm)
    inv_perm[perm] = np.arange(perm.size)
    groups_inv = inv_perm[groups_inv]
    per_fold = np.zeros((n_splits, len(y_cnt)))
    fold_of = np.empty(len(groups_cnt), dtype=np.int64)
    for g in np.argsort(-np.std(per_group, axis=1), kind="stable"):
        best, min_eval, min_samples = 0, np.inf, np.inf
        for i in range(n_splits):
            per_fold[i] += per_group[g]
            fold_eval = np.mean(np.std(per_fold / y_cnt.reshape(1, -1), axis=0))
            per_fold[i] -= per_group[g]
            samples = np.sum(per_fold[i])
            if fold_eval < min_eval or (np.isclose(fold_eval, min_eval) and samples < min_samples):
                best, min_eval, min_samples = i, fold_eval, samples
        per_fold[best] += per_group[g]
        fold_of[g] = best
    sample_fold = fold_of[groups_inv]
    return [(np.flatnonzero(sample_fold != i), np.flatnonzero(sample_fold == i)) for i in range(n_splits)]
