"""A plain NumPy Perseus on the Poisson-hit search POMDP: what ``policies.Perseus`` must compute.

Alpha vectors live on the source's offset from the agent, ``(2D-1, 2H-1, 2W-1)`` (a 2-D problem is
``D = 1``), entry ``[dz + D-1, dy + H-1, dx + W-1]`` for the offset ``(dx, dy, dz)``; beliefs are
``(D, H, W)`` over the source's cell; cells ``(x, y, z)``. Written for clarity, one belief and one
vector at a time, from the equations of Spaan & Vlassis (2005):

* value of belief ``p`` at cell ``c`` under vector ``alpha``: ``sum_y p(y) alpha(y - c)``, a vector
  counting only where its move keeps the agent in the grid;
* backup: for each move ``a`` in the grid (to ``c' = c + m_a``) and hit ``h``, ``k(a, h)`` the
  vector of highest ``sum_y p(y) L_h(y - c') alpha(y - c')`` among those allowed at ``c'``;
  ``a*`` maximizes ``-1 + discount * sum_h`` of those; the new vector at offset ``delta`` is
  ``-1 + discount * sum_h L_h(delta') alpha_k(a*, h)(delta')`` with ``delta' = delta - m_a*`` (``-1``
  where ``delta' = 0``, the floor where it leaves the box), 0 at ``delta = 0``;
* a stage: beliefs drawn in the solver's order (``rng.integers`` over those not yet improved), each
  keeping the backed-up vector when it is worth at least its previous value, else its previous best.

Sums over a belief's cells run in row-major order, one term after the other (``total``), as the
compiled kernels add them: Perseus compares values that are equal in exact arithmetic (a vector
backed up from the floor ``-1 / (1 - discount)`` is the floor again, ``-1 + discount * floor =
floor``), so which branch it takes is decided by rounding, and the reference must round alike to
take the same one.
"""

from __future__ import annotations

import numpy as np


def window(table, shape3, cell):
    """The window of a box-layout array ``(..., 2D-1, 2H-1, 2W-1)`` lined up with the grid for an
    agent at ``cell`` ``(x, y, z)``."""
    d, h, w = shape3
    x, y, z = cell
    return table[..., d - 1 - z:2 * d - 1 - z, h - 1 - y:2 * h - 1 - y, w - 1 - x:2 * w - 1 - x]


def inside(cell, shape3):
    d, h, w = shape3
    x, y, z = cell
    return 0 <= x < w and 0 <= y < h and 0 <= z < d


def moved(cell, move):
    return tuple(int(c + m) for c, m in zip(cell, move))


def total(terms):
    """The sum of ``terms`` added one after the other in row-major order (NumPy's ``sum`` pairs them)."""
    flat = np.ravel(terms)
    return float(np.cumsum(flat)[-1]) if flat.size else 0.0


def value(p, cell, alpha):
    return total(p * window(alpha, p.shape, cell))


def best(p, cell, alphas, actions, moves):
    """``(value, index)`` of the first best vector allowed at ``cell`` (``(-inf, -1)`` if none)."""
    top, index = -np.inf, -1
    for i, (alpha, a) in enumerate(zip(alphas, actions)):
        if not inside(moved(cell, moves[a]), p.shape):
            continue
        v = value(p, cell, alpha)
        if v > top:
            top, index = v, i
    return top, index


def backup(p, cell, alphas, actions, moves, lik, discount, floor):
    """``(a*, vector)`` of the backup of ``p`` at ``cell``; ``lik`` ``(n_hits, 2D-1, 2H-1, 2W-1)``."""
    shape3 = p.shape
    best_a, best_v, best_k = -1, -np.inf, None
    for a, m in enumerate(moves):
        c2 = moved(cell, m)
        if not inside(c2, shape3):
            continue
        summed, ks = 0.0, []
        for h in range(lik.shape[0]):
            top, k = -np.inf, -1
            for i, (alpha, ai) in enumerate(zip(alphas, actions)):
                if not inside(moved(c2, moves[ai]), shape3):
                    continue
                v = total(p * window(lik[h], shape3, c2) * window(alpha, shape3, c2))
                if v > top:
                    top, k = v, i
            summed += top
            ks.append(k)
        v = -1.0 + discount * summed
        if v > best_v:
            best_a, best_v, best_k = a, v, ks
    box = lik.shape[1:]
    centre = tuple(n - 1 for n in shape3)
    mx, my, mz = moves[best_a]
    out = np.empty(box)
    for iz, iy, ix in np.ndindex(*box):
        jz, jy, jx = iz - mz, iy - my, ix - mx
        if (iz, iy, ix) == centre:
            out[iz, iy, ix] = 0.0
        elif (jz, jy, jx) == centre:
            out[iz, iy, ix] = -1.0
        elif 0 <= jz < box[0] and 0 <= jy < box[1] and 0 <= jx < box[2]:
            out[iz, iy, ix] = -1.0 + discount * sum(lik[h, jz, jy, jx] * alphas[best_k[h]][jz, jy, jx]
                                                    for h in range(lik.shape[0]))
        else:
            out[iz, iy, ix] = floor
    return best_a, out


