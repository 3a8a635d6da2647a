"""Winds that change: the four plume regimes of Singh et al. (2023), ``Wind(regime=...)``.

Singh, van Breugel, Rao & Brunton, "Emergent behaviour and neural dynamics in artificial agents
tracking odour plumes", Nature Machine Intelligence 5, 58-70 (2023), trained and tested their
agents on puff plumes in four configurations. Their simulator (github.com/BruntonUWBio/plumetracknets,
``code/sim_utils.py``, ``get_wind_vectors_flexible``; datasets ``constantx5b5``,
``switch45x5b5``, ``noisy3x5b5``; wind 0.5 m/s, puff birth rate 1 per 0.01 s step, 120 s runs)
defines them as:

* ``"constant"``: the wind keeps its direction;
* ``"switch-once"`` (their ``switch45``): the direction turns once, by +45 degrees
  (anticlockwise), at 60 s of the run; their episodes start 0-30 s after it (at 60-90 s);
* ``"switch-many"`` (``noisy3``): every 300 steps of 0.01 s (3 s), each switch time moved by a
  whole number of steps drawn uniformly in [-30, 30) (+-0.3 s), the direction becomes a fresh
  draw from N(0, 30 degrees) (their ``degz / 2`` with ``degz = 60``), clipped to +-60 degrees,
  and holds until the next switch;
* ``"sparse"`` (``constantx5b5`` at ``birthx 0.4``): the constant wind with puffs released at
  0.4 times the rate (their evaluation drops each puff with probability 0.6: the same thinned
  Poisson process).

Here the regime turns the whole wind field (pompy's meandering field, computed in the plume's own
direction ``(u, v)``) by an angle ``theta(t)``: every wind velocity the puffs are carried by and
the ``Wind`` sensor reads is ``R(theta) (u, v)``. Times count the plume's advances since its
reset, spin-up included (``dt`` each): ``"switch-once"`` turns at a time drawn uniformly in
``switch_after`` (default 0-30 s; with 30 s of spin-up the episode begins 0-30 s after the turn,
as theirs did), ``"switch-many"`` draws its first direction at the reset and switches at
``k * switch_every + U(-switch_jitter, switch_jitter)`` for ``k = 1, 2, ...``.

Draws: ``rng.stream_key(seed, episode, STREAM)`` per world; counters ``(0, 0)``: the switch-once
time; ``(k, 0)``: the jitter of switch ``k`` (``k >= 1``); ``rng.normal`` at ``(k, 1)``: the
direction after switch ``k`` (``k = 0``: at the reset).
"""

from __future__ import annotations

import numpy as np

from ....checks import check_choice, check_real, fail
from ....engine import rng
from ....engine.api import static_flag
from ....engine.jit import njit

__all__ = ["REGIMES", "STREAM", "check_regime", "regime_scalars", "start_regime", "regime_step"]

STREAM = 0x5BE0CD19  # the wind regime's random stream
REGIMES = ("constant", "switch-once", "switch-many", "sparse")
CONSTANT, SWITCH_ONCE, SWITCH_MANY, SPARSE = range(4)
NO_SWITCH = -1


def check_regime(wind) -> None:
    """Validate (and normalise) the regime fields of a ``Wind``."""
    check_choice("Wind", "regime", wind.regime, REGIMES)
    set_ = lambda name, value: object.__setattr__(wind, name, value)  # noqa: E731
    set_("switch_degrees", check_real("Wind", "switch_degrees", wind.switch_degrees, -360.0, 360.0))
    try:
        lo, hi = wind.switch_after
    except (TypeError, ValueError):
        fail("Wind", "switch_after", wind.switch_after, "(earliest, latest) seconds, 0 <= earliest <= latest <= 1e6")
    lo = check_real("Wind", "switch_after", lo, 0.0, 1e6)
    hi = check_real("Wind", "switch_after", hi, lo, 1e6)
    set_("switch_after", (lo, hi))
    set_("switch_every", check_real("Wind", "switch_every", wind.switch_every, 0.0, 1e6, low_open=True))
    half = wind.switch_every / 2
    set_("switch_jitter", check_real("Wind", "switch_jitter", wind.switch_jitter, 0.0, half, high_open=True,
                                     expected=f"a finite number in [0, switch_every / 2) = [0, {half:g}) "
                                              f"(Wind.switch_every is {wind.switch_every:g} s)"))
    set_("direction_std", check_real("Wind", "direction_std", wind.direction_std, 0.0, 360.0))
    set_("direction_max", check_real("Wind", "direction_max", wind.direction_max, 0.0, 180.0))
    set_("sparsity", check_real("Wind", "sparsity", wind.sparsity, 0.0, 1.0))


