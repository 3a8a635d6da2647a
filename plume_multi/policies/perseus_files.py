"""``Perseus`` policies on disk: our ``.npz`` files, and otto-benchmark's converted alpha-vector files.

Ours (``save`` / ``load``): a NumPy ``.npz`` of three arrays and nothing else, read without pickle:
``alphas`` ``(n_alphas, *centred)`` float64, ``actions`` ``(n_alphas,)`` int64 and ``record``, a
0-d string holding JSON: ``{"format": "plume_multi.Perseus", "version": 1, "scenario":
Scenario.metadata(), "discount": ..., "report": SolveReport.to_dict() or null}``. Written whole or
not at all; read through the checked opener, every member's size checked before it is read, and
every value checked (``Perseus``'s own checks, ``scenario_from_metadata``'s, the report's).

otto-benchmark's (``load_otto``): the pickle its ``converter-pbvi-to-otto/convert_perseus_file.py``
and ``convert_sarsop_file.py`` write (and ``AlphaVecPolicy`` reads), a dict ``{"solver": str,
"alphas": [array, ...], "actions": [int, ...], "discount": ..., "shaping": ..., "shaping_coef":
...}``. Each alpha is indexed by the agent's offset from the source, ``(agent - source) mod (2n - 1)``
on each axis, axis 0 along ``x`` (``AlphaVecPolicy._alphavec_belief``); action ``a`` moves along axis
``a // 2`` by ``2 (a % 2) - 1`` (``SourceTracking._move``). Only NumPy arrays and plain Python values
are unpickled: any other object in the file is refused before it is built.
"""

from __future__ import annotations

import io
import json
import pickle
import zipfile

import numpy as np

from .. import files
from ..checks import is_int, is_real, shown
from ..errors import ValidationError

__all__: list = []  # reached through Perseus.save, Perseus.load and Perseus.load_otto

FORMAT = "plume_multi.Perseus"
VERSION = 1
MAX_FILE_BYTES = 2**32  # 4 GiB: 40,000 alpha vectors of otto's largest case
MEMBERS = ("alphas.npy", "actions.npy", "record.npy")
MAX_RECORD_CHARS = 2**26
EXPECTED = "a policy file written by Perseus.save (.npz)"
OTTO_EXPECTED = "an otto-benchmark converted alpha-vector file (a pickle of solver, alphas, actions, discount)"


def save(policy, path):
    """Write ``policy`` to ``path`` whole or not at all (``files.writing``); returns the path."""
    record = json.dumps(policy.record())
    with files.writing(path, "Perseus.save", "the path of the policy file to write", text=False) as f:
        np.savez(f, alphas=policy.alphas, actions=policy.actions, record=np.array(record))
    return path


def _bad(path, what: str):
    raise ValidationError(f"Perseus.load: {shown(str(path), 120)} {what}; expected {EXPECTED}")


def _member(data, name: str, path):
    try:
        return data[name]
    except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        _bad(path, f"holds an unreadable {name!r} ({exc})")


