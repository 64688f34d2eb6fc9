"""orv's data types <-> plain JSON values, driven by the types the reader declares, never by the data.

Shard partials (validator/shard.py) carry per-file results between processes. The data names no
type: the reader says which type it expects (`decode(FileResult, value)`), and each value is checked
against that type's declared fields before anything is built — a dataclass gets exactly its fields,
a pydantic model goes through its own validation, an enum only one of its values. So a crafted
value can only ever become an instance of the declared type with well-typed fields: it cannot name
a class, call anything or set an attribute a declared field does not have.

Encoding of values typed `Any` (a document's parsed data, a run's fingerprint): JSON's own values as
themselves, a tuple as {"tuple": [...]}, a non-finite float as {"float": "nan"|"inf"|"-inf"}, an
integer beyond 64 bits as {"int": "digits"}, and a mapping whose one key is one of those tags wrapped
as {"dict": {...}}, so the encoding is one-to-one.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import functools
import math
import re
import types
import typing
from typing import Any, Callable

import pydantic

_TAGS = ("tuple", "float", "int", "dict")
_INT64 = range(-2**63, 2**64)  # what JSON readers (orjson among them) take as a number
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class ShapeError(ValueError):
    """A value that is not the declared type's shape; `where` is the path to it inside the value."""

    def __init__(self, where: tuple[Any, ...], message: str) -> None:
        super().__init__(message)
        self.where, self.message = where, message

    def __str__(self) -> str:
        at = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in self.where)
        return f"{at or 'the value'}: {self.message}"


# --------------------------------------------------------------------------- encoding


def _float(value: float) -> Any:
    return value if math.isfinite(value) else {"float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}


def _int(value: int) -> Any:
    return value if value in _INT64 else {"int": str(value)}


def encode(value: Any) -> Any:
    """A JSON-able value for any of orv's data values (dataclasses, pydantic models, enums, containers)."""
    if isinstance(value, enum.Enum):
        return encode(value.value)
    if isinstance(value, int) and not isinstance(value, bool):
        return _int(value)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, float):
        return _float(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, pydantic.BaseModel):
        return encode_any(value.model_dump(mode="json"))
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, (list, frozenset, set)):
        return [encode(v) for v in (sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value)]
    if isinstance(value, collections.abc.Mapping):
        return encode_any({k: encode(v) for k, v in value.items()}, shallow=True)
    raise TypeError(f"{type(value).__name__} has no data encoding")


