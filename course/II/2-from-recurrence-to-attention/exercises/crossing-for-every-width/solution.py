"""For each width d, the first T at which the grid costs as much as the recurrence."""

import numpy as np


def recurrence_cost(T, d):
    W_hh, W_xh = np.empty((d, d)), np.empty((d, d))  # only their shapes matter for the count
    return T * (W_hh.size + W_xh.size)


def grid_cost(T, d):
    S_shape, Y_shape = (T, T), (T, d)  # S = Q K^T, each entry width d; Y = A V, each entry width T
    return S_shape[0] * S_shape[1] * d + Y_shape[0] * Y_shape[1] * T


def checked_at(T, d, rng):
    """Build the matrices at the crossing and count the products actually computed."""
    Q, K, V = (rng.standard_normal((T, d)) for _ in range(3))
    S = Q @ K.T
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    Y = A @ V
    return S.size * d + Y.size * T


def solve():
    rng = np.random.default_rng(1)
    crossings = []
    for d in (64, 128, 256, 512):
        T = 1
        while grid_cost(T, d) < recurrence_cost(T, d):
            T += 1
        assert grid_cost(T, d) == recurrence_cost(T, d) == checked_at(T, d, rng)
        crossings.append(T)
    return crossings