def solve(beliefs, cells, moves, lik, discount, iterations, seed):
    """Perseus on the points ``beliefs`` ``(B, D, H, W)`` at ``cells`` ``(B, 3)``, from one vector
    per move at ``-1 / (1 - discount)``: ``(alphas (n, 2D-1, 2H-1, 2W-1), actions (n,), mean values
    of the points before the first stage and after each)``; every move keeps a vector (its first
    one, after the others, when the stages kept none of it)."""
    floor = -1.0 / (1.0 - discount)
    shape3 = beliefs.shape[1:]
    box = lik.shape[1:]
    first = np.full(box, floor)
    first[tuple(n - 1 for n in shape3)] = 0.0
    alphas = [first.copy() for _ in moves]
    actions = list(range(len(moves)))
    order = np.random.default_rng([seed, 0x5E5])
    olds = [best(b, c, alphas, actions, moves) for b, c in zip(beliefs, cells)]
    means = [float(np.mean([v for v, _ in olds]))]
    for _ in range(iterations):
        new_alphas, new_actions = [], []
        now = np.full(len(beliefs), -np.inf)
        todo = np.arange(len(beliefs))
        while todo.size:
            j = int(todo[order.integers(todo.size)])
            a, vec = backup(beliefs[j], tuple(cells[j]), alphas, actions, moves, lik, discount, floor)
            if value(beliefs[j], tuple(cells[j]), vec) < olds[j][0]:
                a, vec = actions[olds[j][1]], alphas[olds[j][1]]
            new_alphas.append(vec)
            new_actions.append(a)
            for b in todo:
                if inside(moved(tuple(cells[b]), moves[a]), shape3):
                    now[b] = max(now[b], value(beliefs[b], tuple(cells[b]), vec))
            todo = np.array([b for b in todo if now[b] < olds[b][0]], dtype=np.int64)
        alphas, actions = new_alphas, new_actions
        olds = [best(b, c, alphas, actions, moves) for b, c in zip(beliefs, cells)]
        means.append(float(np.mean([v for v, _ in olds])))
    for a in range(len(moves)):  # a move no vector kept gets its first vector back, after the others
        if a not in actions:
            alphas.append(first.copy())
            actions.append(a)
    return np.array(alphas), np.array(actions), means


def random_points(plume, moves, n, seed):
    """``n`` beliefs ``(n, D, H, W)`` and cells ``(n, 3)`` along random walks of one searcher
    (uniform moves that stay in the grid), hits drawn from the predictive law, Bayes-updated in
    NumPy: ``p(y) <- p(y) L_h(y - c)``, normalized (the agent's cell is 0 since ``L_h(0) = 0``)."""
    rng = np.random.default_rng(seed)
    shape3 = (1,) * (3 - len(plume.shape)) + tuple(plume.shape)
    lik = np.asarray(plume.centred_likelihood).reshape((plume.n_hits,) + tuple(2 * s - 1 for s in shape3))
    start = tuple(plume.start) + (0,) * (3 - len(plume.start))
    beliefs, cells = [], []
    while len(beliefs) < n:
        cell = start
        h0 = int(rng.choice(plume.n_hits, p=plume.first_hit_probabilities))
        p = window(lik[h0], shape3, cell).copy()
        p /= p.sum()
        for _ in range(6):
            beliefs.append(p.copy())
            cells.append(cell)
            if len(beliefs) == n:
                break
            allowed = [m for m in moves if inside(moved(cell, m), shape3)]
            cell = moved(cell, allowed[int(rng.integers(len(allowed)))])
            if p[cell[2], cell[1], cell[0]] > 1 - 1e-9:
                break
            q = p.copy()
            q[cell[2], cell[1], cell[0]] = 0.0
            predictive = np.array([(q * window(lik[h], shape3, cell)).sum() for h in range(plume.n_hits)])
            h = int(rng.choice(plume.n_hits, p=predictive / predictive.sum()))
            p = q * window(lik[h], shape3, cell)
            p /= p.sum()
    return np.array(beliefs), np.array(cells, dtype=np.int64)
