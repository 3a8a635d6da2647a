"""A ``PoissonHits`` target that moves: ``PoissonHits(..., source_motion=sources.RandomWalk(...))``.

The target moves on cells (the motion's ``lattice`` mode: one cell at a time along the four
cardinal directions, a step off the grid refused) once per step, before the agents move; hits
are drawn from where it is then, and an agent arrives when it stands on it. The compiled functions
here are the plume's when its source moves (``PoissonHits.kernels``): the plume's own, plus the
motion's start at a reset (after the target is drawn) and its move every step.

``sensors.Belief`` then predicts the target's motion before each update with the motion's Bayes
filter (``MotionKernels.predict``: for ``RandomWalk``, the walk with no memory, exact when the
target turns every step), and ``policies.Infotaxis`` and ``policies.Greedy`` decide on the belief
predicted one step ahead (``predicted``): where the target will be when their move is made.

State: the plume's ``source`` ``(B, 2)`` and ``first_hit`` ``(B,)``, and ``motion`` ``(B, 1, W)``
(the motion's state columns).
"""

from __future__ import annotations


import numpy as np

from ....engine.jit import njit
from ...base import PlumeKernels
from ...sources.motion import move_source, predict_belief, start_source
from . import plume as _m

__all__ = ["KERNELS", "MovingPoissonHitsParams", "predict", "predicted"]

MovingPoissonHitsParams = _m.MovingPoissonHitsParams


@njit(inline="always")
def _cells(S):
    """The sources ``(B, 2)`` as the ``(B, 1, 2)`` positions a motion moves (a view)."""
    return S[0].reshape((S[0].shape[0], 1, 2))


@njit(inline="always")
def reset_world(P, S, b, seed, episode, pos, base, n_agents):
    _m.reset_world(P, S, b, seed, episode, pos, base, n_agents)
    start_source(P.motion, S[2], _cells(S), b, 0, seed, episode, True)


@njit(inline="always")
def advance(P, S, b, t, seed, episode):
    move_source(P.motion, S[2], _cells(S), b, 0, t, (P.width, P.height), seed, episode, True)


@njit(inline="always")
def predict(P, belief, scratch):
    """``belief`` ``(H, W)`` one step ahead under the target's motion (in place)."""
    predict_belief(P.motion, belief, scratch)


KERNELS = PlumeKernels(source=_m.source, sample_cell=_m.sample_cell, sample_at=_m.sample_at, reset_world=reset_world,
                       advance=advance)


def predicted(plume, beliefs: np.ndarray) -> np.ndarray:
    """``(G, H, W)`` beliefs one step ahead under ``plume``'s target motion (a new array; the same
    arrays for a target that stays): the policies' NumPy of the Belief's compiled prediction, the
    same sums in the same order (``RandomWalk.predicted``)."""
    motion = getattr(plume, "source_motion", None)
    if motion is None or not motion.moves:
        return beliefs
    return motion.predicted(beliefs)