def load(path, cls):
    """The policy (of class ``cls``, ``Perseus``) of a file ``save`` wrote; a ``ValidationError`` naming
    the file otherwise."""
    from ..scenario import scenario_from_metadata
    from .perseus_solve import SolveReport

    raw = files.read_bytes(path, "Perseus.load", EXPECTED, limit=MAX_FILE_BYTES)
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        _bad(path, f"is not a NumPy .npz archive ({exc})")
    names = sorted(info.filename for info in infos)
    if names != sorted(MEMBERS):
        _bad(path, f"holds the members {shown(names, 200)} (expected exactly {list(MEMBERS)})")
    for info in infos:  # a compressed member is inflated as it is read: bound it first
        if info.file_size > MAX_FILE_BYTES:
            _bad(path, f"holds a member {info.filename!r} of {info.file_size} bytes, beyond {MAX_FILE_BYTES}")
    try:
        data = np.load(io.BytesIO(raw), allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        _bad(path, f"is not a NumPy .npz archive ({exc})")
    with data:
        alphas = _member(data, "alphas", path)
        actions = _member(data, "actions", path)
        record = _member(data, "record", path)
    if alphas.dtype != np.float64 or actions.dtype.kind not in "iu":
        _bad(path, f"holds alphas of dtype {alphas.dtype} and actions of dtype {actions.dtype} (expected float64 and "
                   "integers)")
    if record.shape != () or record.dtype.kind != "U" or record.dtype.itemsize > 4 * MAX_RECORD_CHARS:
        _bad(path, f"holds a record of shape {record.shape} and dtype {record.dtype} (expected one JSON string)")
    try:
        meta = json.loads(str(record))
    except (ValueError, RecursionError) as exc:
        _bad(path, f"holds a record that is not JSON ({type(exc).__name__})")
    keys = {"format", "version", "scenario", "discount", "report"}
    if not isinstance(meta, dict) or set(meta) != keys:
        _bad(path, f"holds a record with the keys {shown(sorted(meta) if isinstance(meta, dict) else meta, 200)} "
                   f"(expected {sorted(keys)})")
    if meta["format"] != FORMAT or meta["version"] != VERSION:
        _bad(path, f"is of format {shown(meta['format'])} version {shown(meta['version'])} (expected {FORMAT} "
                   f"version {VERSION})")
    where = f"Perseus.load: {shown(str(path), 120)}"
    try:
        scenario = scenario_from_metadata(meta["scenario"])
    except RecursionError:
        _bad(path, "holds a scenario nested too deeply")
    except ValidationError as exc:
        raise ValidationError(f"{where}: its scenario: {exc}") from None
    report = None if meta["report"] is None else SolveReport.from_dict(meta["report"], where)
    try:
        return cls(alphas, actions, scenario, discount=meta["discount"], report=report)
    except ValidationError as exc:
        raise ValidationError(f"{where}: {exc}") from None


# ------------------------------------------------------------------------------------ otto-benchmark
class _ArraysOnly(pickle.Unpickler):
    """Unpickles NumPy arrays (and their dtypes and scalars) and plain Python values only."""

    # what NumPy's arrays and scalars pickle as (protocol 5 writes _frombuffer), under NumPy 1's and 2's
    # module names: each builds an array or a dtype from bytes and runs nothing else
    ALLOWED = {(core, name) for core in ("numpy.core.multiarray", "numpy._core.multiarray")
               for name in ("_reconstruct", "scalar")} | {(core, "_frombuffer") for core in (
                   "numpy.core.numeric", "numpy._core.numeric")} | {("numpy", "ndarray"), ("numpy", "dtype")}

    def find_class(self, module, name):
        if (module, name) in self.ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"the file asks for {module}.{name}, which is not a NumPy array or a plain value")


