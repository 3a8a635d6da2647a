"""Recorded plumes from files, read safely: what ``plumes.Movie(path)`` opens and how.

The formats and every attribute: docs/recorded-data.md. A movie file holds the frames
``concentration`` ``(t, y, x)`` (or volumes ``(t, z, y, x)``: the same readers, one more axis),
optionally the wind ``u`` and ``v`` (and, for volumes, ``w``) beside it, and attributes
(``fps``, ``pixel_to_grid``, ``origin``, ``extent``, ``source_location`` or ``source_location_px``,
``length_unit``, ``schema_version``, ``source_dtype``) in the data zoo's schema 1.0.0 (plume_nav_sim),
where pairs are ``(y, x)``.

Safely means:

* only a regular file, or a Zarr directory store, is opened, through the package's checked opener
  (``plume_multi.files``); a FIFO, a device or a socket is refused before anything opens it
  (opening a FIFO blocks until a writer comes), in a Zarr store too;
* only the named file (or store) is read: a dataset whose bytes are elsewhere (HDF5 external
  storage, an external link, a virtual dataset over other files, a Zarr entry that is a symbolic
  link leading out of the store) is refused before anything follows it, unless the user opts in
  with ``Movie(..., allow_external=True)`` (in code only: a scenario file never opts in);
* a ``.npy`` header is read and checked (dtype, shape, and that the file holds the bytes it
  declares) before any data is read or mapped, and so is every array of the other formats, and
  the memory a copy needs is compared with what is available;
* whatever a reader raises on a corrupt or hostile file (``ValueError``, ``EOFError``,
  ``BadZipFile``, ``OSError``, ``MemoryError``, h5py's and zarr's own errors) becomes a
  ``ValidationError`` naming the file;
* a file is read into memory, a private copy that nothing done to the file later can reach,
  unless it is a large ``.npy`` (more than ``COPY_LIMIT`` bytes, or ``mmap=True``): then it is
  memory-mapped and ``FileGuard`` checks, before every reset and step, that the file has not
  changed (a mapped file truncated under a running simulation would kill the process with
  SIGBUS). A private copy-on-write mapping would not help: Linux removes the pages beyond a
  truncated file's end from private mappings too.
"""

from __future__ import annotations

import hashlib
import math
import os
import posixpath
import stat
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ... import files as _files
from ...checks import check_memory, check_point, check_real, fail, is_real, refuse, shown
from ...errors import PlumeError, StateError, ValidationError

__all__ = ["Recording", "FileIdentity", "Geometry", "read_recording", "geometry", "file_signature", "checksum", "FileGuard",
           "COPY_LIMIT", "KINDS", "ATTRIBUTES"]

KINDS = {".npy": "npy", ".npz": "npz", ".h5": "hdf5", ".hdf5": "hdf5", ".zarr": "zarr"}
EXPECTED = "a .npy, .npz, .h5/.hdf5 file or a .zarr directory store"
LABELS = {"npy": "a .npy file", "npz": "an .npz file", "hdf5": "an HDF5 file", "zarr": "a Zarr store"}
COPY_LIMIT = 256 * 2**20  # .npy files up to this size are read into memory (Movie(mmap=None))
KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.uint16), np.dtype(np.uint8))
READABLE = "float16, float32, float64, uint8 or uint16"
# the attributes Movie reads (the data zoo's, and ours); an .npz holds them as small arrays
ATTRIBUTES = ("fps", "pixel_to_grid", "origin", "extent", "source_location", "source_location_px", "length_unit",
              "spatial_unit", "schema_version", "source_dtype")
DATA_EXTRA = "pip install 'plume-multi[data]'"
WIND = ("u", "v", "w")  # the wind's components in a file (w: volumes only)
ZARR_DIMS = (("t", "y", "x"), ("t", "z", "y", "x"))  # a Zarr store's frames, or volumes


@dataclass
class Recording:
    """What a movie file holds.

    ``frames`` ``(T, H, W)`` or ``(T, D, H, W)`` C-ordered, native float32, uint16 or uint8
    (float16 and float64 are read as float32); ``attrs`` the file's attributes (the file's or
    group's, then the frames' own); ``wind`` ``(..., 2)`` float64 ``(u, v)`` as stored (``(..., 3)``
    with a ``w``), or None; ``mapped``: memory-mapped."""

    frames: np.ndarray
    attrs: dict
    wind: np.ndarray | None
    path: Path
    mapped: bool
    signature: tuple


