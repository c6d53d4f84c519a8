"""The depth (rounds of parallel work) of the recurrence and of attention at T = 50."""

import numpy as np

T = 50


def chain_depth():
    """h_t is ready one round after h_{t-1} (and x_t, ready from the start)."""
    x_ready = np.zeros(T + 1, dtype=int)
    h_ready = np.zeros(T + 1, dtype=int)  # h_ready[0]: the starting state
    for t in range(1, T + 1):
        h_ready[t] = max(h_ready[t - 1], x_ready[t]) + 1
    return int(h_ready[T])


def grid_depth():
    q_ready = np.zeros(T, dtype=int)
    k_ready = np.zeros(T, dtype=int)
    v_ready = np.zeros(T, dtype=int)
    s_ready = np.maximum.outer(q_ready, k_ready) + 1  # s_ij: q_i and k_j
    row_ready = s_ready.max(axis=1)  # alpha_ij waits for all of row i of S
    alpha_ready = np.repeat(row_ready[:, None], T, axis=1) + 1
    y_ready = np.maximum(alpha_ready.max(axis=1), v_ready.max()) + 1  # y_i: row i of A, all v_j
    return int(y_ready.max())


def solve():
    chain, grid = chain_depth(), grid_depth()
    assert chain == T  # one round per token: the chain of waits
    return {"chain": chain, "grid": grid}
