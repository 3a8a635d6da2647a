"""NumPy's sum, bit for bit, in compiled code: the totals of the Poisson-hit beliefs.

``numpy.sum`` adds a contiguous run pairwise (``pairwise_sum`` in NumPy's
``numpy/_core/src/umath/loops_utils.h.src``): blocks of at most 128 values are summed with eight
accumulators (then the rest in order), longer runs are halved at a multiple of 8 and the halves
added. otto-benchmark (Loisy & Heinonen 2023) keeps its beliefs indexed ``[x, y]`` (otto's 3-D ones
``[x, y, z]``) and normalizes them with ``p / p.sum()``; ``window_sum`` adds the cells of our
``[y, x]`` (``[z, y, x]``) beliefs in that same x-major order and tree, so a belief after the same
hits is the same to the last bit, in 2-D and in 3-D.

Numba cannot cache a recursive function (a cached recursive function crashed the process when it
was loaded back), so ``_pairwise`` walks NumPy's tree with explicit stacks, up to 2**21 cells
(16 levels of halving), beyond any grid the models allow (``MAX_CELLS``).
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic

from ....engine.jit import njit

__all__ = ["window_sum", "MAX_CELLS"]

MAX_CELLS = 2 ** 21  # 16 levels of halving from blocks of 128


@njit(cache=True, inline="always")
def _next(f, z, y, d, h, sz, wrap_z, wrap_y):
    """The next cell in x-major order: one plane down in z (``+sz``); past the last, the next row
    (``wrap_z``); past the last row, the next column (``wrap_y``)."""
    z += 1
    if z < d:
        return f + sz, z, y
    y += 1
    if y < h:
        return f + wrap_z, 0, y
    return f + wrap_y, 0, 0


@njit(cache=True, boundscheck=False)
def _pairwise_leaf(a, window, scale, lo, n):
    """NumPy's block of ``n <= 128`` values: ``scale * a[f]`` for the cells ``lo .. lo + n - 1`` in
    x-major order (``z`` fastest, then ``y``, then ``x``) of the window ``(base, sz, sy, d, h)``:
    the ``(d, h, .)`` window at flat offset ``base`` of a C-contiguous array whose planes are
    ``sz`` apart and rows ``sy`` apart (2-D: ``d = 1``)."""
    base, sz, sy, d, h = window
    x = lo // (h * d)
    rest = lo - x * (h * d)
    y = rest // d
    z = rest - y * d
    f = base + z * sz + y * sy + x
    wrap_z = sy - (d - 1) * sz
    wrap_y = 1 - (h - 1) * sy - (d - 1) * sz
    if n < 8:
        res = -0.0
        for _ in range(n):
            res += scale * a[f]
            f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
        return res
    r0 = scale * a[f]
    f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
    r1 = scale * a[f]
    f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
    r2 = scale * a[f]
    f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
    r3 = scale * a[f]
    f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
    r4 = scale * a[f]
    f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
    r5 = scale * a[f]
    f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
    r6 = scale * a[f]
    f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
    r7 = scale * a[f]
    f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
    m = n - n % 8
    # the fastest axis (z in 3-D, y in 2-D): eight values down it need no carry while they stay
    # inside it, the common case (a branch per eight values instead of one per value)
    inner = d if d > 1 else h
    step = sz if d > 1 else sy
    for _ in range(8, m, 8):
        c = z if d > 1 else y
        if c + 8 < inner:
            r0 += scale * a[f]
            r1 += scale * a[f + step]
            r2 += scale * a[f + 2 * step]
            r3 += scale * a[f + 3 * step]
            r4 += scale * a[f + 4 * step]
            r5 += scale * a[f + 5 * step]
            r6 += scale * a[f + 6 * step]
            r7 += scale * a[f + 7 * step]
            f += 8 * step
            if d > 1:
                z += 8
            else:
                y += 8
            continue
        r0 += scale * a[f]
        f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
        r1 += scale * a[f]
        f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
        r2 += scale * a[f]
        f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
        r3 += scale * a[f]
        f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
        r4 += scale * a[f]
        f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
        r5 += scale * a[f]
        f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
        r6 += scale * a[f]
        f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
        r7 += scale * a[f]
        f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for _ in range(m, n):
        res += scale * a[f]
        f, z, y = _next(f, z, y, d, h, sz, wrap_z, wrap_y)
    return res


@njit(cache=True)
def _pairwise(a, window, scale, n):
    """NumPy's pairwise sum of the ``n`` cells from 0 (see ``_pairwise_leaf`` for the window):
    runs of at most 128 are leaves, longer runs are halved at ``n2 = n // 2 - (n // 2) % 8`` and
    the halves' sums added, left + right. NumPy recurses; this walks the same tree with explicit
    stacks (Numba cannot cache a recursive function, and one compiled function per level cost
    each caller about 10 s of compiling)."""
    zero = n - n  # a run-time 0: a literal 0 would compile the leaf a second time (Literal[int])
    if n <= 128:
        return _pairwise_leaf(a, window, scale, zero, n)
    # frames: (lo, n, stage); stage 0: sum the left half next, 1: the right half, 2: add them.
    # Halving from n <= MAX_CELLS reaches 128 within 16 levels: 64 entries are plenty.
    frames = np.empty((64, 3), dtype=np.int64)
    sums = np.empty(64)
    top = 0
    frames[0, 0] = zero
    frames[0, 1] = n
    frames[0, 2] = 0
    k = 0  # sums held
    while top >= 0:
        lo = frames[top, 0]
        m = frames[top, 1]
        if m <= 128:
            sums[k] = _pairwise_leaf(a, window, scale, lo, m)
            k += 1
            top -= 1
            continue
        m2 = m // 2 - (m // 2) % 8
        stage = frames[top, 2]
        if stage == 2:
            sums[k - 2] = sums[k - 2] + sums[k - 1]
            k -= 1
            top -= 1
            continue
        frames[top, 2] = stage + 1
        top += 1
        if stage == 0:
            frames[top, 0] = lo
            frames[top, 1] = m2
        else:
            frames[top, 0] = lo + m2
            frames[top, 1] = m - m2
        frames[top, 2] = 0
    return sums[0]


@intrinsic
def _read_only(typingctx, a):
    """``a`` itself, typed read-only: the sums read a belief (writable) and a likelihood table
    (read-only); typed apart, each compiled the whole pairwise tree once more (3.5 s of the
    Poisson team's cold start)."""
    if not isinstance(a, types.Array):
        return None

    def codegen(context, builder, sig, args):
        return impl_ret_borrowed(context, builder, sig.return_type, args[0])
    return a.copy(readonly=True)(a), codegen


@njit(cache=True, inline="always")
def window_sum(a, corner, shape, scale):
    """``_window_sum`` of ``a`` as a read-only array (one compiled sum for both kinds)."""
    return _window_sum(_read_only(a), corner, shape, scale)


@njit(cache=True)
def _window_sum(a, corner, shape, scale):
    """``numpy.sum`` of ``scale`` times the window of ``a`` at ``corner`` of ``shape``, transposed, bit
    for bit, without a copy: ``a`` a C-contiguous 2-D array and ``corner``, ``shape`` pairs
    ``(oy, ox)``, ``(h, w)`` (the window ``a[oy:oy+h, ox:ox+w]``), or a 3-D one and triples
    ``(oz, oy, ox)``, ``(d, h, w)``; the cells summed in x-major order (``z`` fastest in 3-D) as
    NumPy sums an array indexed ``[x, y]`` (otto's ``[x, y, z]``). At most ``MAX_CELLS`` cells."""
    flat = a.reshape(a.size)
    if a.ndim == 2:  # a compile-time constant: one branch is compiled
        # typed int64 throughout (literal 0 and 1 would type a leaf of their own)
        window = (np.int64(corner[0] * a.shape[1] + corner[1]), np.int64(0), np.int64(a.shape[1]), np.int64(1),
                  np.int64(shape[0]))
        return _pairwise(flat, window, scale, np.int64(shape[0] * shape[1]))
    sz = a.shape[1] * a.shape[2]
    window = (np.int64(corner[0] * sz + corner[1] * a.shape[2] + corner[2]), np.int64(sz), np.int64(a.shape[2]),
              np.int64(shape[0]), np.int64(shape[1]))
    return _pairwise(flat, window, scale, np.int64(shape[0] * shape[1] * shape[2]))
