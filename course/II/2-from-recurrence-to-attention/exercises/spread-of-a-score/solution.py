"""The variance of a dot product of 64 unit-variance terms, before and after scaling."""

import numpy as np

PAIRS, D_K = 20_000, 64


def solve():
    rng = np.random.default_rng(2017)
    q = rng.standard_normal((PAIRS, D_K))
    k = rng.standard_normal((PAIRS, D_K))
    scores = np.einsum("pm,pm->p", q, k)  # one dot product per pair
    assert scores.shape == (PAIRS,)
    scaled = scores / np.sqrt(D_K)
    return {
        "scores": int(scores.shape[0]),
        "variance": float(scores.var()),
        "scaled_variance": float(scaled.var()),
    }
