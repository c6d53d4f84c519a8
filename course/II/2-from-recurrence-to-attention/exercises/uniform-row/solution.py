"""A softmax over a row of eight equal scores gives each position 1/8."""

import numpy as np

T = 8


def solve():
    scores = np.full(T, 3.0)
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    V = np.random.default_rng(4).standard_normal((T, 2))
    y = weights @ V
    assert np.allclose(y, V.mean(axis=0))  # the output is the plain average of the values
    assert np.ptp(weights) == 0.0
    return float(weights[0])
