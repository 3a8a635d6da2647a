"""What every source motion is made of: the base class ``SourceMotion`` and its compiled roles.

A source motion moves a plume's sources: the plume keeps their positions (``(B, K, 2)`` float64
cells, ``K`` sources per world) and the motion's own state (``(B, K, W)`` float64, the columns
``STATE``) among its state arrays, and calls the motion's compiled functions from its own: at a
reset after placing the sources, ``start``; every step, before the agents move, ``move``.

Signatures (``M`` the motion's parameter record, ``MS`` its state, ``xy`` the positions):

    start(M, MS, xy, b, k, seed, episode, lattice)
        source ``k`` of world ``b`` starts at ``xy[b, k]``: set its state ``MS[b, k, :]``.
    move(M, MS, xy, b, k, t, shape, seed, episode, lattice)
        step ``t >= 1``: move source ``k`` of world ``b``, keeping it in ``[0, W - 1] x
        [0, H - 1]`` (``shape = (W, H)``).

``lattice`` is a compile-time flag (``engine.api.static_flag``): on for a plume whose sources sit
on cells (``PoissonHits``): a source then moves one cell at a time along the four cardinal
directions. A motion that moves sources on cells may also give the Bayes filter's prediction of
where a target it moves goes, for a belief over the cells (``sensors.Belief``):

    predict(M, belief, scratch)
        ``belief`` ``(H, W)`` float64, a probability over the target's cell, replaced in place by
        the probability one step later under the motion's law (``scratch`` ``(H, W)``: free).

Why a record and not a named tuple: the plume carries the motion's parameters inside its own
parameters, which must be flat (Numba's parallel loop refuses a tuple inside a tuple). A record,
a one-row NumPy structured array of the motion's own dtype (``RECORD``), is an array: it passes,
its fields are named (``M.speed``), and its dtype is the motion's "class": ``start_source`` and
``move_source`` below find the motion's functions from it when the step compiles, as
``engine.api.sample_at`` finds a plume's from the class of its parameters, so the call is
resolved as if the plume had named the motion. They are called once per source and world per
step, so they are not inlined into the step: an ``overload(inline="always")`` made every
combination take about 2.5 s more to compile, for nothing measurable at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numba import typeof, types
from numba.extending import overload

from ...engine.jit import njit
from ...errors import ValidationError
from ..base import Model

__all__ = ["SourceMotion", "MotionKernels", "start_source", "move_source", "predict_belief", "motion_record",
           "register_motion", "no_start", "no_prediction", "reflect"]


@njit(inline="always")
def no_start(M, MS, xy, b, k, seed, episode, lattice):
    """A motion with no state to set at a reset."""


@njit(inline="always")
def no_prediction(M, belief, scratch):
    """A target that does not move: the belief stays."""


@dataclass(frozen=True)
class MotionKernels:
    """A source motion's compiled functions (module docstring: signatures)."""

    move: Any
    start: Any = no_start
    predict: Any = no_prediction


_MOTIONS: dict = {}  # numba Record type of a motion's RECORD -> its MotionKernels


def register_motion(record: np.dtype, kernels: MotionKernels, owner: str) -> None:
    """Make ``start_source`` / ``move_source`` find ``kernels`` for records of dtype ``record``."""
    key = typeof(np.zeros(1, record)).dtype
    known = _MOTIONS.get(key)
    if known is not None and known is not kernels:
        raise ValidationError(f"{owner}: RECORD has the fields of another motion's record; give it a field of its own")
    _MOTIONS[key] = kernels


def motion_record(record: np.dtype, **values) -> np.ndarray:
    """A read-only one-row structured array of dtype ``record`` holding ``values``."""
    out = np.zeros(1, record)
    for name, value in values.items():
        out[0][name] = value
    out.flags.writeable = False
    return out


def start_source(M, MS, xy, b, k, seed, episode, lattice):
    """Call the ``start`` of the motion whose record is ``M`` (one-row record array)."""


def move_source(M, MS, xy, b, k, t, shape, seed, episode, lattice):
    """Call the ``move`` of the motion whose record is ``M`` (one-row record array)."""


def _kernels_of(M) -> MotionKernels:
    return _MOTIONS[M.dtype]


# No motion (None) does nothing: a branch on ``is_on(M)`` is typed before it is pruned.
@overload(start_source)
def _start_source(M, MS, xy, b, k, seed, episode, lattice):
    if isinstance(M, types.NoneType):
        return lambda M, MS, xy, b, k, seed, episode, lattice: None
    fn = _kernels_of(M).start

    def impl(M, MS, xy, b, k, seed, episode, lattice):
        fn(M[0], MS, xy, b, k, seed, episode, lattice)
    return impl


@overload(move_source)
def _move_source(M, MS, xy, b, k, t, shape, seed, episode, lattice):
    if isinstance(M, types.NoneType):
        return lambda M, MS, xy, b, k, t, shape, seed, episode, lattice: None
    fn = _kernels_of(M).move

    def impl(M, MS, xy, b, k, t, shape, seed, episode, lattice):
        fn(M[0], MS, xy, b, k, t, shape, seed, episode, lattice)
    return impl


def predict_belief(M, belief, scratch):
    """Call the ``predict`` of the motion whose record is ``M`` (one-row record array)."""


@overload(predict_belief)
def _predict_belief(M, belief, scratch):
    if isinstance(M, types.NoneType):
        return lambda M, belief, scratch: None
    fn = _kernels_of(M).predict

    def impl(M, belief, scratch):
        fn(M[0], belief, scratch)
    return impl


@njit(inline="always")
def reflect(x, high):
    """``x`` folded into ``[0, high]`` by mirrors at both edges, and whether the motion that
    reached it is reversed (an odd number of reflections). ``high <= 0``: 0."""
    if high <= 0.0:
        return 0.0, False
    period = 2.0 * high
    folds = int(np.floor(x / high))
    y = x % period
    if y > high:
        y = period - y
    return y, folds % 2 != 0


@dataclass(frozen=True)
class SourceMotion(Model):
    """How a plume's sources move. Compiled functions: ``MotionKernels``.

    Class members: ``RECORD`` (the parameters' structured dtype, None for no motion), ``STATE``
    (the names of the per-source state columns), ``lattice_ok`` (it can move sources on cells,
    for ``PoissonHits``).
    """

    family: ClassVar[str] = "source_motion"
    RECORD: ClassVar[Any] = None
    STATE: ClassVar[tuple] = ()
    lattice_ok: ClassVar[bool] = False
    # motions move sources in the plane: the plumes with several or moving sources are 2-D
    dimensions: ClassVar[tuple] = (2,)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("RECORD") is not None and cls.__dict__.get("kernels") is not None:
            register_motion(cls.RECORD, cls.kernels, cls.__name__)

    @property
    def moves(self) -> bool:
        """False for ``Static`` (the plume keeps its sources where they start)."""
        return self.RECORD is not None

    def record(self) -> np.ndarray | None:
        """The parameters as the compiled functions read them (``M``): a one-row read-only
        record array of dtype ``RECORD``, or None for no motion."""
        return None

    def check_grid(self, grid_size, owner: str) -> None:
        """Raise ``ValidationError`` (naming ``owner.source_motion``) when this motion cannot run on
        a ``(width, height)`` grid."""

    def state_width(self) -> int:
        return len(self.STATE)
