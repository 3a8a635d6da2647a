"""``Task`` and ``Protocol``: a benchmark task is a frozen record of a scenario factory, how it is
scored, and a card saying what it is and where it comes from.

Ids are ``family/name-vN``: ``family`` and ``name`` lower-case words joined by ``-`` (digits,
``x`` and ``.`` allowed, as in ``isotropic-19x19``), ``N`` the version. A task's version changes
whenever anything that changes its numbers changes (scenario, protocol): results of ``-v0`` and
``-v1`` are never compared.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping

from ..checks import check_choice, check_int, fail, shown
from ..errors import ValidationError

__all__ = ["Task", "Protocol", "TRAIN_SEED_BASE", "TASK_ID", "UNTIL", "check_task_id"]

# Training seeds start here (plume_multi.train seeds its worlds TRAIN_SEED_BASE + ...): evaluation
# seeds stay below, so no evaluated episode was ever trained on.
TRAIN_SEED_BASE = 2**40
MAX_SEED = 2**63 - 1
UNTIL = ("first", "all")
TASK_ID = re.compile(r"^(?P<family>[a-z][a-z0-9]*(?:-[a-z0-9.]+)*)/(?P<name>[a-z0-9][a-z0-9.]*(?:-[a-z0-9.]+)*?)"
                     r"-v(?P<version>\d+)$")


def check_task_id(task_id) -> re.Match:
    """The match of a well-formed ``family/name-vN`` id; else a ``ValidationError``."""
    match = TASK_ID.match(task_id) if isinstance(task_id, str) else None
    if match is None:
        raise ValidationError(f"task_id: got {shown(task_id)}; expected 'family/name-vN' (e.g. "
                              "'otto/isotropic-19x19-v0'; plume_multi.tasks.list() gives them all)")
    return match


@dataclasses.dataclass(frozen=True)
class Protocol:
    """How a task is scored.

    Attributes:
        episodes: episodes per evaluation (E).
        max_steps: the step cap of an episode (the scenario's ``max_steps``).
        eval_seed: episode ``e`` is seeded ``eval_seed + e``; these seeds lie below
            ``train_seed_low``, so they are disjoint from every training seed.
        train_seed_low: training may use seeds from here up (``TRAIN_SEED_BASE``, ``2**40``).
        until: ``"first"``: an episode succeeds when the first searcher reaches the source (teams);
            ``"all"``: when every searcher has.
        metrics: what the result reports: the success rate (with its Wilson interval), the mean
            and median steps to the source of the successful episodes, and the interquartile mean
            (IQM) of the steps to the source, failures counted at ``max_steps``, with its
            stratified-bootstrap 95 % interval.
    """

    episodes: int = 1000
    max_steps: int = 1000
    eval_seed: int = 0
    train_seed_low: int = TRAIN_SEED_BASE
    until: str = "first"
    metrics: tuple = ("success_rate", "mean_steps", "median_steps", "iqm_steps")

    def __post_init__(self):
        check_int("Protocol", "episodes", self.episodes, 1, 2**31 - 1)
        check_int("Protocol", "max_steps", self.max_steps, 1, 2**31 - 1)
        check_int("Protocol", "train_seed_low", self.train_seed_low, 1, MAX_SEED)
        check_int("Protocol", "eval_seed", self.eval_seed, 0, MAX_SEED)
        check_choice("Protocol", "until", self.until, UNTIL)
        self.check_seeds(self.eval_seed, self.episodes)

    def check_seeds(self, seed: int, episodes: int, name: str = "seed") -> None:
        """Refuse evaluation seeds ``seed .. seed + episodes - 1`` that reach the training seeds."""
        if seed + episodes > self.train_seed_low:
            raise ValidationError(f"{name}: got {seed} for {episodes} episodes (seeds {seed}..{seed + episodes - 1}); "
                                  f"expected evaluation seeds below {self.train_seed_low}, where training seeds "
                                  "begin (held-out episodes only)")


@dataclasses.dataclass(frozen=True)
class Task:
    """A benchmark task: a versioned id, a scenario factory, a protocol and a card.

    Attributes:
        id: ``family/name-vN``.
        scenario_factory: ``factory(**options) -> Scenario``; the task's scenario is it with
            ``max_steps`` set to the protocol's.
        protocol: the ``Protocol``.
        card: one paragraph: what is searched for, by whom, what is observed, what counts.
        references: the works the task follows (citations as text).
        baselines: the names of the built-in policies (``plume-multi benchmark run --policy``)
            that can act in the task: the table's columns for this row.
        partners: ``((agent index, policy name), ...)``: teammates the task fixes (a mixed team):
            the evaluated policy drives the other agents.
        options: names of the options ``scenario_factory`` requires (``("path",)`` for a task
            on the user's file), given to ``tasks.make(task_id, **options)``.
        bound: the options given (``(name, value)`` pairs).
    """

    id: str
    scenario_factory: Callable
    protocol: Protocol
    card: str
    references: tuple = ()
    baselines: tuple = ("random",)
    partners: tuple = ()
    options: tuple = ()
    bound: tuple = ()

    def __post_init__(self):
        check_task_id(self.id)
        if not callable(self.scenario_factory):
            fail("Task", "scenario_factory", self.scenario_factory, "a callable (**options) -> Scenario")
        if not isinstance(self.protocol, Protocol):
            fail("Task", "protocol", self.protocol, "a tasks.Protocol")
        if not isinstance(self.card, str) or not self.card.strip():
            fail("Task", "card", self.card, "a paragraph of text")
        for name in ("references", "baselines", "options"):
            value = getattr(self, name)
            if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
                fail("Task", name, value, "a tuple of strings")

    # ---------------------------------------------------------------- the id's parts
    @property
    def family(self) -> str:
        return check_task_id(self.id)["family"]

    @property
    def name(self) -> str:
        return check_task_id(self.id)["name"]

    @property
    def version(self) -> int:
        return int(check_task_id(self.id)["version"])

    # ---------------------------------------------------------------- making
    def with_options(self, **options) -> "Task":
        """This task with ``options`` bound (the ones its factory requires)."""
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            raise ValidationError(f"{self.id}: got option(s) {unknown}; expected "
                                  f"{list(self.options) if self.options else 'none'}")
        return dataclasses.replace(self, bound=tuple(sorted({**dict(self.bound), **options}.items())))

    def scenario(self, *, max_steps: int | None = None) -> Scenario:
        """The task's ``Scenario`` (``max_steps``: a lower step cap for a reduced run)."""
        given = dict(self.bound)
        missing = [name for name in self.options if name not in given]
        if missing:
            raise ValidationError(f"{self.id}: needs the option(s) {missing}: tasks.make({self.id!r}, "
                                  f"{', '.join(f'{m}=...' for m in missing)}) (see its card)")
        cap = self.protocol.max_steps if max_steps is None else check_int(self.id, "max_steps", max_steps, 1,
                                                                          self.protocol.max_steps)
        from ..scenario import Scenario  # here, not at import: the registry builds no scenario

        scenario = self.scenario_factory(**given)
        if not isinstance(scenario, Scenario):
            raise ValidationError(f"{self.id}: the scenario factory returned {shown(scenario, typed=True)}; "
                                  "expected a Scenario")
        return scenario.replace(max_steps=cap)

    @property
    def partner_map(self) -> Mapping:
        return dict(self.partners)

    def summary(self) -> dict:
        """The record as JSON-able text (the docs page's and ``tasks.describe``'s)."""
        p = self.protocol
        return {"id": self.id, "episodes": p.episodes, "max_steps": p.max_steps, "eval_seed": p.eval_seed,
                "train_seed_low": p.train_seed_low, "until": p.until, "baselines": list(self.baselines),
                "partners": {str(k): v for k, v in self.partners}, "options": list(self.options),
                "card": self.card, "references": list(self.references)}
