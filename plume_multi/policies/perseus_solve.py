"""``Perseus.solve``: point-based value iteration (Perseus; Spaan & Vlassis 2005, JAIR 24, 195) on
the search POMDP of a scenario (the formulation: ``perseus.py``), whose observations follow the
scenario's belief model: a Poisson-hit plume's closed form or a likelihood (``models.likelihoods``:
calibrated from any plume by default).

0. **The model.** The scenario gets a ``sensors.Belief`` of that model
   (``belief_state.scenario_with_belief``, as ``Perseus.scenario_for``): the given likelihood, else
   its own Belief's, else the Poisson closed form, else one calibrated from the plume (cached).

1. **Belief points.** Episodes of the scenario itself (one searcher, ``Simulator`` worlds seeded
   ``seed, seed + 1, ...``) are played by an exploring policy (infotaxis by default), a share
   ``epsilon`` of its moves replaced by random moves that stay in the grid; the belief after the
   first hit of every episode is kept, and each later belief with probability ``keep``, until
   ``beliefs`` distinct points ``(belief, cell)`` are held. Or the points are given.
2. **Value iteration.** The set starts with one vector per move, ``-1 / (1 - discount)`` (the value
   of never finding the source), or with a given policy's vectors. Each iteration (Perseus's stage) backs up beliefs drawn at random
   among those not yet improved, each backup giving the best vector of its belief against the
   previous set (kept when it is worth more than the belief's previous value, else the belief's
   previous best vector is), until every belief is worth at least what it was. The value of every
   point never decreases. The backups of one belief are parallel over vectors
   (``perseus_kernels.backup``).
3. **Bounds.** The mean value of the points after each iteration is a lower bound of what the
   vectors' policy is worth there; the QMDP value (the agent told the source's cell after its move)
   an upper bound of the optimal value: both in minus discounted steps, per iteration in the report.

Deterministic for a seed: the episodes are the engine's (counter-based), the random moves and the
order of the backups come from NumPy generators seeded by ``seed``, and every compiled sum runs in
one fixed order whatever the thread count.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import numpy as np

from ..checks import check_bool, check_int, check_memory, check_real, is_real, shown
from ..engine.threads import PARALLEL_LOCK
from ..errors import ValidationError
from . import perseus_kernels as pk
from .perseus_problem import DEFAULT_DISCOUNT, belief_model, best_values, fit_problem, floor_value, three_axes

__all__ = ["SolveReport"]  # solving is Perseus.solve

EXPLORERS = ("infotaxis", "space-aware-infotaxis", "greedy", "random")
SAMPLE_WORLDS = 64  # worlds per batch of exploring episodes (a constant: the points never depend on it)
MAX_BELIEFS = 1_000_000
STOPS = ("iterations", "seconds", "converged")


@dataclass(frozen=True)
class SolveReport:
    """What ``Perseus.solve`` reached.

    Attributes:
        iterations: Perseus iterations (stages) completed.
        seconds: wall time of the value iteration (s).
        sample_seconds: wall time of playing the exploring episodes (s; 0 for given points).
        n_beliefs: belief points backed up.
        lower: the mean value of the points under the vectors, before the first iteration and after
            each (minus discounted steps, non-decreasing): a lower bound there.
        upper: the mean QMDP value of the points (the source's cell told after the move): an upper
            bound of the optimal value there.
        n_alphas: the size of the set after each iteration.
        backups: the backups of each iteration.
        stopped: ``"iterations"`` (the budget), ``"seconds"`` (the time budget, within an
            iteration: its new vectors were added to the previous set), or ``"converged"`` (an
            iteration raised the mean value by at most ``tol``).
        discount: the discount of the values.
    """

    iterations: int
    seconds: float
    sample_seconds: float
    n_beliefs: int
    lower: tuple
    upper: float
    n_alphas: tuple
    backups: tuple
    stopped: str
    discount: float

    @property
    def gap(self) -> float:
        """``upper - lower[-1]``: how far from optimal the vectors may be on the points (discounted
        steps)."""
        return float(self.upper - self.lower[-1])

    def summary(self) -> str:
        return (f"Perseus: {self.iterations} iterations in {self.seconds:.1f} s ({self.stopped}), "
                f"{self.n_alphas[-1] if self.n_alphas else 0} alpha vectors, {self.n_beliefs} beliefs; mean value "
                f"{self.lower[-1]:.4f} (upper bound {self.upper:.4f}, gap {self.gap:.4f} discounted steps, "
                f"discount {self.discount})")

    def to_dict(self) -> dict:
        out = asdict(self)
        out["lower"], out["n_alphas"], out["backups"] = list(self.lower), list(self.n_alphas), list(self.backups)
        return out

    @classmethod
    def from_dict(cls, data, where: str) -> "SolveReport":
        """The report of a saved policy's record, each field checked."""
        names = set(cls.__dataclass_fields__)
        if not isinstance(data, dict) or set(data) != names:
            raise ValidationError(f"{where}: the report holds {shown(sorted(data) if isinstance(data, dict) else data)}; "
                                  f"expected the fields {sorted(names)}")

        def numbers(name, integer=False):
            v = data[name]
            ok = isinstance(v, list) and all((isinstance(x, int) and not isinstance(x, bool)) if integer else
                                             (is_real(x) and math.isfinite(x)) for x in v)
            if not ok:
                raise ValidationError(f"{where}: report.{name} is {shown(v)}; expected a list of "
                                      f"{'integers' if integer else 'finite numbers'}")
            return tuple(v)

        for name in ("iterations", "n_beliefs"):
            check_int(where, f"report.{name}", data[name], 0, 2**62)
        for name in ("seconds", "sample_seconds", "upper", "discount"):
            check_real(where, f"report.{name}", data[name])
        if data["stopped"] not in STOPS:
            raise ValidationError(f"{where}: report.stopped is {shown(data['stopped'])}; expected one of {list(STOPS)}")
        return cls(int(data["iterations"]), float(data["seconds"]), float(data["sample_seconds"]),
                   int(data["n_beliefs"]), numbers("lower"), float(data["upper"]), numbers("n_alphas", True),
                   numbers("backups", True), data["stopped"], float(data["discount"]))


# ---------------------------------------------------------------------------------------------- points
def single_searcher(scenario):
    """The scenario with one searcher (the POMDP's agent): its first start cell, no team."""
    if scenario.n_agents == 1:
        return scenario
    starts = scenario.start_positions
    return scenario.replace(n_agents=1, team=False, start_positions=None if starts is None else starts[:1])


def _explorer(explore, scenario):
    if isinstance(explore, str):
        if explore not in EXPLORERS:
            raise ValidationError(f"Perseus.solve: explore={explore!r}; expected one of {list(EXPLORERS)} or a policy "
                                  "with act(simulator)")
        if explore == "random":
            return None
        if explore == "greedy":
            from .greedy import Greedy

            return Greedy()
        from .infotaxis import Infotaxis

        return Infotaxis(space_aware=explore == "space-aware-infotaxis")
    if not callable(getattr(explore, "act", None)):
        raise ValidationError(f"Perseus.solve: explore={shown(explore, typed=True)}; expected one of {list(EXPLORERS)} "
                              "or a policy with act(simulator) (Infotaxis, Greedy, a Perseus, ...)")
    check = getattr(explore, "check_scenario", None)
    if callable(check):
        check(scenario, "Perseus.solve: explore")
    return explore


def _random_moves(rng, pos, moves, sides):
    """For each row of ``pos`` ``(B, dims)``, a move drawn uniformly among those that stay in the grid."""
    new = pos[:, None, :] + moves[None, :, :]
    allowed = np.all((new >= 0) & (new < np.asarray(sides)), axis=2)  # (B, K)
    counts = allowed.sum(axis=1)
    pick = np.minimum((rng.random(len(pos)) * np.maximum(counts, 1)).astype(np.int64), np.maximum(counts - 1, 0))
    ranks = np.cumsum(allowed, axis=1) - 1
    return np.argmax(allowed & (ranks == pick[:, None]), axis=1).astype(np.int64)


def sample_points(scenario, n: int, *, explore="infotaxis", epsilon: float = 0.1, keep: float = 0.25, seed: int = 0,
                  progress: bool = False):
    """``n`` distinct belief points ``(beliefs (n, *plume.shape) float64, cells (n, dims) int64)``
    met along the scenario's own episodes (one searcher), as the module docstring says."""
    from tqdm.auto import tqdm

    from ..simulator import Simulator
    from .belief_state import belief_view

    sc = single_searcher(scenario)
    explorer = _explorer(explore, sc)
    moves = np.asarray(sc.moves(), dtype=np.int64)
    sides = belief_model(sc).shape[::-1][:moves.shape[1]]
    sim = Simulator(sc, num_worlds=SAMPLE_WORLDS, autoreset="disabled")
    beliefs, cells, seen = [], [], set()
    barren = 0
    with tqdm(total=n, desc="Perseus: belief points", unit="belief", disable=not progress, leave=False,
              dynamic_ncols=True) as bar:
        for batch in range(n + 1):
            before = len(beliefs)
            rng = np.random.default_rng([seed, batch])
            sim.reset(seed=seed + batch * SAMPLE_WORLDS)
            for t in range(sc.max_steps):
                active = sim.active.copy()
                if not active.any() or len(beliefs) >= n:
                    break
                view = belief_view(sim, "Perseus.solve")  # the belief searchers' accessor: one belief per world
                state = view.beliefs
                pos = np.asarray(view.positions, dtype=np.int64)
                take = active & ((rng.random(len(active)) < keep) | (t == 0))
                for w in np.flatnonzero(take):
                    p = state[w]
                    key = (p.tobytes(), pos[w].tobytes())
                    if key in seen:
                        continue
                    seen.add(key)
                    beliefs.append(np.array(p, dtype=np.float64))
                    cells.append(pos[w].copy())
                    bar.update(1)
                    if len(beliefs) >= n:
                        break
                if explorer is None:
                    actions = _random_moves(rng, pos, moves, sides)
                else:
                    actions = np.array(explorer.act(sim), dtype=np.int64)
                    swap = rng.random(len(actions)) < epsilon
                    actions = np.where(swap, _random_moves(rng, pos, moves, sides), actions)
                sim.step(actions)
            if len(beliefs) >= n:
                break
            barren = barren + 1 if len(beliefs) == before else 0
            if barren >= 3:  # every belief these episodes meet is held already (a tiny problem)
                break
    if not beliefs:
        raise ValidationError("Perseus.solve: the scenario's episodes gave no belief point; expected episodes that "
                              "take at least one step")
    return np.array(beliefs), np.array(cells, dtype=np.int64)


def _given_points(points, plume):
    """``points = (beliefs, cells)`` checked: probabilities of the plume's shape, cells inside the grid."""
    if not isinstance(points, (tuple, list)) or len(points) != 2:
        raise ValidationError(f"Perseus.solve: points={shown(points, typed=True)}; expected (beliefs, cells)")
    try:
        b = np.asarray(points[0], dtype=np.float64)
        c = np.asarray(points[1])
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"Perseus.solve: points could not be read as arrays ({exc}); expected (beliefs "
                              f"(n, {', '.join(map(str, plume.shape))}), cells (n, dims))") from None
    dims = 3 if len(plume.shape) == 3 else 2
    if b.ndim != 1 + len(plume.shape) or b.shape[1:] != plume.shape or b.shape[0] < 1:
        raise ValidationError(f"Perseus.solve: points' beliefs have shape {b.shape}; expected (n >= 1, "
                              f"{', '.join(map(str, plume.shape))})")
    if c.shape != (b.shape[0], dims) or c.dtype.kind not in "iu":
        raise ValidationError(f"Perseus.solve: points' cells have shape {c.shape} and dtype {c.dtype}; expected "
                              f"({b.shape[0]}, {dims}) integers")
    if not np.all(np.isfinite(b)) or b.min() < 0.0 or not np.allclose(b.reshape(len(b), -1).sum(axis=1), 1.0,
                                                                      rtol=0.0, atol=1e-9):
        raise ValidationError("Perseus.solve: points' beliefs must be probabilities: finite, non-negative, each "
                              "summing to 1 (within 1e-9)")
    sides = np.array(plume.shape[::-1])
    if (c < 0).any() or (c >= sides).any():
        raise ValidationError(f"Perseus.solve: points' cells lie outside the {' x '.join(map(str, sides))} grid")
    return np.ascontiguousarray(b), np.ascontiguousarray(c, dtype=np.int64)


