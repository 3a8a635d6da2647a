"""Random start cells, computed inside kernels, with no hidden state.

Two generators, both pure functions of explicit integers:

* ``pcg64_starts`` reproduces ``numpy.random.default_rng(seed)`` exactly for the draws the
  single-agent contract makes: ``rng.integers(0, width)`` then ``rng.integers(0, height)``, for
  agent 0, then the same pair for agents 1..N-1. In 3-D (``pcg64_cells`` with three sizes) each
  agent draws ``integers(0, width)``, ``integers(0, height)``, ``integers(0, depth)``, agent by
  agent: the same rule with one more draw per agent. This is NumPy's SeedSequence -> PCG64 (XSL-RR)
  -> ``next_uint32`` (with its one-word buffer) -> Lemire's bounded integers. A world's first
  episode therefore starts exactly where ``PlumeSearchEnv().reset(seed=...)`` starts.
* ``counter_starts`` draws the starts of later episodes from a counter-based hash of
  ``(world seed, episode number, draw index)``: no state to carry, independent of thread count
  and of how the batch is split.

All arithmetic is on uint64 with explicit masks; constants are typed so that Numba never
promotes to float.
"""

from __future__ import annotations

import numpy as np
from .jit import njit

U32 = np.uint64(0xFFFFFFFF)
S16 = np.uint64(16)
S32 = np.uint64(32)
S58 = np.uint64(58)
S63 = np.uint64(63)
ONE = np.uint64(1)
ZERO = np.uint64(0)

# numpy/random/bit_generator.pyx (SeedSequence)
INIT_A = np.uint64(0x43B0D7E5)
MULT_A = np.uint64(0x931E8875)
INIT_B = np.uint64(0x8B51F9DD)
MULT_B = np.uint64(0x58F38DED)
MIX_MULT_L = np.uint64(0xCA01F9DD)
MIX_MULT_R = np.uint64(0x4973F715)
# PCG64's 128-bit multiplier, high and low words
PCG_MULT_HI = np.uint64(0x2360ED051FC65DA4)
PCG_MULT_LO = np.uint64(0x4385DF649FCCF645)


@njit(cache=True, inline="always")
def _mulhi64(a, b):
    """High 64 bits of the 128-bit product of two uint64."""
    a_lo = a & U32
    a_hi = a >> S32
    b_lo = b & U32
    b_hi = b >> S32
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    hi_hi = a_hi * b_hi
    cross = (lo_lo >> S32) + (hi_lo & U32) + lo_hi
    return hi_hi + (hi_lo >> S32) + (cross >> S32)


@njit(cache=True, inline="always")
def _hashmix(value, hash_const):
    value = (value ^ hash_const) & U32
    hash_const = (hash_const * MULT_A) & U32
    value = (value * hash_const) & U32
    value ^= value >> S16
    return value, hash_const


@njit(cache=True, inline="always")
def _mix(x, y):
    r = (MIX_MULT_L * x - MIX_MULT_R * y) & U32
    return r ^ (r >> S16)


@njit(cache=True, no_cpython_wrapper=True)  # called from compiled code only
def pcg64_state(seed):
    """PCG64 state ``(state_hi, state_lo, inc_hi, inc_lo)`` of ``default_rng(seed)``, seed < 2**64."""
    seed = np.uint64(seed)
    # SeedSequence.mix_entropy: the seed as two 32-bit words, in a pool of four.
    h = INIT_A
    m0, h = _hashmix(seed & U32, h)
    m1, h = _hashmix(seed >> S32, h)
    m2, h = _hashmix(ZERO, h)
    m3, h = _hashmix(ZERO, h)
    for src in range(4):
        v = _pick(m0, m1, m2, m3, src)  # pool[src] does not change while it mixes the others
        if src != 0:
            hv, h = _hashmix(v, h)
            m0 = _mix(m0, hv)
        if src != 1:
            hv, h = _hashmix(v, h)
            m1 = _mix(m1, hv)
        if src != 2:
            hv, h = _hashmix(v, h)
            m2 = _mix(m2, hv)
        if src != 3:
            hv, h = _hashmix(v, h)
            m3 = _mix(m3, hv)
    # SeedSequence.generate_state(4, uint64): eight 32-bit words, paired little-endian.
    hb = INIT_B
    w0, hb = _gen_word(m0, hb)
    w1, hb = _gen_word(m1, hb)
    w2, hb = _gen_word(m2, hb)
    w3, hb = _gen_word(m3, hb)
    w4, hb = _gen_word(m0, hb)
    w5, hb = _gen_word(m1, hb)
    w6, hb = _gen_word(m2, hb)
    w7, hb = _gen_word(m3, hb)
    s_hi = w0 | (w1 << S32)
    s_lo = w2 | (w3 << S32)
    i_hi = w4 | (w5 << S32)
    i_lo = w6 | (w7 << S32)
    # pcg64_srandom_r: state = 0; inc = (initseq << 1) | 1; step; state += initstate; step
    inc_hi = (i_hi << ONE) | (i_lo >> S63)
    inc_lo = (i_lo << ONE) | ONE
    st_hi, st_lo = _pcg_step(ZERO, ZERO, inc_hi, inc_lo)
    lo = st_lo + s_lo
    carry = ONE if lo < st_lo else ZERO
    st_hi, st_lo = _pcg_step(st_hi + s_hi + carry, lo, inc_hi, inc_lo)
    return st_hi, st_lo, inc_hi, inc_lo


