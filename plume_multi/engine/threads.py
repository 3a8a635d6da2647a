"""Numba's threads beside a trainer's: which threading layer, when threads start, one launch at a time.

A trainer in the same process (torch, JAX, NumPy's BLAS) must never be slowed by the simulator.
Numba's default threading layer on Linux is OpenMP, and GNU OpenMP is one library per process: the
first parallel launch calls ``omp_set_num_threads(NUMBA_NUM_THREADS)`` and ``omp_set_nested(1)`` on
the calling thread, which torch's OpenMP then obeys too. A torch set to one thread silently runs on
every core, with nested teams, against Numba's spinning workers: a small MLP's forward pass costs
40x more CPU after a 16-world vector env has stepped (16 cores). Two measures, both here:

* ``choose_layer()`` (run by ``import plume_multi``) selects Numba's ``workqueue`` layer: its own
  pthreads, which sleep between launches and touch no OpenMP state. A layer the user chose
  (``NUMBA_THREADING_LAYER``, or ``numba.config.THREADING_LAYER`` set before the import) is kept,
  and nothing changes once Numba's threads have started.
* ``threads_for(agents)``: the threaded kernels are used only for batches large enough to pay for
  them, and Numba's threads are not even started for smaller ones.

The ``workqueue`` layer is not thread-safe: two Python threads launching parallel kernels at once
abort the process. Every parallel kernel of the package runs inside ``PARALLEL_LOCK``.
"""

from __future__ import annotations

import os
import threading

import numba

__all__ = ["LAYER", "PARALLEL_LOCK", "choose_layer", "threads_started", "threads_for"]

LAYER = "workqueue"
# One parallel launch at a time, from any Python thread (re-entrant: a locked section may call
# another).
PARALLEL_LOCK = threading.RLock()


def threads_started() -> bool:
    """Whether Numba has started its threading layer in this process (then it cannot change)."""
    from numba.np.ufunc import parallel

    return bool(parallel._is_initialized)


def choose_layer() -> str:
    """Select ``LAYER`` unless the user chose a layer or Numba's threads already run; return the
    layer Numba will use (``numba.config.THREADING_LAYER``)."""
    user_choice = "NUMBA_THREADING_LAYER" in os.environ or numba.config.THREADING_LAYER != "default"
    if not user_choice and not threads_started():
        numba.config.THREADING_LAYER = LAYER
    return numba.config.THREADING_LAYER


def threads_for(agents: int, min_agents: int) -> int:
    """Numba's thread count for a batch of ``agents``, or 1 when the batch is smaller than
    ``min_agents`` or only one thread is configured; Numba's threads start only when needed."""
    if agents < min_agents or numba.config.NUMBA_NUM_THREADS < 2:
        return 1
    return numba.get_num_threads()  # starts the threading layer