# ----------------------------------------------------------------------------- the file itself
OPT_IN = "or Movie(..., allow_external=True) to read it (only for files you trust)"


def check_path(path, allow_external: bool = False) -> tuple[Path, str]:
    """``(path, kind)`` of an existing regular file (or Zarr directory store) of a known kind,
    checked with ``stat`` before anything opens it (``plume_multi.files``); a store's entries too
    (``check_store``)."""
    p = _files.check_path(path, "Movie.frames", EXPECTED)
    kind = KINDS.get(p.suffix.lower())
    if kind is None:
        refuse("Movie", "frames", shown(str(path), 120), EXPECTED)
    if kind == "zarr":
        _files.check_folder(p, "Movie.frames", "a Zarr directory store")
        check_store(p, allow_external)
    else:
        _files.check_file(p, "Movie.frames", f"a regular file: {EXPECTED}")
    return p, kind


def check_store(p: Path, allow_external: bool = False) -> None:
    """Every entry of the Zarr store ``p`` is a folder or a regular file, and (unless
    ``allow_external``) lies inside the store: a symbolic link that leads out of it is refused, as
    are FIFOs, devices, sockets and dangling links anywhere."""
    root = os.path.realpath(p)
    seen = set()
    stack = [str(p)]
    while stack:
        folder = stack.pop()
        try:
            names = sorted(os.listdir(folder))
        except OSError as exc:
            refuse("Movie", "frames", f"the Zarr store {shown(str(p), 120)}, whose folder {shown(folder, 120)} cannot be "
                   f"read ({exc.strerror or exc})", "a readable Zarr directory store")
        for name in names:
            entry = os.path.join(folder, name)
            where = f"the Zarr store {shown(str(p), 120)}, whose entry {shown(os.path.relpath(entry, p), 120)}"
            try:
                st = os.stat(entry)
            except OSError as exc:
                refuse("Movie", "frames", f"{where} cannot be read ({exc.strerror or exc})",
                       "a Zarr store of folders and regular files")
            if os.path.islink(entry):
                target = os.path.realpath(entry)
                if not (target == root or target.startswith(root + os.sep)) and not allow_external:
                    refuse("Movie", "frames", f"{where} is a symbolic link to {shown(target, 120)}, outside the store",
                           f"a store whose entries are inside it, {OPT_IN}")
            if stat.S_ISDIR(st.st_mode):
                real = os.path.realpath(entry)
                if real not in seen:  # a linked folder is walked once: a loop of links ends
                    seen.add(real)
                    stack.append(entry)
            elif not stat.S_ISREG(st.st_mode):
                refuse("Movie", "frames", f"{where} is {_files.kind_of(st.st_mode)}",
                       "a Zarr store of folders and regular files")


def file_signature(p: Path) -> tuple:
    """What tells a file (or every file of a directory store) changed: identity, size, time."""
    if p.is_dir():
        out = []
        for root, dirs, files in os.walk(p):
            dirs.sort()
            for name in sorted(files):
                st = os.stat(os.path.join(root, name))
                out.append((os.path.relpath(os.path.join(root, name), p), st.st_size, st.st_mtime_ns))
        return tuple(out)
    st = os.stat(p)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def checksum(p: Path) -> str:
    """``"sha256:<hex>"`` of a file's bytes, or of a directory store's files (each: its path
    relative to the store, then its bytes), in sorted order; each file read through the checked
    opener."""
    h = hashlib.sha256()
    files = [p] if not p.is_dir() else sorted(
        (Path(root) / name for root, _, names in os.walk(p) for name in names),
        key=lambda f: f.relative_to(p).as_posix())
    for f in files:
        if f != p:
            h.update(f.relative_to(p).as_posix().encode() + b"\0")
        with _files.open_file(f, "Movie.checksum", "the movie's files") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return "sha256:" + h.hexdigest()


@dataclass(frozen=True)
class FileIdentity:
    """A file (or directory store) as it was when it was read: ``file_signature`` tells a change."""

    path: Path
    signature: tuple


