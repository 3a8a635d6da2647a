"""``window_sum`` is NumPy's sum of the transposed window, in 2-D and 3-D, to the last bit."""

import numpy as np
import pytest

from plume_multi.models.plumes.poisson_hits.numpy_sum import window_sum


def _values(rng, shape):
    # magnitudes over 12 decades: a different order of additions would change the last bits
    return rng.random(shape) * 10.0 ** rng.integers(-6, 6, shape)


@pytest.mark.parametrize("h, w", [(1, 1), (1, 7), (3, 5), (11, 13), (12, 12), (53, 107), (211, 311), (700, 611)])
def test_a_plane_s_sum_is_numpys_sum_of_the_transposed_window(h, w):
    rng = np.random.default_rng(h * 1000 + w)
    a = _values(rng, (h + 3, w + 5))
    for oy, ox, scale in ((0, 0, 1.0), (2, 4, 0.37), (3, 5, 1e-3)):
        hh, ww = h + 3 - oy, w + 5 - ox
        got = window_sum(a, (oy, ox), (hh, ww), scale)
        # as otto-benchmark holds a belief: indexed [x, y], C-contiguous
        assert got == np.sum(np.ascontiguousarray((scale * a[oy:oy + hh, ox:ox + ww]).T)), (oy, ox, scale)


@pytest.mark.parametrize("d, h, w", [(1, 1, 1), (2, 3, 5), (9, 9, 9), (17, 13, 11), (41, 61, 71)])
def test_a_volume_s_sum_is_numpys_sum_of_the_transposed_window(d, h, w):
    rng = np.random.default_rng(d * 10000 + h * 100 + w)
    a = _values(rng, (d + 2, h + 3, w + 4))
    for oz, oy, ox, scale in ((0, 0, 0, 1.0), (1, 2, 3, 0.5), (2, 3, 4, 7.25)):
        dd, hh, ww = d + 2 - oz, h + 3 - oy, w + 4 - ox
        got = window_sum(a, (oz, oy, ox), (dd, hh, ww), scale)
        expected = np.sum(np.ascontiguousarray((scale * a[oz:oz + dd, oy:oy + hh, ox:ox + ww]).transpose(2, 1, 0)))
        assert got == expected, (oz, oy, ox)