def _otto_move(action: int, dims: int) -> tuple:
    """otto's ``_move``: axis ``action // 2`` (0 is x), by ``2 (action % 2) - 1``."""
    step = [0] * dims
    step[action // 2] = 2 * (action % 2) - 1
    return tuple(step)


def load_otto(path, scenario, cls):
    """The policy (of class ``cls``, ``Perseus``) of otto-benchmark's converted file ``path`` for
    ``scenario``."""
    from ..models.plumes.poisson_hits import PoissonHitPlume
    from .perseus_problem import belief_model, fit_problem

    problem = fit_problem(scenario)
    if problem is None and not isinstance(belief_model(scenario), PoissonHitPlume):
        problem = (f"the scenario's belief follows {belief_model(scenario)!r}; expected a Poisson-hit plume's closed "
                   "form (otto-benchmark's vectors solve its POMDP)")
    if problem:
        raise ValidationError(f"Perseus.load_otto: {problem}")
    where = f"Perseus.load_otto: {shown(str(path), 120)}"
    raw = files.read_bytes(path, "Perseus.load_otto", OTTO_EXPECTED, limit=MAX_FILE_BYTES)
    try:
        content = _ArraysOnly(io.BytesIO(raw)).load()
    except RecursionError:
        raise ValidationError(f"{where} nests too deeply; expected {OTTO_EXPECTED}") from None
    except Exception as exc:  # whatever a crafted pickle raises while read: never our crash
        raise ValidationError(f"{where} could not be read ({type(exc).__name__}: {exc}); expected "
                              f"{OTTO_EXPECTED}") from None
    if not isinstance(content, dict) or not {"alphas", "actions"} <= set(content):
        raise ValidationError(f"{where} holds {shown(content, 120, typed=True)}; expected a dict with 'alphas' and "
                              "'actions' (and 'solver', 'discount', ...)")
    plume = scenario.plume
    sides = plume.shape[::-1][:3 if len(plume.shape) == 3 else (1 if plume.dims == 1 else 2)]
    otto_shape = tuple(2 * n - 1 for n in sides)  # otto's axes: x, then y, then z
    alphas, actions = content["alphas"], content["actions"]
    if not isinstance(alphas, (list, tuple)) or not isinstance(actions, (list, tuple)) or len(alphas) != len(actions) \
            or not alphas:
        raise ValidationError(f"{where}: alphas and actions must be lists of the same positive length; got "
                              f"{shown(alphas, 60, typed=True)} and {shown(actions, 60, typed=True)}")
    for i, a in enumerate(alphas):
        if not isinstance(a, np.ndarray) or a.shape != otto_shape or a.dtype.kind not in "iuf":
            got = f"an array of shape {a.shape} and dtype {a.dtype}" if isinstance(a, np.ndarray) else \
                shown(a, 60, typed=True)
            raise ValidationError(f"{where}: alphas[{i}] is {got}; expected a real array of shape {otto_shape} (2n - 1 "
                                  f"offsets per axis, x first, of the scenario's {' x '.join(map(str, sides))} grid)")
    discount = content.get("discount", None)
    if isinstance(discount, str):  # convert_sarsop_file.py writes it as text
        try:
            discount = float(discount)
        except ValueError:
            discount = None
    if not (is_real(discount) and 0.0 < float(discount) < 1.0):
        raise ValidationError(f"{where}: discount is {shown(discount)}; expected a number in (0, 1)")
    moves = [tuple(int(v) for v in m) for m in np.asarray(scenario.moves())]
    dims = len(sides)
    ours = []
    for i, a in enumerate(actions):
        if not is_int(a) or not 0 <= a < 2 * dims:
            raise ValidationError(f"{where}: actions[{i}] is {shown(a)}; expected an otto action in 0..{2 * dims - 1}")
        step = _otto_move(int(a), dims) + (0,) * (len(moves[0]) - dims)
        if step not in moves:
            raise ValidationError(f"{where}: actions[{i}] = {a} moves by {step}, which the scenario's body "
                                  f"{scenario.action_model.name} has not (its moves: {moves})")
        ours.append(moves.index(step))
    # ours[z, y, x] over delta = source - agent, delta_k = index_k - (n_k - 1); otto's index along an
    # axis is (agent - source) mod (2n - 1) = (-delta_k) mod (2n - 1)
    index = [(-(np.arange(m) - (n - 1))) % m for m, n in zip(otto_shape, sides)]
    stacked = np.stack([np.asarray(a, dtype=np.float64)[np.ix_(*index)].transpose() for a in alphas])
    if not np.all(np.isfinite(stacked)):
        raise ValidationError(f"{where}: alphas hold values that are not finite; expected finite values")
    centred = tuple(2 * n - 1 for n in plume.shape)
    try:
        return cls(stacked.reshape((len(alphas),) + centred), np.array(ours, dtype=np.int64), scenario,
                       discount=float(discount))
    except ValidationError as exc:
        raise ValidationError(f"{where}: {exc}") from None