# ---------------------------------------------------------------------------------------------- bounds
def _shifted(mask, shift):
    """``out[i] = mask[i - shift]`` (False where ``i - shift`` leaves the array)."""
    out = np.zeros_like(mask)
    src = tuple(slice(max(0, -s), n - max(0, s)) for s, n in zip(shift, mask.shape))
    dst = tuple(slice(max(0, s), n - max(0, -s)) for s, n in zip(shift, mask.shape))
    out[dst] = mask[src]
    return out


def qmdp_vectors(plume_shape, moves3, discount):
    """``(K, 2D-1, 2H-1, 2W-1)`` QMDP vectors: ``Q_a(delta) = -1 + discount * V(delta - move_a)``,
    ``V`` the value with the source's offset known (``-(1 - discount^n) / (1 - discount)`` for the
    least number ``n`` of moves that reach it), 0 on the source; ``delta - move_a`` out of the box
    the floor."""
    shape3 = three_axes(plume_shape)
    box = tuple(2 * n - 1 for n in shape3)
    centre = tuple(n - 1 for n in shape3)
    steps = np.full(box, -1, dtype=np.int64)
    steps[centre] = 0
    frontier = np.zeros(box, dtype=bool)
    frontier[centre] = True
    n = 0
    while frontier.any():
        n += 1
        reached = np.zeros(box, dtype=bool)
        for m in moves3:  # delta reaches delta - m: the cells one move before the frontier
            reached |= _shifted(frontier, tuple(int(v) for v in m[::-1]))
        reached &= steps < 0
        steps[reached] = n
        frontier = reached
    floor = floor_value(discount)
    value = np.where(steps >= 0, -(1.0 - discount ** np.maximum(steps, 0)) / (1.0 - discount), floor)
    out = np.empty((len(moves3),) + box)
    for a, m in enumerate(moves3):
        inside = _shifted(np.ones(box, dtype=bool), tuple(int(v) for v in m[::-1]))
        moved = np.full(box, floor)
        src = tuple(slice(max(0, -s), k - max(0, s)) for s, k in zip(m[::-1], box))
        dst = tuple(slice(max(0, s), k - max(0, -s)) for s, k in zip(m[::-1], box))
        moved[dst] = value[src]  # moved[delta] = value[delta - m]
        out[a] = np.where(inside, -1.0 + discount * moved, floor)
        out[a][centre] = 0.0
    return out


