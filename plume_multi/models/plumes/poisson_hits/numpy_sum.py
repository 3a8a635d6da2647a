"""NumPy's sum, bit for bit, in compiled code: the totals of the Poisson-hit beliefs.

``numpy.sum`` adds a contiguous run pairwise (``pairwise_sum`` in NumPy's
``numpy/_core/src/umath/loops_utils.h.src``): blocks of at most 128 values are summed with eight
accumulators (then the rest in order), longer runs are halved at a multiple of 8 and the halves
added. otto-benchmark (Loisy & Heinonen 2023) keeps its beliefs indexed ``[x, y]`` and normalizes
them with ``p / p.sum()``; ``column_sum`` adds the cells of our ``[y, x]`` beliefs in that same
x-major order and tree, so a belief after the same hits is the same to the last bit.

Numba cannot cache a recursive function (a cached recursive function crashed the process when it
was loaded back), so NumPy's recursion is unrolled: ``_level<k>`` splits and calls ``_level<k-1>``;
16 levels sum up to 2**21 cells, beyond any grid the models allow (``MAX_CELLS``).
"""

from __future__ import annotations

from ....engine.jit import njit

__all__ = ["column_sum", "volume_sum", "MAX_CELLS"]

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
def _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n):
    """NumPy's block of ``n <= 128`` values: ``scale * a[f]`` for the cells ``lo .. lo + n - 1`` in
    x-major order (``z`` fastest, then ``y``, then ``x``) of the ``(d, h, .)`` window at flat
    offset ``base`` of a C-contiguous array whose planes are ``sz`` apart and rows ``sy`` apart
    (2-D: ``d = 1``)."""
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


# NumPy's recursion, one function per level (see the module docstring).
@njit(cache=True)
def _level1(a, base, sz, sy, d, h, scale, lo, n):
    if n <= 128:
        return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n)
    n2 = n // 2 - (n // 2) % 8
    return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n2) + _pairwise_leaf(a, base, sz, sy, d, h, scale, lo + n2, n - n2)


@njit(cache=True)
def _level2(a, base, sz, sy, d, h, scale, lo, n):
    if n <= 128:
        return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n)
    n2 = n // 2 - (n // 2) % 8
    return _level1(a, base, sz, sy, d, h, scale, lo, n2) + _level1(a, base, sz, sy, d, h, scale, lo + n2, n - n2)


@njit(cache=True)
def _level3(a, base, sz, sy, d, h, scale, lo, n):
    if n <= 128:
        return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n)
    n2 = n // 2 - (n // 2) % 8
    return _level2(a, base, sz, sy, d, h, scale, lo, n2) + _level2(a, base, sz, sy, d, h, scale, lo + n2, n - n2)


@njit(cache=True)
def _level4(a, base, sz, sy, d, h, scale, lo, n):
    if n <= 128:
        return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n)
    n2 = n // 2 - (n // 2) % 8
    return _level3(a, base, sz, sy, d, h, scale, lo, n2) + _level3(a, base, sz, sy, d, h, scale, lo + n2, n - n2)


@njit(cache=True)
def _level5(a, base, sz, sy, d, h, scale, lo, n):
    if n <= 128:
        return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n)
    n2 = n // 2 - (n // 2) % 8
    return _level4(a, base, sz, sy, d, h, scale, lo, n2) + _level4(a, base, sz, sy, d, h, scale, lo + n2, n - n2)


@njit(cache=True)
def _level6(a, base, sz, sy, d, h, scale, lo, n):
    if n <= 128:
        return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n)
    n2 = n // 2 - (n // 2) % 8
    return _level5(a, base, sz, sy, d, h, scale, lo, n2) + _level5(a, base, sz, sy, d, h, scale, lo + n2, n - n2)


@njit(cache=True)
def _level7(a, base, sz, sy, d, h, scale, lo, n):
    if n <= 128:
        return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n)
    n2 = n // 2 - (n // 2) % 8
    return _level6(a, base, sz, sy, d, h, scale, lo, n2) + _level6(a, base, sz, sy, d, h, scale, lo + n2, n - n2)


@njit(cache=True)
def _level8(a, base, sz, sy, d, h, scale, lo, n):
    if n <= 128:
        return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n)
    n2 = n // 2 - (n // 2) % 8
    return _level7(a, base, sz, sy, d, h, scale, lo, n2) + _level7(a, base, sz, sy, d, h, scale, lo + n2, n - n2)