class FileGuard:
    """Called before every reset and step of a simulator over a memory-mapped movie: raises
    ``StateError`` when the file changed (size, time, identity) since it was mapped, before the
    kernels read from it."""

    def __init__(self, path: Path, signature: tuple):
        self.path, self.signature = path, signature

    def __call__(self) -> None:
        try:
            now = file_signature(self.path)
        except OSError:
            now = None
        if now != self.signature:
            raise StateError(f"Movie.frames: the memory-mapped file {str(self.path)!r} changed (or went) under the "
                             f"running simulation; nothing was read from it. Load the movie again, or let Movie "
                             f"read the file into memory (mmap=False) so that later changes cannot reach it")


# ----------------------------------------------------------------------------- reading
def read_recording(path, key=None, mmap=None, allow_external: bool = False) -> Recording:
    """The frames, attributes and wind of a movie file (``ValidationError`` naming the file for
    whatever cannot be read); with ``allow_external``, datasets stored outside it are read too."""
    p, kind = check_path(path, allow_external)
    if mmap is True and kind != "npy":
        fail("Movie", "mmap", mmap, f"None or False for a {kind} file (only .npy files are memory-mapped)")
    if key is not None and (not isinstance(key, str) or not key):
        fail("Movie", "key", key, "None or the name of the frames' array, dataset or variable")
    signature = file_signature(p)
    reader = {"npy": _read_npy, "npz": _read_npz, "hdf5": _read_hdf5, "zarr": _read_zarr}[kind]
    try:
        frames, attrs, wind, mapped = reader(p, key, mmap, allow_external)
    except PlumeError:
        raise
    except MemoryError:
        raise ValidationError(f"Movie.frames: not enough memory to read {str(p)!r}"
                              f"{' (pass mmap=True to map it instead)' if kind == 'npy' else ''}") from None
    except Exception as exc:  # readers raise anything on hostile input: each becomes ours
        raise ValidationError(f"Movie.frames: cannot read {str(p)!r} as {LABELS[kind]} ({type(exc).__name__}: "
                              f"{shown(str(exc), 300)[1:-1]}); expected {EXPECTED} in the layout of "
                              f"docs/recorded-data.md") from exc
    if file_signature(p) != signature:
        raise ValidationError(f"Movie.frames: {str(p)!r} changed while it was being read; expected a file that "
                              f"stays the same")
    return Recording(frames, {k: _plain(v) for k, v in attrs.items()}, wind, p, mapped, signature)


