"""Attention is permutation-equivariant: reorder the positions, the outputs follow."""

import numpy as np

T, D_K, D_V = 5, 4, 4


def attention(Q, K, V):
    S = Q @ K.T
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    return A @ V


def solve():
    rng = np.random.default_rng(3)
    Q, K = rng.standard_normal((T, D_K)), rng.standard_normal((T, D_K))
    V = rng.standard_normal((T, D_V))
    Y = attention(Q, K, V)
    order = rng.permutation(T)
    assert (order != np.arange(T)).any()
    Y_shuffled = attention(Q[order], K[order], V[order])
    back = np.empty_like(Y_shuffled)
    back[order] = Y_shuffled  # row order[i] of the original is row i of the shuffled run
    return float(np.abs(back - Y).max())
