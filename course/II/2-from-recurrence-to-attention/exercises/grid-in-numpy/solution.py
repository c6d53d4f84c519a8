"""The grid of scores QK^T for T = 512 positions and keys of width 64: its shape and size."""

import numpy as np

T, D_K = 512, 64


def solve():
    rng = np.random.default_rng(7)
    Q = rng.standard_normal((T, D_K))
    K = rng.standard_normal((T, D_K))
    S = Q @ K.T
    try:
        Q @ K  # the transpose left out: (T x d_k) times (T x d_k) does not fit
    except ValueError:
        pass
    else:
        raise AssertionError("Q @ K should not be defined")
    assert np.isclose(S[3, 5], Q[3] @ K[5])  # one cell is one query against one key
    rows, columns = S.shape
    return {"rows": rows, "columns": columns, "entries": int(S.size)}