@njit(cache=True, inline="always")
def _gen_word(d, hb):
    d = (d ^ hb) & U32
    hb = (hb * MULT_B) & U32
    d = (d * hb) & U32
    return d ^ (d >> S16), hb


@njit(cache=True, inline="always")
def _pick(m0, m1, m2, m3, i):
    if i == 0:
        return m0
    if i == 1:
        return m1
    if i == 2:
        return m2
    return m3


@njit(cache=True, inline="always")
def _pcg_step(st_hi, st_lo, inc_hi, inc_lo):
    """state = state * MULT + inc  (mod 2**128)."""
    lo = st_lo * PCG_MULT_LO
    hi = _mulhi64(st_lo, PCG_MULT_LO) + st_lo * PCG_MULT_HI + st_hi * PCG_MULT_LO
    new_lo = lo + inc_lo
    carry = ONE if new_lo < lo else ZERO
    return hi + inc_hi + carry, new_lo


@njit(cache=True, inline="always")
def _pcg_output(st_hi, st_lo):
    """XSL-RR output of a PCG64 state."""
    x = st_hi ^ st_lo
    rot = st_hi >> S58
    return (x >> rot) | (x << ((np.uint64(64) - rot) & S63))


@njit(cache=True, inline="always")
def _next_u32(st_hi, st_lo, inc_hi, inc_lo, has_buf, buf):
    """NumPy's PCG64 ``next_uint32``: the low half of a fresh 64-bit output, the high half kept
    for the next call. Returns ``(u32, st_hi, st_lo, has_buf, buf)``."""
    if has_buf:
        return buf, st_hi, st_lo, False, buf
    st_hi, st_lo = _pcg_step(st_hi, st_lo, inc_hi, inc_lo)
    r = _pcg_output(st_hi, st_lo)
    return r & U32, st_hi, st_lo, True, r >> S32


@njit(cache=True)
def pcg64_starts(seed, n_agents, width, height, out, row0):
    """Write the start cells ``default_rng(seed)`` draws into ``out[row0:row0+n_agents]``.

    Args:
        seed: int, 0 <= seed < 2**64.
        n_agents: number of (x, y) pairs to draw, in order.
        width, height: grid size; ``x`` in ``[0, width)``, ``y`` in ``[0, height)``.
        out: ``(rows, 2)`` int32, mutated.
        row0: first row written.
    """
    pcg64_cells(seed, n_agents, (width, height), out, row0)


@njit(cache=True)
def pcg64_cells(seed, n_agents, sizes, out, row0):
    """``pcg64_starts`` in any dimension: ``sizes`` a tuple ``(width, height)`` or ``(width,
    height, depth)``; each agent draws ``integers(0, sizes[c])`` for each axis ``c`` in order, as
    ``default_rng(seed)`` does. ``out``: ``(rows, len(sizes))`` int32, mutated."""
    st_hi, st_lo, inc_hi, inc_lo = pcg64_state(seed)
    has_buf = False
    buf = ZERO
    for n in range(n_agents):
        for c in range(len(sizes)):
            v, st_hi, st_lo, has_buf, buf = pcg64_integer(sizes[c], st_hi, st_lo, inc_hi, inc_lo, has_buf, buf)
            out[row0 + n, c] = v


@njit(cache=True, inline="always")
def pcg64_integer(bound, st_hi, st_lo, inc_hi, inc_lo, has_buf, buf):
    """``Generator.integers(0, bound)`` of the PCG64 state ``(st_hi, st_lo, inc_hi, inc_lo)`` with
    its one-word buffer ``(has_buf, buf)``: Lemire's bounded integer, as NumPy's
    ``buffered_bounded_lemire_uint32``. Returns ``(int32 value, st_hi, st_lo, has_buf, buf)``."""
    rng = np.uint64(bound - 1)
    if rng == ZERO:
        # Generator.integers(0, 1) returns 0 without drawing.
        return np.int32(0), st_hi, st_lo, has_buf, buf
    excl = rng + ONE
    u, st_hi, st_lo, has_buf, buf = _next_u32(st_hi, st_lo, inc_hi, inc_lo, has_buf, buf)
    m = u * excl
    leftover = m & U32
    if leftover < excl:
        threshold = (U32 - rng) % excl
        while leftover < threshold:
            u, st_hi, st_lo, has_buf, buf = _next_u32(st_hi, st_lo, inc_hi, inc_lo, has_buf, buf)
            m = u * excl
            leftover = m & U32
    return np.int32(m >> S32), st_hi, st_lo, has_buf, buf


