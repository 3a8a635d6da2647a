"""Records held by reference: a named tuple's fields in one reference-counted block.

The step driver hands each model its parameters and state, and the world's arrays, as records.
A named tuple is a value: every copy of it (each inlined call's argument, each ``models.plume``)
counts the references of every array inside it, and every call of a function that is not inlined
passes each of its fields as an argument. A puff plume's state holds 26 arrays; its driver's ``run``
was 24,831 LLVM instructions before optimisation, 2,692 of them reference counts, and took 548
arguments. ``as_ref(record)`` copies a named tuple's fields once into a ``RecordRef``, which travels
as one pointer with one count; code reads its fields by name (``P.sigma``) or by a constant index or
slice (``P[0]``, ``P[1:3]``), as it would the named tuple's. ``pick(record, cls)`` builds a named
tuple of class ``cls`` from the same-named fields of either. The driver holds the core and the
models' large records so (``assemble.BY_REFERENCE_FIELDS``); a read through the pointer costs more
than one of a value, so small records, read per agent, stay values.

This module's source is part of every cached function's key (``jit.py`` imports it): compiled code
holds a ``RecordRef``'s layout.
"""

from __future__ import annotations

from numba.core import cgutils, types
from numba.core.extending import intrinsic
from numba.core.imputils import lower_builtin
from numba.core.typing import signature
from numba.core.typing.templates import AbstractTemplate, infer
from numba.experimental import structref

__all__ = ["RecordRef", "as_ref", "pick"]


@structref.register
class RecordRef(types.StructRef):
    """A record's fields behind one pointer (and one reference count). ``instance_class``,
    ``fields`` and ``types`` are the named tuple's: code that dispatches on a record's class (the
    samplers find a plume's functions by it) reads them as it would a ``NamedTuple`` type's."""

    def __init__(self, instance_class, fields):
        self.instance_class = instance_class
        super().__init__(fields)
        self.name = f"RecordRef[{instance_class.__module__}.{instance_class.__qualname__}]{self._fields}"

    @property
    def key(self):
        return self.instance_class, self._fields

    @property
    def fields(self):
        return tuple(name for name, _ in self._fields)

    @property
    def types(self):
        return tuple(t for _, t in self._fields)


def _payload(context, builder, ref_type, value):
    """The fields of ``value`` (a ``RecordRef``), to read or write by name."""
    meminfo = context.make_helper(builder, ref_type, value).meminfo
    data_type = ref_type.get_data_type()
    pointer = context.data_model_manager[data_type].get_value_type().as_pointer()
    data = builder.bitcast(context.nrt.meminfo_data(builder, meminfo), pointer)
    return cgutils.create_struct_proxy(data_type)(context, builder, ref=data)


@intrinsic
def as_ref(typingctx, record):
    """A ``RecordRef`` holding ``record``'s fields (a named tuple; each array's count + 1, given
    back when the ``RecordRef``'s last reference goes)."""
    if not isinstance(record, types.BaseNamedTuple):
        return None
    ref_type = RecordRef(record.instance_class, list(zip(record.fields, record.types)))

    def codegen(context, builder, signature, args):
        from numba.experimental.jitclass.base import imp_dtor  # decrefs every field

        [value] = args
        data_type = context.data_model_manager[ref_type.get_data_type()].get_value_type()
        meminfo = context.nrt.meminfo_alloc_dtor(
            builder, context.get_constant(types.uintp, context.get_abi_sizeof(data_type)),
            imp_dtor(context, builder.module, ref_type))
        out = context.make_helper(builder, ref_type)
        out.meminfo = meminfo
        payload = _payload(context, builder, ref_type, out._getvalue())
        for k, (name, typ) in enumerate(zip(record.fields, record.types)):
            item = builder.extract_value(value, k)
            context.nrt.incref(builder, typ, item)
            setattr(payload, name, item)
        return out._getvalue()

    return ref_type(record), codegen


def _items(context, builder, record, value, names):
    """The fields ``names`` of ``value`` (a ``RecordRef`` or a named tuple), each counted once more."""
    if isinstance(record, RecordRef):
        payload = _payload(context, builder, record, value)
        items = [getattr(payload, name) for name in names]
    else:
        items = [builder.extract_value(value, record.fields.index(name)) for name in names]
    have = dict(zip(record.fields, record.types))
    for name, item in zip(names, items):
        context.nrt.incref(builder, have[name], item)
    return items


@intrinsic
def pick(typingctx, record, cls):
    """A ``cls`` (a named tuple class) of the fields of the same names of ``record`` (a named
    tuple or a ``RecordRef`` that has every field of ``cls``)."""
    if not isinstance(cls, types.NamedTupleClass) or not isinstance(record, (RecordRef, types.BaseNamedTuple)):
        return None
    names = cls.instance_class._fields
    have = dict(zip(record.fields, record.types))
    if any(name not in have for name in names):
        return None
    out_type = types.NamedTuple([have[name] for name in names], cls.instance_class)

    def codegen(context, builder, signature, args):
        return context.make_tuple(builder, out_type, _items(context, builder, record, args[0], names))

    return out_type(record, cls), codegen


@infer
class _StaticGetItem(AbstractTemplate):
    """``P[k]`` and ``P[j:k]`` for constants, as on the named tuple (a slice is a plain tuple)."""

    key = "static_getitem"

    def generic(self, args, kws):
        record, index = args
        if not isinstance(record, RecordRef):
            return None
        if isinstance(index, int) and -len(record.fields) <= index < len(record.fields):
            return signature(record.types[index], *args)
        if isinstance(index, slice):
            return signature(types.BaseTuple.from_types(record.types[index]), *args)
        return None


@lower_builtin("static_getitem", RecordRef, types.IntegerLiteral)
@lower_builtin("static_getitem", RecordRef, types.SliceLiteral)
def _static_getitem(context, builder, sig, args):
    record = sig.args[0]
    value, index = args
    if isinstance(index, slice):
        items = _items(context, builder, record, value, record.fields[index])
        return context.make_tuple(builder, sig.return_type, items)
    return _items(context, builder, record, value, [record.fields[index]])[0]
