"""Counter-based draws for models: exact against a plain NumPy reference, and the right law."""

import numpy as np
from numba import njit

from plume_multi.engine import rng

from rng_reference import ref_key, ref_u64


@njit(cache=True)
def _draws(seed, episode, stream, n, mean):
    key = rng.stream_key(seed, episode, stream)
    words = np.empty(n, np.uint64)
    u = np.empty(n)
    z = np.empty(n)
    p = np.empty(n, np.int64)
    for i in range(n):
        words[i] = rng.random_u64(key, 3, i)
        u[i] = rng.uniform(key, 4, i)
        z[i] = rng.normal(key, 5, i)
        p[i] = rng.poisson(key, 6, i, mean)
    return key, words, u, z, p


def test_words_equal_the_reference():
    for seed, episode, stream in ((0, 0, 0), (2**63 - 1, 7, 12), (123456789, 2**31, 3)):
        key, words, u, _, _ = _draws(seed, episode, stream, 50, 1.0)
        assert int(key) == ref_key(seed, episode, stream)
        expected = [ref_u64(ref_key(seed, episode, stream), 3, i) for i in range(50)]
        assert [int(w) for w in words] == expected
        assert u[0] == (ref_u64(int(key), 4, 0) >> 11) / 2.0**53


def test_laws_of_the_draws():
    _, _, u, z, p = _draws(1, 0, 9, 200_000, 3.5)
    assert (0 <= u).all() and (u < 1).all()
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() * 12 - 1) < 0.02
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    assert abs(p.mean() - 3.5) < 0.03 and abs(p.var() - 3.5) < 0.06
    _, _, _, _, p0 = _draws(1, 0, 9, 1000, 0.0)
    assert (p0 == 0).all()


def test_streams_and_episodes_differ():
    a = _draws(1, 0, 1, 100, 1.0)[1]
    b = _draws(1, 0, 2, 100, 1.0)[1]
    c = _draws(1, 1, 1, 100, 1.0)[1]
    assert not np.array_equal(a, b) and not np.array_equal(a, c)