@njit(cache=True, inline="always")
def _fmix64(z):
    """MurmurHash3's 64-bit finalizer: a bijection that mixes every input bit into every output bit."""
    z ^= z >> np.uint64(33)
    z *= np.uint64(0xFF51AFD7ED558CCD)
    z ^= z >> np.uint64(33)
    z *= np.uint64(0xC4CEB9FE1A85EC53)
    z ^= z >> np.uint64(33)
    return z


@njit(cache=True, inline="always")
def counter_u32(seed, episode, counter):
    """A 32-bit random word, a pure function of ``(seed, episode, counter)``."""
    z = _fmix64(np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15))
    z = _fmix64(z ^ (np.uint64(episode) * np.uint64(0xD1B54A32D192ED03)))
    z = _fmix64(z ^ (np.uint64(counter) * np.uint64(0x8CB92BA72F3D8DD7) + np.uint64(1)))
    return z >> S32


@njit(cache=True)
def counter_starts(seed, episode, n_agents, width, height, out, row0):
    """Start cells of episode ``episode`` (>= 1) of the world seeded ``seed``; as ``pcg64_starts``.

    Uniform over the grid (Lemire's method with rejection), counter-based.
    """
    counter_cells(seed, episode, n_agents, (width, height), out, row0)


@njit(cache=True)
def counter_cells(seed, episode, n_agents, sizes, out, row0):
    """``counter_starts`` in any dimension (``sizes`` as ``pcg64_cells``'): the draws of one
    episode are numbered agent by agent, axis by axis."""
    counter = 0
    for n in range(n_agents):
        for c in range(len(sizes)):
            v, counter = counter_integer(seed, episode, counter, sizes[c])
            out[row0 + n, c] = v


@njit(cache=True, inline="always")
def counter_integer(seed, episode, counter, bound):
    """An integer uniform in ``0..bound-1`` from the counter-based words of ``(seed, episode)``
    from ``counter`` on (Lemire's method with rejection). Returns ``(int32 value, next counter)``."""
    excl = np.uint64(bound)
    threshold = (np.uint64(0x100000000) - excl) % excl
    while True:
        m = counter_u32(seed, episode, counter) * excl
        counter += 1
        if (m & U32) >= threshold:
            break
    return np.int32(m >> S32), counter


# ---------------------------------------------------------------------------------------------
# Counter-based draws for models (noise, tumbles, hits, puff releases, random sources).
# A model draws from ``stream_key(world_seed, episode, stream)`` (one key per world, episode and
# model stream) with two counters, usually ``(step, index)``: every draw is a pure function of
# these integers, so results never depend on thread count or on how the batch is split.

STREAM_STARTS = 0  # reserved: counter_starts draws start cells of later episodes


@njit(cache=True, inline="always")
def stream_key(seed, episode, stream):
    """A 64-bit key for the draws of one world seed, episode and stream (a model's constant)."""
    z = _fmix64(np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15))
    z = _fmix64(z ^ (np.uint64(episode) * np.uint64(0xD1B54A32D192ED03)))
    return _fmix64(z ^ (np.uint64(stream) * np.uint64(0xA0761D6478BD642F) + np.uint64(0x632BE59BD9B4E019)))


@njit(cache=True, inline="always")
def random_u64(key, a, b):
    """A 64-bit random word, a pure function of ``(key, a, b)`` (two non-negative counters)."""
    z = _fmix64(key ^ (np.uint64(a) * np.uint64(0x8CB92BA72F3D8DD7) + ONE))
    return _fmix64(z ^ (np.uint64(b) * np.uint64(0xE7037ED1A0B428DB) + np.uint64(0x1D8E4E27C47D124F)))


@njit(cache=True, inline="always")
def uniform(key, a, b):
    """A float64 uniform in ``[0, 1)`` (53 random bits) from ``random_u64(key, a, b)``."""
    return np.float64(random_u64(key, a, b) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, inline="always")
def normal(key, a, b):
    """A standard normal draw (Box-Muller) from the uniforms at counters ``(a, 2b)`` and ``(a, 2b + 1)``."""
    u1 = 1.0 - uniform(key, a, 2 * b)  # in (0, 1]: log is finite
    u2 = uniform(key, a, 2 * b + 1)
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


@njit(cache=True, inline="always")
def poisson(key, a, b, mean):
    """A Poisson draw with the given mean (0 <= mean <= 500) by inversion of one uniform."""
    u = uniform(key, a, b)
    k = 0
    p = np.exp(-mean)
    s = p
    while u > s and k < 10000:
        k += 1
        p *= mean / k
        s += p
        if p == 0.0 and s < u:  # the tail underflowed: rounding left u above the total
            break
    return k