@njit(cache=True)
def _level9(a, base, sz, sy, d, h, scale, lo, n):
    if n <= 128:
        return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n)
    n2 = n // 2 - (n // 2) % 8
    return _level8(a, base, sz, sy, d, h, scale, lo, n2) + _level8(a, base, sz, sy, d, h, scale, lo + n2, n - n2)


@njit(cache=True)
def _level10(a, base, sz, sy, d, h, scale, lo, n):
    if n <= 128:
        return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n)
    n2 = n // 2 - (n // 2) % 8
    return _level9(a, base, sz, sy, d, h, scale, lo, n2) + _level9(a, base, sz, sy, d, h, scale, lo + n2, n - n2)


@njit(cache=True)
def _level11(a, base, sz, sy, d, h, scale, lo, n):
    if n <= 128:
        return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n)
    n2 = n // 2 - (n // 2) % 8
    return _level10(a, base, sz, sy, d, h, scale, lo, n2) + _level10(a, base, sz, sy, d, h, scale, lo + n2, n - n2)


@njit(cache=True)
def _level12(a, base, sz, sy, d, h, scale, lo, n):
    if n <= 128:
        return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n)
    n2 = n // 2 - (n // 2) % 8
    return _level11(a, base, sz, sy, d, h, scale, lo, n2) + _level11(a, base, sz, sy, d, h, scale, lo + n2, n - n2)


@njit(cache=True)
def _level13(a, base, sz, sy, d, h, scale, lo, n):
    if n <= 128:
        return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n)
    n2 = n // 2 - (n // 2) % 8
    return _level12(a, base, sz, sy, d, h, scale, lo, n2) + _level12(a, base, sz, sy, d, h, scale, lo + n2, n - n2)


@njit(cache=True)
def _level14(a, base, sz, sy, d, h, scale, lo, n):
    if n <= 128:
        return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n)
    n2 = n // 2 - (n // 2) % 8
    return _level13(a, base, sz, sy, d, h, scale, lo, n2) + _level13(a, base, sz, sy, d, h, scale, lo + n2, n - n2)


@njit(cache=True)
def _level15(a, base, sz, sy, d, h, scale, lo, n):
    if n <= 128:
        return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n)
    n2 = n // 2 - (n // 2) % 8
    return _level14(a, base, sz, sy, d, h, scale, lo, n2) + _level14(a, base, sz, sy, d, h, scale, lo + n2, n - n2)


@njit(cache=True)
def _level16(a, base, sz, sy, d, h, scale, lo, n):
    if n <= 128:
        return _pairwise_leaf(a, base, sz, sy, d, h, scale, lo, n)
    n2 = n // 2 - (n // 2) % 8
    return _level15(a, base, sz, sy, d, h, scale, lo, n2) + _level15(a, base, sz, sy, d, h, scale, lo + n2, n - n2)


@njit(cache=True)
def column_sum(a, oy, ox, h, w, scale):
    """``numpy.sum`` of ``(scale * a[oy:oy+h, ox:ox+w]).T``, bit for bit, without a copy: the
    ``(h, w)`` window of the C-contiguous 2-D ``a``, each value times ``scale``, summed in x-major
    order as NumPy sums an array indexed ``[x, y]``. ``h * w <= MAX_CELLS``."""
    flat = a.reshape(a.size)
    return _level16(flat, oy * a.shape[1] + ox, 0, a.shape[1], 1, h, scale, 0, h * w)


@njit(cache=True)
def volume_sum(a, oz, oy, ox, d, h, w, scale):
    """``numpy.sum`` of ``(scale * a[oz:oz+d, oy:oy+h, ox:ox+w]).transpose(2, 1, 0)``, bit for bit,
    without a copy: the ``(d, h, w)`` window of the C-contiguous 3-D ``a`` summed in x-major order
    (``z`` fastest) as NumPy sums an array indexed ``[x, y, z]`` (otto's 3-D beliefs).
    ``d * h * w <= MAX_CELLS``."""
    flat = a.reshape(a.size)
    sz = a.shape[1] * a.shape[2]
    return _level16(flat, oz * sz + oy * a.shape[2] + ox, sz, a.shape[2], d, h, scale, 0, d * h * w)