def _steps(seconds: float, dt: float) -> float:
    return seconds / dt


def regime_scalars(wind, dt: float) -> dict:
    """The physics parameters of a regime (``PuffParams`` fields); times in advances of ``dt``.
    A constant wind ``(u, v)`` (not a ``Wind``) has the constant regime."""
    if wind is None or isinstance(wind, tuple):
        return dict(regime=CONSTANT, turn=0.0, once_lo=0.0, once_hi=0.0, every=1.0, jitter=0.0,
                    dir_std=0.0, dir_max=0.0, turns=None)
    regime = REGIMES.index(wind.regime)
    return dict(regime=regime, turn=wind.switch_degrees,
                once_lo=_steps(wind.switch_after[0], dt), once_hi=_steps(wind.switch_after[1], dt),
                every=_steps(wind.switch_every, dt), jitter=_steps(wind.switch_jitter, dt),
                dir_std=wind.direction_std, dir_max=wind.direction_max,
                turns=static_flag(regime in (SWITCH_ONCE, SWITCH_MANY)))


# --------------------------------------------------------------------- compiled
@njit(cache=True, inline="always")
def _turn_to(b, degrees, st):
    rad = degrees * (np.pi / 180.0)
    st.turn[b, 0] = degrees
    st.turn[b, 1] = np.cos(rad)
    st.turn[b, 2] = np.sin(rad)


@njit(cache=True, inline="always")
def _direction(key, k, p):
    return min(max(p.dir_std * rng.normal(key, k, 1), -p.dir_max), p.dir_max)


@njit(cache=True, inline="always")
def _switch_time(key, k, p):
    """The advance of switch ``k >= 1`` of switch-many."""
    jitter = p.jitter * (2.0 * rng.uniform(key, k, 0) - 1.0)
    return np.int64(np.floor(k * p.every + jitter + 0.5))


@njit(cache=True, no_cpython_wrapper=True)
def start_regime(b, seed, episode, p, st, turns):
    """At a reset: the regime's first direction and first switch of world ``b`` (``turns``:
    ``p.turns``; None, the wind never turns and nothing else is compiled)."""
    key = rng.stream_key(seed, episode, STREAM)
    st.regime_key[b] = key
    st.switches[b] = 0
    st.next_switch[b] = NO_SWITCH
    _turn_to(b, 0.0, st)
    if turns is None:
        return
    if p.regime == SWITCH_ONCE:
        u = rng.uniform(key, 0, 0)
        st.next_switch[b] = np.int64(np.floor(p.once_lo + u * (p.once_hi - p.once_lo) + 0.5))
    elif p.regime == SWITCH_MANY:
        _turn_to(b, _direction(key, 0, p), st)
        st.next_switch[b] = _switch_time(key, 1, p)


@njit(cache=True, no_cpython_wrapper=True)
def regime_step(b, p, st):
    """Before the advance number ``st.clock[b]``: switch when it is time."""
    due = st.next_switch[b]
    if due < 0 or st.clock[b] < due:
        return
    key = st.regime_key[b]
    k = st.switches[b] + 1
    st.switches[b] = k
    if p.regime == SWITCH_ONCE:
        _turn_to(b, p.turn, st)
        st.next_switch[b] = NO_SWITCH
    else:
        _turn_to(b, _direction(key, k, p), st)
        st.next_switch[b] = _switch_time(key, k + 1, p)


@njit(cache=True, inline="always")
def turned(b, st, u, v):
    """``(u, v)`` turned by world ``b``'s regime angle (unchanged while it is 0)."""
    if st.turn[b, 0] == 0.0:
        return u, v
    c = st.turn[b, 1]
    s = st.turn[b, 2]
    return u * c - v * s, u * s + v * c
