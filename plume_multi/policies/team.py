"""``Team``: one policy per agent of a world (mixed teams), and the batched decision on shared beliefs."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..checks import is_int, shown
from ..errors import StateError, ValidationError
from . import team_kernels as tk
from .belief_state import belief_view, shaped_for, simulator_of
from .team_decide import decide_kinds
from .infotaxis import Infotaxis
from .team_decide import TEAM_RULES

__all__ = ["Team"]


def _belief_kind(policy) -> int | None:
    """The kernel kind of a policy that decides on the shared belief, else None."""
    from .greedy import Greedy

    if isinstance(policy, Infotaxis):
        return tk.KIND_SPACE_AWARE if policy.space_aware else tk.KIND_INFOTAXIS
    if isinstance(policy, Greedy):
        return tk.KIND_GREEDY
    return None


class Team:
    """One policy per agent of a world: a mixed team.

    Args:
        members: one policy per agent index of a world, ``N`` of them: a sequence (agent ``n``
            runs ``members[n]``) or a mapping ``{n: policy}`` covering ``0..N-1``. The same
            object may serve several agents. A member is ``Infotaxis`` / ``Greedy`` (it decides
            on the belief), an object with ``act(sim)`` (its rows of what it returns are taken),
            or a callable ``obs (M, D) -> actions (M,)``, called once per step with the rows of
            its agents in every world (row ``b * N + n``, in that order).
        team_rule: ``"believer"`` (default) or ``"independent"``, for agents that share a belief.

    **Mixed teams on one belief.** When the worlds' agents share a ``sensors.Belief``
    (``Scenario.team`` or ``Belief(shared=True)``), a world's agents decide in agent order, each
    with its own policy: under ``"believer"`` on the shared belief updated as if every earlier
    agent had made its move and received its most likely hit (the rule of ``Infotaxis``'s teams,
    now whatever each earlier agent's policy; an agent whose action came from a policy of
    observations counts with its move, clamped into the grid); under ``"independent"``, each on the
    shared belief alone. A team of one kind decides exactly as that policy alone
    (``Team([Infotaxis()] * N).act(sim)`` equals ``Infotaxis().act(sim)``). The members' own
    ``team_rule`` is not read. Without a shared belief each agent decides on its own. In 2-D and
    in 3-D (``PoissonHits(dims=3)``: the 3-D infotaxis decision and Bayes update), and among the
    scenario's walls (no move into one; an earlier agent's move into one leaves it where it was,
    as the grid bodies do).

    ``act(target)`` decides for a ``Simulator`` or a front-end with ``.simulator``: ``(B*N,)``
    actions, or ``{agent: action}`` of the live agents of a PettingZoo ``parallel_env``. A team
    with no belief member is also a callable of observations (``team(obs)``). ``evaluate`` takes a
    list or mapping of policies as ``Team(policies)``.

    Example:
        >>> from plume_multi import Simulator
        >>> from plume_multi.policies import Greedy, Infotaxis, Team
        >>> from plume_multi.scenarios import poisson_search
        >>> sim = Simulator(poisson_search(1.0, 2.0, n_agents=3, team=True), num_worlds=4)
        >>> obs = sim.reset(seed=0)
        >>> team = Team([Infotaxis(), Infotaxis(space_aware=True), Greedy()])
        >>> obs, reward, terminated, truncated = sim.step(team.act(sim))
    """

    def __init__(self, members, *, team_rule: str = "believer"):
        if isinstance(members, Mapping):
            keys = list(members)
            if not keys or not all(is_int(k) for k in keys) or sorted(keys) != list(range(len(keys))):
                raise ValidationError(f"Team.members: got a mapping with keys {shown(keys, 120)}; expected every "
                                      f"agent index 0..{len(keys) - 1} once (one policy per agent of a world)")
            members = [members[n] for n in range(len(keys))]
        elif isinstance(members, (list, tuple)):
            members = list(members)
        else:
            raise ValidationError(f"Team.members: got {shown(members, typed=True)}; expected a list of policies "
                                  "(one per agent) or a mapping {agent index: policy}")
        if not members:
            raise ValidationError("Team.members: got no policy; expected one per agent of a world")
        for n, member in enumerate(members):
            if isinstance(member, Team):
                raise ValidationError(f"Team.members[{n}]: got a Team; expected a policy of one agent")
            if not (callable(member) or callable(getattr(member, "act", None))):
                raise ValidationError(f"Team.members[{n}]: got {shown(member, typed=True)}; expected a policy "
                                      "(Infotaxis, Greedy, an object with act(sim) or a callable obs -> actions)")
        if team_rule not in TEAM_RULES:
            raise ValidationError(f"Team.team_rule: got {team_rule!r}; expected one of {sorted(TEAM_RULES)}")
        self.members = members
        self.team_rule = team_rule
        self.scores = None
        self._kinds = np.array([tk.KIND_GIVEN if _belief_kind(p) is None else _belief_kind(p) for p in members],
                               dtype=np.int64)
        # each other policy once, with the agent indices it serves (in order)
        self._others = []
        for n, member in enumerate(members):
            if self._kinds[n] == tk.KIND_GIVEN:
                for entry in self._others:
                    if entry[0] is member:
                        entry[1].append(n)
                        break
                else:
                    self._others.append((member, [n]))

    @property
    def n_agents(self) -> int:
        return len(self.members)

    @property
    def reads_belief(self) -> bool:
        """True when a member decides on the belief (the team then needs ``act(sim)``)."""
        return bool((self._kinds != tk.KIND_GIVEN).any())

    def reset(self, mask=None) -> None:
        """Clear the memory of the members that have one (``reset(mask)``): ``mask`` ``(B*N,)``
        bool over every row (or None, all), each member given its own rows of it."""
        for member, agents in self._others:
            if not callable(getattr(member, "reset", None)):
                continue
            if mask is None:
                member.reset(None)
                continue
            mask = np.asarray(mask, dtype=np.bool_)
            if mask.ndim != 1 or mask.shape[0] % self.n_agents:
                raise ValidationError(f"Team.reset: mask has shape {mask.shape}; expected (B*{self.n_agents},) bool")
            member.reset(mask[self._rows(agents, mask.shape[0])])

    def _rows(self, agents: list, rows_total: int) -> np.ndarray:
        """The rows ``b * N + n`` of the agent indices ``agents`` in every world, world by world."""
        worlds = rows_total // self.n_agents
        return (np.arange(worlds)[:, None] * self.n_agents + np.asarray(agents)[None, :]).ravel()

    def _check_size(self, n_agents: int, who: str) -> None:
        if n_agents != self.n_agents:
            raise ValidationError(f"{who}: the team has {self.n_agents} policies for worlds of {n_agents} agents; "
                                  "expected one policy per agent")

    def _given(self, obs: np.ndarray, sim=None) -> np.ndarray:
        """Actions of the members that are not belief searchers, on their rows; 0 elsewhere."""
        rows_total = obs.shape[0]
        given = None
        for member, agents in self._others:
            rows = self._rows(agents, rows_total)
            if sim is not None and callable(getattr(member, "act", None)):
                out = np.asarray(member.act(sim))[rows]
            else:
                out = np.asarray(member(obs[rows].copy()))
            if out.shape[0] != rows.size:
                raise ValidationError(f"Team: member {shown(member)} returned {out.shape[0]} actions for "
                                      f"{rows.size} rows; expected one per row")
            if given is None:
                given = np.zeros((rows_total,) + out.shape[1:], dtype=np.float64 if out.dtype.kind == "f" else np.int64)
            given[rows] = out
        return given

    def __call__(self, obs):
        """Actions of the rows of ``obs`` (``(B*N, D)``, row ``b * N + n``) when no member reads
        the belief; otherwise a ``StateError`` (use ``act(sim)``)."""
        if self.reads_belief:
            raise StateError("Team: members that decide on the belief (Infotaxis, Greedy) need the simulator: "
                             "call team.act(sim) (or team.act(env) for a front-end)")
        obs = np.asarray(obs)
        if obs.ndim != 2 or obs.shape[0] % self.n_agents:
            raise ValidationError(f"Team: obs has shape {obs.shape}; expected (B*{self.n_agents}, D)")
        return self._given(obs)

    def act(self, target):
        """Actions for every agent of ``target`` (a ``Simulator``, or a front-end with
        ``.simulator``): ``(B*N,)`` (``(B*N, 2)`` for a continuous body without belief members),
        or ``{agent: action}`` of the live agents of a PettingZoo env."""
        sim = simulator_of(target, "Team.act")
        n = sim.scenario.n_agents
        self._check_size(n, "Team.act")
        obs = sim.state.obs
        given = self._given(obs, sim) if self._others else None
        if not self.reads_belief:
            return shaped_for(target, given)
        view = belief_view(sim, "Team.act")
        if given is not None and given.dtype.kind == "f":
            raise ValidationError("Team.act: a member returned float actions beside belief searchers; expected "
                                  "integer moves")
        actions, self.scores = decide_kinds("Team.act", view.plume, view.beliefs, view.positions,
                                            np.tile(self._kinds, sim.num_worlds), self.team_rule, groups=view.groups,
                                            moves=view.moves, active=view.active, given=given, walls=view.walls)
        return shaped_for(target, actions)

    def __repr__(self) -> str:
        return f"Team({self.members!r}, team_rule={self.team_rule!r})"