def _check_array(p: Path, name: str, shape, dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype.kind not in "fu" or (dtype.kind == "f" and dtype.itemsize not in (2, 4, 8)) or \
            (dtype.kind == "u" and dtype.itemsize > 2):
        refuse("Movie", "frames", f"{str(p)!r} whose {name!r} has dtype {dtype}", f"{READABLE} frames")
    if len(shape) not in (3, 4) or min(shape) < 1:
        refuse("Movie", "frames", f"{str(p)!r} whose {name!r} has shape {tuple(shape)}",
               "frames of shape (T, H, W), or volumes (T, D, H, W), each side at least 1")
    return dtype


def _check_memory(p: Path, nbytes: int, kind: str) -> None:
    advice = "Pass mmap=True to map it instead." if kind == "npy" else "Use a smaller movie."
    check_memory("Movie.frames", nbytes, f"reading {str(p)!r}", advice)


def _kernel_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype.kind == "f" else dtype.newbyteorder("=")


def _as_kernel_array(arr: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(arr, dtype=_kernel_dtype(arr.dtype))


def _npy_header(f) -> tuple:
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
    else:
        raise ValueError(f"unsupported .npy format version {version}")
    return shape, fortran, np.dtype(dtype)


def _read_npy(p: Path, key, mmap, allow_external):
    if key is not None:
        fail("Movie", "key", key, "None for a .npy file (it holds one array)")
    with _files.open_file(p, "Movie.frames", EXPECTED) as f:
        shape, fortran, dtype = _npy_header(f)
        offset = f.tell()
        _check_array(p, "frames", shape, dtype)
        need = math.prod(shape) * dtype.itemsize
        held = os.fstat(f.fileno()).st_size - offset
        if held < need:
            refuse("Movie", "frames", f"{str(p)!r}, a .npy file holding {held} bytes of data",
                   f"the {need} bytes its header declares (shape {tuple(shape)}, {dtype}): the file is truncated")
        direct = not fortran and dtype in KERNEL_DTYPES
        if direct and (mmap is True or (mmap is None and need > COPY_LIMIT)):
            # mapped through the descriptor the checks were made on (the mapping outlives it)
            return np.memmap(f, dtype=dtype, mode="r", offset=offset, shape=tuple(shape)), {}, None, True
        if mmap is True:
            fail("Movie", "mmap", mmap, f"None or False for {str(p)!r}: its {dtype} "
                 f"{'Fortran-ordered ' if fortran else ''}frames are converted, so read into memory")
        _check_memory(p, need + (0 if direct else math.prod(shape) * 4), "npy")
        raw = np.empty(tuple(shape)[::-1] if fortran else tuple(shape), dtype)
        view = memoryview(raw).cast("B")
        got = 0
        while got < need:
            n = f.readinto(view[got:])
            if not n:
                raise EOFError(f"the file ended after {got} of {need} bytes")
            got += n
    return _as_kernel_array(raw.T if fortran else raw), {}, None, False


def _npz_member(p: Path, data, name: str, *, frames=False, limit=None):
    """A member of an open ``.npz``, its header checked before it is read."""
    with data.zip.open(name + ".npy") as member:
        shape, _, dtype = _npy_header(member)
    if frames:
        _check_array(p, name, shape, dtype)
    elif limit is not None and math.prod(shape) > limit:
        refuse("Movie", "frames", f"{str(p)!r} whose {name!r} holds {math.prod(shape)} values",
               f"an attribute of at most {limit} values")
    _check_memory(p, math.prod(shape) * 8, "npz")
    return data[name]


def _read_npz(p: Path, key, mmap, allow_external):
    name = key or "concentration"
    with _files.open_file(p, "Movie.frames", EXPECTED) as handle, np.load(handle, allow_pickle=False) as data:
        if name not in data.files:
            fail("Movie", "key", key, f"the name of an array of {str(p)!r}: it has {data.files} (default "
                 f"'concentration')")
        frames = _as_kernel_array(_npz_member(p, data, name, frames=True))
        attrs = {a: _npz_member(p, data, a, limit=64) for a in ATTRIBUTES if a in data.files}
        u, v, w = (_npz_member(p, data, c) if c in data.files else None for c in WIND)
    return frames, attrs, _wind(p, frames.ndim, u, v, w), False


def _read_hdf5(p: Path, key, mmap, allow_external):
    try:
        import h5py
    except ImportError:
        raise ValidationError(f"Movie: reading HDF5 needs h5py: {DATA_EXTRA}") from None
    name = key or "concentration"
    # opened by its path (checked by check_path): h5py's file-object driver crashes the process
    # on a virtual dataset over another file (h5py 3.16), even one the user opted in to
    with h5py.File(p, "r") as f:
        ds = _h5_object(p, f, name, allow_external)
        if not isinstance(ds, h5py.Dataset):
            fail("Movie", "key", key, f"the name of a dataset of {str(p)!r}: it has {_h5_datasets(f)} (default "
                 f"'concentration')")
        _check_array(p, name, ds.shape, ds.dtype)
        _check_memory(p, ds.size * 4, "hdf5")
        frames = _as_kernel_array(ds[...])
        group = ds.parent
        attrs = {**f.attrs, **(group.attrs if group.name != "/" else {}), **ds.attrs}
        u, v, w = (_h5_wind(p, f, group, c, allow_external) for c in WIND)
    return frames, attrs, _wind(p, frames.ndim, u, v, w), False


def _h5_datasets(f) -> list:
    names = []
    f.visititems(lambda n, obj: names.append(n) if len(names) < 20 and hasattr(obj, "shape") else None)
    return names


def _h5_object(p: Path, f, path: str, allow_external: bool, links: int = 0):
    """The object at ``path`` of the open HDF5 file ``f``, or None: its links followed one by one
    (an external link refused, unless ``allow_external``, before HDF5 opens its file; a soft link's
    target checked the same way), and a dataset's storage checked (``_h5_inside``)."""
    import h5py

    if links > 40:
        refuse("Movie", "frames", f"{str(p)!r} whose {path!r} goes through more than 40 soft links",
               "datasets reached through a few links")
    obj = f
    for part in (s for s in path.split("/") if s):
        if not isinstance(obj, h5py.Group):
            return None
        link = obj.get(part, getlink=True)
        if link is None:
            return None
        if isinstance(link, h5py.ExternalLink) and not allow_external:
            refuse("Movie", "frames", f"{str(p)!r} whose {path!r} is an external link to {link.filename!r}",
                   f"datasets stored in the named file, {OPT_IN}")
        if isinstance(link, h5py.SoftLink):
            obj = _h5_object(p, f, posixpath.join(obj.name, link.path), allow_external, links + 1)
            if obj is None:
                return None
        else:
            obj = obj[part]
    if isinstance(obj, h5py.Dataset) and not allow_external:
        _h5_inside(p, f, obj, path)
    return obj


def _h5_inside(p: Path, f, ds, path: str, depth: int = 0) -> None:
    """Refuse a dataset whose bytes are not in ``f``: external storage, or a virtual dataset with a
    source in another file (or, within ``f``, such a dataset)."""
    if ds.external:
        refuse("Movie", "frames", f"{str(p)!r} whose {path!r} is stored in other files "
               f"({', '.join(repr(e[0]) for e in ds.external[:3])})", f"datasets stored in the named file, {OPT_IN}")
    if ds.is_virtual:
        for source in ds.virtual_sources():
            if source.file_name != "." or depth > 8:
                refuse("Movie", "frames", f"{str(p)!r} whose {path!r} is a virtual dataset over "
                       f"{source.file_name!r}", f"datasets stored in the named file, {OPT_IN}")
            inner = _h5_object(p, f, source.dset_name, False)
            if inner is not None and hasattr(inner, "is_virtual"):
                _h5_inside(p, f, inner, source.dset_name, depth + 1)


def _h5_wind(p: Path, f, group, name, allow_external):
    ds = _h5_object(p, f, posixpath.join(group.name, name), allow_external)
    if ds is None:
        return None
    if not hasattr(ds, "shape"):
        refuse("Movie", "wind", f"{str(p)!r} whose {name!r} is a group", "u and v datasets")
    _check_memory(p, ds.size * 8, "hdf5")
    return ds[...]


def _read_zarr(p: Path, key, mmap, allow_external):  # the store's entries: check_store
    try:
        import xarray as xr
    except ImportError:
        raise ValidationError(f"Movie: reading Zarr needs xarray and zarr: {DATA_EXTRA}") from None
    name = key or "concentration"
    # mask_and_scale=False: the values as written. xarray would otherwise take a Zarr (v2) array's
    # fill_value (the data zoo's is 0.0) for a CF _FillValue and turn every exact 0 into NaN.
    with warnings.catch_warnings():  # a store without consolidated metadata is read without it
        warnings.filterwarnings("ignore", message=".*consolidated metadata", category=RuntimeWarning)
        ds = xr.open_zarr(p, mask_and_scale=False, decode_times=False, chunks=None)
    with ds:
        if name not in ds:
            fail("Movie", "key", key, f"the name of a variable of {str(p)!r}: it has {sorted(map(str, ds.data_vars))} "
                 f"(default 'concentration')")
        var = ds[name]
        if tuple(var.dims) not in ZARR_DIMS:
            refuse("Movie", "frames", f"{str(p)!r} whose {name!r} has dims {tuple(var.dims)}",
                   "dims ('t', 'y', 'x'), or ('t', 'z', 'y', 'x') for volumes")
        packed = sorted(set(var.attrs) & {"scale_factor", "add_offset"})
        if packed:
            refuse("Movie", "frames", f"{str(p)!r} whose {name!r} is packed ({packed})",
                   "unpacked values (Movie's normalize= and scale= set the mapping to concentration)")
        _check_array(p, name, var.shape, var.dtype)
        _check_memory(p, var.size * 4, "zarr")
        frames = _as_kernel_array(var.values)
        attrs = {**ds.attrs, **var.attrs}
        u, v, w = (_zarr_wind(p, ds, c, tuple(var.dims)) for c in WIND)
    return frames, attrs, _wind(p, frames.ndim, u, v, w), False


def _zarr_wind(p: Path, ds, name, cells: tuple):
    """A wind component of a Zarr store: dims ``cells`` (the frames': per cell), ``('t',)`` or ``()``."""
    if name not in ds:
        return None
    var = ds[name]
    if tuple(var.dims) not in (cells, ("t",), ()):
        refuse("Movie", "wind", f"{str(p)!r} whose {name!r} has dims {tuple(var.dims)}",
               f"dims {cells} (per cell), ('t',) (per frame) or () (constant)")
    _check_memory(p, var.size * 8, "zarr")
    return var.values


def _wind(p: Path, ndim: int, u, v, w=None):
    """``(..., 2)`` float64 from the ``u`` and ``v`` arrays of a file (None when it has neither);
    ``(..., 3)`` with a ``w``, which only volumes (frames of ``ndim`` 4) may have."""
    if w is not None and ndim != 4:
        refuse("Movie", "wind", f"{str(p)!r} with a vertical wind w beside frames (t, y, x)",
               "u and v only (w is for volumes (t, z, y, x))")
    if u is None and v is None:
        if w is not None:
            refuse("Movie", "wind", f"{str(p)!r} with w but no u and v", "u and v with w, or no wind")
        return None
    if u is None or v is None:
        refuse("Movie", "wind", f"{str(p)!r} with {'u' if v is None else 'v'} but no {'v' if v is None else 'u'}",
               "both u and v (the wind's x and y components), or neither")
    parts = [np.asarray(c) for c in (u, v, w) if c is not None]
    if any(c.shape != parts[0].shape or c.dtype.kind not in "iuf" for c in parts):
        found = " and ".join(f"{n} {c.shape} {c.dtype}" for n, c in zip(WIND, parts))
        refuse("Movie", "wind", f"{str(p)!r} with {found}", f"{' and '.join(WIND[:len(parts)])} numbers of the same shape")
    return np.stack([c.astype(np.float64) for c in parts], axis=-1)


def _plain(value):
    """An attribute as Python values (h5py and zarr give NumPy scalars, arrays and bytes)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()] if value.ndim else _plain(value.item())
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


# ----------------------------------------------------------------------------- the layout
@dataclass(frozen=True)
class Geometry:
    """Where a movie's pixels are: ``flip_rows`` / ``flip_cols`` turn the stored order into the
    simulation's (x to the right, y up, row 0 at the bottom); ``cell_size`` (length unit) and
    ``origin`` ``(x, y)``, the position of cell ``(0, 0)`` after the flips."""

    flip_rows: bool = False
    flip_cols: bool = False
    cell_size: float | None = None
    origin: tuple = (0.0, 0.0)
    length_unit: str | None = None


def _pair(where: str, name: str, value, positive: bool) -> tuple:
    """A number (both axes) or a ``(y, x)`` pair (the data zoo's order), returned as ``(x, y)``."""
    if is_real(value):
        value = [value, value]
    if not isinstance(value, (list, tuple)):
        refuse("Movie", name, f"{value!r} in {where}", "a number or a (y, x) pair of numbers")
    expected = f"a number or a (y, x) pair of finite numbers{' > 0' if positive else ''} (in {where})"
    y, x = check_point("Movie", name, value, limit=1e12, expected=expected)
    if positive and min(x, y) < 1e-12:
        fail("Movie", name, value, expected)
    return x, y


def geometry(attrs: dict, shape: tuple, where: str, *, origin=None, cell_size=None) -> Geometry:
    """The layout attributes (``pixel_to_grid``, ``origin``, ``extent``, ``length_unit``) read as
    docs/recorded-data.md says; ``origin`` (``"lower"`` / ``"upper"``) and ``cell_size`` given to
    Movie take the place of the file's."""
    H, W = shape[-2:]  # volumes: the planes' layout (z needs none: plane 0 at the bottom)
    version = attrs.get("schema_version")
    if version is not None and str(version).split(".")[0] != "1":
        refuse("Movie", "frames", f"{where} of schema_version {version!r}", "schema version 1.x (the data zoo's)")
    file_origin = attrs.get("origin")
    rows = origin if origin is not None else file_origin if isinstance(file_origin, str) else "lower"
    if rows not in ("lower", "upper"):
        fail("Movie", "origin", rows, "'lower' (row 0 at the bottom: y up) or 'upper' (row 0 at the top, as in images)")
    # per axis (x, y): the position of stored pixel 0, and +1 / -1: whether later pixels lie towards +
    first = [0.0, 0.0]
    sign = [1.0, 1.0 if rows == "lower" else -1.0]
    if file_origin is not None and not isinstance(file_origin, str):
        first = list(_pair(where, "origin", file_origin, positive=False))
    pixel = None if attrs.get("pixel_to_grid") is None else _pair(where, "pixel_to_grid", attrs["pixel_to_grid"], True)
    extent = attrs.get("extent")
    if isinstance(extent, (list, tuple)) and len(extent) == 4:
        # matplotlib's imshow (left, right, bottom, top): column 0 at the left edge, row 0 at the
        # bottom edge ('lower') or at the top edge ('upper')
        x0, x1, y0, y1 = check_point("Movie", "extent", extent, length=4, limit=1e12,
                                     expected=f"(left, right, bottom, top): four finite numbers (in {where})")
        if x0 == x1 or y0 == y1:
            refuse("Movie", "extent", f"{extent} in {where}",
                   "(left, right, bottom, top) edges of a box of positive size")
        row0, row_end = (y0, y1) if rows == "lower" else (y1, y0)
        spans = (abs(x1 - x0) / W, abs(y1 - y0) / H)
        sign = [math.copysign(1.0, x1 - x0), math.copysign(1.0, row_end - row0)]
        first = [x0 + sign[0] * spans[0] / 2, row0 + sign[1] * spans[1] / 2]
        if pixel is not None and not _close(pixel, spans):
            refuse("Movie", "extent", f"{extent} in {where}", f"pixels of {spans[1]:g} x {spans[0]:g} (y, x) agreeing "
                   f"with pixel_to_grid {pixel[1]:g} x {pixel[0]:g}")
        pixel = spans
    elif extent is not None:
        ex, ey = _pair(where, "extent", extent, positive=True)
        # the data zoo's writers give n pixels (outer edges) or n - 1 (outer centres): either agrees
        candidates = [(ex / W, ey / H), (ex / max(W - 1, 1), ey / max(H - 1, 1))]
        if pixel is None:
            pixel = candidates[0]
        elif not any(_close(pixel, c) for c in candidates):
            refuse("Movie", "extent", f"{extent} (y, x) in {where}",
                   f"the frames' {H} x {W} pixels times pixel_to_grid "
                 f"{pixel[1]:g} x {pixel[0]:g} (y, x): {H * pixel[1]:g} x {W * pixel[0]:g} (or "
                 f"{(H - 1) * pixel[1]:g} x {(W - 1) * pixel[0]:g} between the outer pixel centres)")
    size = None
    if cell_size is not None:
        size = check_real("Movie", "cell_size", cell_size, 1e-12, 1e12)
    elif pixel is not None:
        if not _close(pixel, (pixel[1], pixel[0])):
            fail("Movie", "cell_size", None, f"a number: {where} has pixels of {pixel[1]:g} x {pixel[0]:g} (y, x), not "
                 f"square as the simulation's cells are; pass cell_size= to declare a cell's length (or resample "
                 f"the frames)")
        size = pixel[0]
    # flipped, cell 0 is the stored pixel n - 1: its position is first - (n - 1) pixels
    step = 1.0 if size is None else size
    origin_xy = tuple(float(f - (n - 1) * step) if s < 0 else float(f) for f, s, n in zip(first, sign, (W, H)))
    unit = attrs.get("length_unit", attrs.get("spatial_unit"))
    if unit is not None and (not isinstance(unit, str) or not unit):
        refuse("Movie", "frames", f"{where} whose length_unit is {unit!r}", "a unit name such as 'mm'")
    return Geometry(sign[1] < 0, sign[0] < 0, size, origin_xy, unit)


def _close(a, b, rel=1e-6) -> bool:
    return all(abs(p - q) <= rel * max(abs(p), abs(q)) for p, q in zip(a, b))


def source_in_cells(attrs: dict, shape: tuple, geo: Geometry, where: str):
    """The file's source (``source_location`` in cells or ``source_location_px`` in pixels, both
    ``(x, y)`` of the stored frames, ``(x, y, z)`` of stored volumes) in the simulation's cells, or None."""
    n = len(shape) - 1
    for name in ("source_location", "source_location_px"):
        if attrs.get(name) is not None:
            point = "(x, y): two" if n == 2 else "(x, y, z): three"
            x, y, *z = check_point("Movie", "source", attrs[name], length=n,
                                   expected=f"{point} finite numbers (the {name} of {where})")
            H, W = shape[-2:]
            return (W - 1 - x if geo.flip_cols else x), (H - 1 - y if geo.flip_rows else y), *z
    return None