def encode_any(value: Any, shallow: bool = False) -> Any:
    """The one-to-one encoding of a value typed Any (module docstring)."""
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return _int(value)
    if isinstance(value, tuple):
        return {"tuple": [encode_any(v) for v in value]}
    if isinstance(value, list):
        return [encode_any(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("a mapping with keys other than text has no data encoding")
        inner = value if shallow else {k: encode_any(v) for k, v in value.items()}
        return {"dict": inner} if len(inner) == 1 and next(iter(inner)) in _TAGS else inner
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return encode(value)


# --------------------------------------------------------------------------- decoding


def decode(kind: Any, value: Any) -> Any:
    """value (plain JSON data) as an instance of the declared type `kind`; ShapeError if it is not one."""
    return _decoder(kind)(value, ())


def decode_any(value: Any, where: tuple[Any, ...] = ()) -> Any:
    if isinstance(value, list):
        return [decode_any(v, (*where, i)) for i, v in enumerate(value)]
    if isinstance(value, dict):
        if len(value) == 1:
            (tag, inner), = value.items()
            if tag == "tuple" and isinstance(inner, list):
                return tuple(decode_any(v, (*where, i)) for i, v in enumerate(inner))
            if tag == "float" and inner in _NON_FINITE:
                return _NON_FINITE[inner]
            if tag == "int" and _big_int(inner):
                return int(inner)
            if tag == "dict" and isinstance(inner, dict):
                return {k: decode_any(v, (*where, k)) for k, v in inner.items()}
            if tag in _TAGS:
                raise ShapeError(where, f"`{tag}` holds {type(inner).__name__}")
        return {k: decode_any(v, (*where, k)) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ShapeError(where, f"{type(value).__name__} is not JSON data")


def _big_int(text: Any) -> bool:
    """Digits of an integer beyond 64 bits, as _int writes them (4,300 digits at most: Python's limit)."""
    return isinstance(text, str) and re.fullmatch(r"-?[1-9][0-9]{0,4299}", text) is not None \
        and int(text) not in _INT64


Decoder = Callable[[Any, tuple[Any, ...]], Any]


def _expect(value: Any, where: tuple[Any, ...], *kinds: type) -> None:
    # bool is an int to Python, never to a declared int field
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise ShapeError(where, f"{type(value).__name__} where {' or '.join(k.__name__ for k in kinds)} belongs")


def _mapping_items(value: Any, where: tuple[Any, ...]) -> dict[str, Any]:
    """A mapping's items from its encoding (plain, or wrapped in {"dict": …} when its one key is a tag)."""
    _expect(value, where, dict)
    if len(value) == 1 and next(iter(value)) in _TAGS:
        if "dict" not in value or not isinstance(value["dict"], dict):
            raise ShapeError(where, f"`{next(iter(value))}` where a mapping belongs")
        value = value["dict"]
    return value


@functools.lru_cache(maxsize=None)  # types are few and fixed: build each decoder once
def _decoder(kind: Any) -> Decoder:
    if kind is Any:
        return decode_any
    if kind is None or kind is type(None):
        def none(value: Any, where: tuple[Any, ...]) -> None:
            if value is not None:
                raise ShapeError(where, f"{type(value).__name__} where nothing (null) belongs")
        return none
    if kind in (bool, str):
        return lambda value, where: (_expect(value, where, kind), value)[1]
    if kind is int:
        def integer(value: Any, where: tuple[Any, ...]) -> int:
            if isinstance(value, dict) and set(value) == {"int"} and _big_int(value["int"]):
                return int(value["int"])
            _expect(value, where, int)
            return int(value)
        return integer
    if kind is float:
        def number(value: Any, where: tuple[Any, ...]) -> float:
            if isinstance(value, dict) and set(value) == {"float"} and value["float"] in _NON_FINITE:
                return _NON_FINITE[value["float"]]
            _expect(value, where, float, int)
            return float(value)
        return number
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is typing.Union or origin is types.UnionType:
        return _union(args)
    if origin is typing.Literal:
        def literal(value: Any, where: tuple[Any, ...]) -> Any:
            if value not in args or type(value) not in {type(a) for a in args}:
                raise ShapeError(where, f"{value!r} is not one of {list(args)}")
            return value
        return literal
    if origin is tuple:
        return _tuple(args)
    if origin in (list, collections.abc.Sequence):
        item = _decoder(args[0] if args else Any)

        def listed(value: Any, where: tuple[Any, ...]) -> list[Any]:
            _expect(value, where, list)
            return [item(v, (*where, i)) for i, v in enumerate(value)]
        return listed
    if origin in (frozenset, set, collections.abc.Set):
        item = _decoder(args[0])
        return lambda value, where: origin({item(v, (*where, i)) for i, v in enumerate(_list(value, where))})
    if origin in (dict, collections.abc.Mapping):
        if args and args[0] is not str:
            raise TypeError(f"{kind} has no data encoding: mapping keys must be text")
        item = _decoder(args[1] if args else Any)

        def mapping(value: Any, where: tuple[Any, ...]) -> dict[str, Any]:
            return {k: item(v, (*where, k)) for k, v in _mapping_items(value, where).items()}
        return mapping
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        values = {m.value: m for m in kind}

        def member(value: Any, where: tuple[Any, ...]) -> enum.Enum:
            if not isinstance(value, (str, int)) or value not in values:
                raise ShapeError(where, f"{value!r} is not a {kind.__name__}")
            return values[value]
        return member
    if isinstance(kind, type) and issubclass(kind, pydantic.BaseModel):
        def model(value: Any, where: tuple[Any, ...]) -> pydantic.BaseModel:
            try:  # lax: JSON has no tuples; the model's own types and validators still decide
                return kind.model_validate(decode_any(value, where), strict=False)
            except pydantic.ValidationError as exc:
                error = exc.errors()[0]
                raise ShapeError((*where, *error["loc"]), error["msg"]) from None
        return model
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _dataclass(kind)
    raise TypeError(f"{kind!r} has no data encoding")


def _list(value: Any, where: tuple[Any, ...]) -> list[Any]:
    _expect(value, where, list)
    return value


def _union(args: tuple[Any, ...]) -> Decoder:
    options = [_decoder(a) for a in args if a is not type(None)]
    nullable = type(None) in args

    def union(value: Any, where: tuple[Any, ...]) -> Any:
        if value is None and nullable:
            return None
        errors = []
        for option in options:  # the declared alternatives only, in order; the first that fits
            try:
                return option(value, where)
            except ShapeError as exc:
                errors.append(exc)
        raise errors[-1] if len(errors) == 1 else ShapeError(where, "fits none of the declared alternatives")
    return union


def _tuple(args: tuple[Any, ...]) -> Decoder:
    if len(args) == 2 and args[1] is Ellipsis:
        item = _decoder(args[0])
        return lambda value, where: tuple(item(v, (*where, i)) for i, v in enumerate(_tagged_tuple(value, where)))
    items = [_decoder(a) for a in args]

    def fixed(value: Any, where: tuple[Any, ...]) -> tuple[Any, ...]:
        got = _tagged_tuple(value, where)
        if len(got) != len(items):
            raise ShapeError(where, f"{len(got)} items where {len(items)} belong")
        return tuple(item(v, (*where, i)) for i, (item, v) in enumerate(zip(items, got)))
    return fixed


def _tagged_tuple(value: Any, where: tuple[Any, ...]) -> list[Any]:
    if not (isinstance(value, dict) and set(value) == {"tuple"} and isinstance(value["tuple"], list)):
        raise ShapeError(where, f"{type(value).__name__} where a tuple ({{\"tuple\": [...]}}) belongs")
    return value["tuple"]


def _dataclass(kind: type) -> Decoder:
    hints = typing.get_type_hints(kind)
    fields = dataclasses.fields(kind)
    decoders = {f.name: _decoder(hints[f.name]) for f in fields}
    names = set(decoders)
    later = [f.name for f in fields if not f.init]  # set after construction, as their loader does

    def build(value: Any, where: tuple[Any, ...]) -> Any:
        _expect(value, where, dict)
        if set(value) != names:
            odd = sorted(set(value) ^ names)
            raise ShapeError(where, f"{kind.__name__} has exactly the fields {sorted(names)}; "
                                    f"not {', '.join(map(repr, odd))}")
        got = {name: decoders[name](v, (*where, name)) for name, v in value.items()}
        made = kind(**{k: v for k, v in got.items() if k not in later})
        for name in later:
            object.__setattr__(made, name, got[name])
        return made
    return build