# ---------------------------------------------------------------------------------------------- solving
def _values(beliefs, cells, table, actions, count, moves3):
    """The value ``(B,)`` and best vector ``(B,)`` of every point under the first ``count`` columns
    of ``table``."""
    scores = np.empty((len(cells), len(moves3)))
    best = np.empty(len(cells), dtype=np.int64)
    best_values(beliefs, np.arange(len(cells), dtype=np.int64), cells, np.ones(len(cells), dtype=np.bool_),
                pk.Alphas(table, actions), count, moves3, scores, best)
    return scores.max(axis=1), best


def solve(cls, scenario, *, beliefs: int = 1000, discount: float = DEFAULT_DISCOUNT, iterations: int = 100,
          seconds: float | None = None, tol: float = 1e-6, explore="infotaxis", epsilon: float = 0.1,
          keep: float = 0.25, seed: int = 0, points=None, start=None,
          progress: bool = False, likelihood=None):
    """``Perseus.solve`` (its docstring gives the arguments): a policy of class ``cls``."""
    from tqdm.auto import tqdm

    from ..models.sensors.belief import Belief
    from ..simulator import MAX_SEED
    from .belief_state import scenario_with_belief
    from .infotaxis import checked_likelihood

    problem = fit_problem(scenario, model=False)  # what no likelihood changes: before one is calibrated
    if problem:
        raise ValidationError(f"Perseus.solve: {problem}")
    likelihood = checked_likelihood("Perseus.solve", likelihood)
    n = check_int("Perseus.solve", "beliefs", beliefs, 1, MAX_BELIEFS)
    discount = check_real("Perseus.solve", "discount", discount, 0.0, 1.0, low_open=True, high_open=True)
    iterations = check_int("Perseus.solve", "iterations", iterations, 1, 2**31 - 1)
    if seconds is not None:
        seconds = check_real("Perseus.solve", "seconds", seconds, 0.0, 1e9, low_open=True)
    tol = check_real("Perseus.solve", "tol", tol, 0.0, math.inf)
    epsilon = check_real("Perseus.solve", "epsilon", epsilon, 0.0, 1.0)
    keep = check_real("Perseus.solve", "keep", keep, 0.0, 1.0, low_open=True)
    seed = check_int("Perseus.solve", "seed", seed, 0, MAX_SEED - (n + 1) * SAMPLE_WORLDS)
    progress = check_bool("Perseus.solve", "progress", progress)
    if isinstance(explore, str) and explore not in EXPLORERS:
        _explorer(explore, scenario)  # refused by name now, before a likelihood is calibrated
    if likelihood is not None:
        likelihood.check_grid("Perseus.solve", scenario.grid_size)
    # the scenario as the policy acts in it: a Belief of the model solved for (calibrated here when
    # the plume has no closed form and none is given; cached on disk)
    scenario = scenario_with_belief("Perseus", scenario, likelihood)
    problem = fit_problem(scenario)
    if problem:
        raise ValidationError(f"Perseus.solve: {problem}")
    if start is not None:
        if not isinstance(start, cls):
            raise ValidationError(f"Perseus.solve: start={shown(start, typed=True)}; expected None or a Perseus")
        start.check_scenario(scenario, "Perseus.solve: start")
        if start.discount != discount:
            raise ValidationError(f"Perseus.solve: start has discount {start.discount}; expected the discount solved "
                                  f"for, {discount}")
    plume = belief_model(scenario)  # the tables solved for: the plume's closed form or a likelihood
    shape3 = three_axes(plume.shape)
    box = tuple(2 * s - 1 for s in shape3)
    n_box = int(np.prod(box))
    cells_per = int(np.prod(shape3))
    if points is None:
        if not any(isinstance(s, Belief) for s in scenario.sensors):
            raise ValidationError(f"Perseus.solve: the scenario's sensors {[s.name for s in scenario.sensors]} hold no "
                                  "sensors.Belief; expected one (its episodes give the belief points), or points=")
        if not isinstance(explore, str) or explore != "random":
            _explorer(explore, single_searcher(scenario))  # refused now, before anything compiles
        check_memory("Perseus.solve", n * cells_per * 8, f"{n} belief points of {cells_per} cells",
                     "ask for fewer beliefs")
        t0 = time.perf_counter()
        b, c = sample_points(scenario, n, explore=explore, epsilon=epsilon, keep=keep, seed=seed, progress=progress)
        sample_seconds = time.perf_counter() - t0
    else:
        b, c = _given_points(points, plume)
        sample_seconds = 0.0
    nb = len(b)
    b3 = np.require(b.reshape((nb,) + shape3), np.float64, ["C", "W"])
    c3 = np.zeros((nb, 3), dtype=np.int64)
    c3[:, :c.shape[1]] = c
    moves = np.asarray(scenario.moves(), dtype=np.int64)
    moves3 = np.zeros((len(moves), 3), dtype=np.int64)
    moves3[:, :moves.shape[1]] = moves
    k = len(moves3)
    lik = np.require(np.asarray(plume.centred_likelihood, dtype=np.float64).reshape(-1, n_box), np.float64, ["C", "W"])
    floor = floor_value(discount)
    tables = pk.Tables(lik, moves3, discount, floor)
    centre = np.ravel_multi_index(tuple(s - 1 for s in shape3), box)
    if start is None:  # the first set: one vector per move, the value of never finding the source (0 on it)
        table = np.full((n_box, k), floor)
        table[centre] = 0.0
        actions = np.arange(k, dtype=np.int64)
    else:
        table, actions = start._table.copy(), start._actions.copy()
    count = table.shape[1]
    check_memory("Perseus.solve", 3 * (nb + count) * n_box * 8, f"up to {nb + count} alpha vectors of {n_box} "
                 "offsets", "ask for fewer beliefs")
    q = np.ascontiguousarray(qmdp_vectors(plume.shape, moves3, discount).reshape(k, n_box).T)
    upper = float(_values(b3, c3, q, np.arange(k, dtype=np.int64), k, moves3)[0].mean())
    values, best = _values(b3, c3, table, actions, count, moves3)
    lower, sizes, backups = [float(values.mean())], [], []
    order = np.random.default_rng([seed, 0x5E5])
    block = pk.block_for(cells_per)
    out = np.empty(n_box)
    vec = np.empty(n_box)
    choice = np.empty(lik.shape[0], dtype=np.int64)
    began = time.perf_counter()
    deadline = math.inf if seconds is None else began + seconds
    stopped = "iterations"
    done = 0
    with tqdm(total=iterations, desc="Perseus", unit="iteration", disable=not progress, leave=False,
              dynamic_ncols=True) as bar:
        for _ in range(iterations):
            dots = np.empty((k, lik.shape[0], count))
            old = pk.Alphas(table, actions)
            new_table = np.empty((n_box, min(max(64, 2 * count), nb + count)))
            new_actions = np.empty(new_table.shape[1], dtype=np.int64)
            n_new = 0
            new_values = np.full(nb, -np.inf)
            new_best = np.full(nb, -1, dtype=np.int64)
            todo = np.arange(nb, dtype=np.int64)
            count_backups = 0
            cut = False
            while todo.size:
                if time.perf_counter() > deadline:
                    cut = True
                    break
                j = int(todo[order.integers(todo.size)])
                with PARALLEL_LOCK:
                    a, v = pk.backup(b3[j], c3[j], old, count, tables, block, dots, choice, out)
                count_backups += 1
                if n_new == new_table.shape[1]:
                    new_table = np.concatenate([new_table, np.empty_like(new_table)], axis=1)
                    new_actions = np.concatenate([new_actions, np.empty_like(new_actions)])
                if a >= 0 and v >= values[j]:
                    vec[:] = out
                    new_actions[n_new] = a
                else:  # the backup is worth less here: the belief keeps its best vector
                    vec[:] = table[:, best[j]]
                    new_actions[n_new] = actions[best[j]]
                new_table[:, n_new] = vec
                with PARALLEL_LOCK:
                    pk.raise_values(b3, c3, todo, vec, new_actions[n_new], moves3, n_new, new_values, new_best)
                n_new += 1
                todo = todo[new_values[todo] < values[todo]]
            if cut:  # the iteration's new vectors join the previous set: no value decreases
                new_table = np.concatenate([table[:, :count], new_table[:, :n_new]], axis=1)
                new_actions = np.concatenate([actions[:count], new_actions[:n_new]])
                n_new += count
            table = np.ascontiguousarray(new_table[:, :n_new])
            actions = np.ascontiguousarray(new_actions[:n_new])
            count = n_new
            values, best = _values(b3, c3, table, actions, count, moves3)
            lower.append(float(values.mean()))
            sizes.append(count)
            backups.append(count_backups)
            done += 0 if cut else 1
            bar.update(1)
            bar.set_postfix(value=f"{lower[-1]:.4f}", upper=f"{upper:.4f}", alphas=count, refresh=False)
            if cut:
                stopped = "seconds"
                break
            if lower[-1] - lower[-2] <= tol:
                stopped = "converged"
                break
    report = SolveReport(done, time.perf_counter() - began, sample_seconds, nb, tuple(lower), upper, tuple(sizes),
                         tuple(backups), stopped, discount)
    return every_move(cls(table.T.reshape((count,) + tuple(2 * s - 1 for s in plume.shape)), actions, scenario,
                          discount=discount, report=report))


def every_move(policy):
    """``policy`` with, for each move no vector has, the vector of that move at the floor value
    (``-1 / (1 - discount)``, 0 on the source: the solver's first set), after the others. ``solve``
    returns its set so completed.

    A solve can end with vectors of a few moves only (every point met preferred them); in a corner
    where none of those moves stays in the grid ``Perseus.decide`` would have no vector to act on.
    Every backed-up vector is worth at least the floor everywhere, and a decision takes the first
    vector of highest value, so the added vectors decide only where no other one applies: the
    policy's value on every belief the solve met is unchanged."""
    missing = sorted(set(range(len(policy.moves))) - set(policy.actions.tolist()))
    if not missing:
        return policy
    alphas = policy.alphas
    floor = np.full((len(missing),) + alphas.shape[1:], floor_value(policy.discount))
    floor[(slice(None),) + tuple((n - 1) // 2 for n in alphas.shape[1:])] = 0.0
    return type(policy)(np.concatenate([alphas, floor]), np.concatenate([policy.actions, missing]), policy.scenario,
                        discount=policy.discount, report=policy.report)
