"""TF's protocol buffer messages as real protobuf classes, built at import from a short
description of each (TF's names and field numbers) with Debian's python3-protobuf:
no protoc step, and the classes behave as TF's generated ones (SerializeToString,
FromString, text format in repr, WhichOneof). Each file goes in a private descriptor
pool, so TF's own classes in the same process would not clash with these."""
from google.protobuf import descriptor_pb2 as _d
from google.protobuf import descriptor_pool as _pool
from google.protobuf import message_factory as _factory

_F = _d.FieldDescriptorProto
_SCALARS = {
    "double": _F.TYPE_DOUBLE, "float": _F.TYPE_FLOAT, "int64": _F.TYPE_INT64, "uint64": _F.TYPE_UINT64,
    "int32": _F.TYPE_INT32, "fixed32": _F.TYPE_FIXED32, "fixed64": _F.TYPE_FIXED64, "bool": _F.TYPE_BOOL,
    "string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES, "uint32": _F.TYPE_UINT32,
}
_POOL = _pool.DescriptorPool()


def _camel(name):
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


def _add_field(msg, package, name, number, type_name, repeated=False, oneof=None, oneof_names=None, packed=None):
    f = msg.field.add(name=name, number=number, json_name=name)
    f.label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
    if type_name in _SCALARS:
        f.type = _SCALARS[type_name]
    elif type_name.startswith("enum:"):
        f.type = _F.TYPE_ENUM
        f.type_name = f".{package}.{type_name[5:]}"
    else:
        f.type = _F.TYPE_MESSAGE
        f.type_name = type_name if type_name.startswith(".") else f".{package}.{type_name}"
    if oneof is not None:
        if oneof not in oneof_names:
            oneof_names.append(oneof)
            msg.oneof_decl.add(name=oneof)
        f.oneof_index = oneof_names.index(oneof)
    if packed is not None:
        f.options.packed = packed


def build(file_name, package, messages, enums=None, dependencies=()):
    """`messages`: {name: [(field, number, type, flags...)]}, a name "Outer.Inner" nested
    in Outer; type a scalar name, another message's name, "enum:Name", or
    "map<string,Value>"; flags: "repeated", "oneof:NAME", "unpacked". Returns
    {name: class} (nested ones under their dotted names)."""
    fd = _d.FileDescriptorProto(name=file_name, package=package, syntax="proto3")
    fd.dependency.extend(dependencies)
    for enum_name, values in (enums or {}).items():
        e = fd.enum_type.add(name=enum_name)
        for value_name, number in values:
            e.value.add(name=value_name, number=number)
    protos = {}
    for full_name in messages:  # outer messages before the ones nested in them
        outer, _, inner = full_name.rpartition(".")
        protos[full_name] = (protos[outer].nested_type.add(name=inner) if outer
                             else fd.message_type.add(name=full_name))
    for full_name, fields in messages.items():
        msg = protos[full_name]
        oneof_names = []
        for name, number, type_name, *flags in fields:
            oneof = next((f[6:] for f in flags if f.startswith("oneof:")), None)
            if type_name.startswith("map<"):
                key_type, value_type = type_name[4:-1].split(",")
                entry = msg.nested_type.add(name=_camel(name) + "Entry")
                entry.options.map_entry = True
                _add_field(entry, package, "key", 1, key_type)
                _add_field(entry, package, "value", 2, value_type)
                _add_field(msg, package, name, number, f".{package}.{full_name}.{entry.name}", repeated=True)
                continue
            _add_field(msg, package, name, number, type_name, repeated="repeated" in flags, oneof=oneof,
                       oneof_names=oneof_names, packed=False if "unpacked" in flags else None)
    _POOL.Add(fd)
    out = {}
    for full_name in messages:
        descriptor = _POOL.FindMessageTypeByName(f"{package}.{full_name}")
        out[full_name] = _message_class(descriptor)
    return out


def _message_class(descriptor):
    if hasattr(_factory, "GetMessageClass"):
        return _factory.GetMessageClass(descriptor)
    return _factory.MessageFactory(_POOL).GetPrototype(descriptor)
