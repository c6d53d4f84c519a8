"""The crossing length for d_h = d_x = 256 and d_k = d_v = 64, found by counting."""

import numpy as np

D_H = D_X = 256
D_K = D_V = 64


def recurrence_cost(T):
    """T steps, each applying W_hh (d_h by d_h) and W_xh (d_h by d_x): one per matrix entry."""
    return T * (D_H * D_H + D_H * D_X)


def grid_cost(T):
    """S = Q K^T: T by T entries, d_k each; then A V: T by d_v entries, T each."""
    return T * T * D_K + T * D_V * T


def counted_products(T, rng):
    """Build the matrices at length T and count the products as they are computed."""
    Q, K = rng.standard_normal((T, D_K)), rng.standard_normal((T, D_K))
    V = rng.standard_normal((T, D_V))
    S = Q @ K.T
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    Y = A @ V
    grid = S.size * Q.shape[1] + Y.size * A.shape[1]
    W_hh = rng.standard_normal((D_H, D_H)) / np.sqrt(D_H)
    W_xh = rng.standard_normal((D_H, D_X)) / np.sqrt(D_H)
    h = np.zeros(D_H)
    per_step = 0
    for x in rng.standard_normal((2, D_X)):  # two steps are enough to see the per-step count
        h = np.tanh(W_hh @ h + W_xh @ x)
        per_step = W_hh.size + W_xh.size
    return grid, T * per_step


def solve():
    T = 1
    while grid_cost(T) < recurrence_cost(T):
        T += 1
    grid, recurrence = counted_products(T, np.random.default_rng(0))
    assert grid == recurrence == grid_cost(T) == recurrence_cost(T)
    assert grid_cost(T - 1) < recurrence_cost(T - 1) and grid_cost(T + 1) > recurrence_cost(T + 1)
    return T
