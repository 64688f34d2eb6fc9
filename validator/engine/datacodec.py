"""orv's data types <-> plain JSON values, driven by the types the reader declares, never by the data.

Shard partials (validator/engine/shard.py) carry per-file results between processes. The data names no
type: the reader says which type it expects (`decode(FileResult, value)`), and each value is checked
against that type's declared fields before anything is built — a dataclass gets exactly its fields,
a pydantic model goes through its own validation, an enum only one of its values. So a crafted
value can only ever become an instance of the declared type with well-typed fields: it cannot name
a class, call anything or set an attribute a declared field does not have.

Encoding of values typed `Any` (a document's parsed data, a run's fingerprint): {"json": value} when
the value is plain JSON already (only mappings with text keys, lists, text, finite floats, 64-bit
integers, booleans and null: a parsed document always is), so reading it back is one JSON parse with
no walk; otherwise {"tagged": value} with a tuple as {"tuple": [...]}, a non-finite float as
{"float": "nan"|"inf"|"-inf"}, an integer beyond 64 bits as {"int": "digits"}, bytes as {"bytes":
"base64"}, an array of doubles or 64-bit integers (a fingerprint's sketches) as {"array": ["d"|"q",
[numbers]]}, and a mapping whose one key is one of those tags wrapped as {"dict": {...}}, so the
encoding is one-to-one.
"""

from __future__ import annotations

import array
import base64
import collections.abc
import dataclasses
import enum
import functools
import math
import re
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any

import pydantic

from validator.errors import Refusal

_TAGS = ("tuple", "float", "int", "dict", "bytes", "array")
_ARRAY_TYPES = {"d": float, "q": int}  # the array types a fingerprint holds, and the numbers each takes
_INT64 = range(-(2**63), 2**64)  # what JSON readers (orjson among them) take as a number
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class ShapeError(Refusal, ValueError):
    """A value that is not the declared type's shape; `where` is the path to it inside the value."""

    def __init__(self, where: tuple[Any, ...], message: str) -> None:
        super().__init__(message)
        self.where, self.message = where, message

    def __str__(self) -> str:
        at = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in self.where)
        return f"{at or 'the value'}: {self.message}"


# --------------------------------------------------------------------------- encoding


def _float(value: float) -> Any:
    return (
        value if math.isfinite(value) else {"float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    )


def _int(value: int) -> Any:
    return value if value in _INT64 else {"int": str(value)}


def encode(kind: Any, value: Any) -> Any:
    """value, an instance of the declared type `kind`, as plain JSON data that decode(kind, ·) reads back."""
    return _encoder(kind)(value)


Encoder = Callable[[Any], Any]


def _scalar(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return _int(value)
    return value


def _fits(kind: Any, value: Any) -> bool:
    """Is value an instance of one alternative of a union (the one to encode it as)?"""
    if kind is Any:
        return True
    if kind is None or kind is type(None):
        return value is None
    origin = typing.get_origin(kind)
    if origin is typing.Literal:
        return value in typing.get_args(kind)
    if kind is float:
        return isinstance(value, (float, int)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    base = origin or kind
    if base is collections.abc.Sequence:
        base = (list, tuple)
    return isinstance(value, base)


@functools.cache  # types are few and fixed: build each encoder once
def _encoder(kind: Any) -> Encoder:
    if kind is Any:
        return encode_any
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is typing.Union or origin is types.UnionType:
        options = [(a, _encoder(a)) for a in args]

        def union(value: Any) -> Any:
            for alternative, encoder in options:
                if _fits(alternative, value):
                    return encoder(value)
            raise TypeError(f"{type(value).__name__} is none of {kind}")

        return union
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _encoder(args[0])
            return lambda value: {"tuple": [item(v) for v in value]}
        items = [_encoder(a) for a in args]
        return lambda value: {"tuple": [e(v) for e, v in zip(items, value)]}
    if origin in (list, collections.abc.Sequence):
        item = _encoder(args[0] if args else Any)
        return lambda value: [item(v) for v in value]
    if origin in (frozenset, set, collections.abc.Set):
        item = _encoder(args[0])
        return lambda value: [item(v) for v in sorted(value, key=repr)]
    if origin in (dict, collections.abc.Mapping):
        item = _encoder(args[1] if args else Any)
        return lambda value: _tagged({k: item(v) for k, v in value.items()}, shallow=True)
    if isinstance(kind, type) and issubclass(kind, pydantic.BaseModel):
        return lambda value: value.model_dump(mode="json")  # plain JSON; the model's validation reads it back
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        fields = [(f.name, _encoder(hints[f.name])) for f in dataclasses.fields(kind)]
        return lambda value: {name: encoder(getattr(value, name)) for name, encoder in fields}
    return _scalar  # bool, int, float, str, None, Literal, Enum


def encode_any(value: Any) -> dict[str, Any]:
    """The one-to-one encoding of a value typed Any (module docstring)."""
    return {"json": value} if _plain(value) else {"tagged": _tagged(value)}


def _plain(value: Any) -> bool:
    """Is value plain JSON, which a JSON parser gives back equal (no tuple, no nan, no big integer)?"""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            if not all(type(k) is str for k in item):
                return False
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind is float:
            if not math.isfinite(item):
                return False
        elif kind is int:
            if item not in _INT64:
                return False
        elif not (item is None or kind is str or kind is bool):
            return False
    return True


def _tagged(value: Any, shallow: bool = False) -> Any:
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return _int(value)
    if isinstance(value, tuple):
        return {"tuple": [_tagged(v) for v in value]}
    if isinstance(value, list):
        return [_tagged(v) for v in value]
    if isinstance(value, bytes):
        return {"bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, array.array) and value.typecode in _ARRAY_TYPES:
        return {"array": [value.typecode, [_tagged(v) for v in value]]}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("a mapping with keys other than text has no data encoding")
        inner = value if shallow else {k: _tagged(v) for k, v in value.items()}
        return {"dict": inner} if len(inner) == 1 and next(iter(inner)) in _TAGS else inner
    if value is None or isinstance(value, (bool, int, str)):
        return value
    raise TypeError(f"{type(value).__name__} in a value typed Any has no data encoding")


# --------------------------------------------------------------------------- decoding
# Decoders take the value alone; where a refused value sits is added to the error on its way out
# (_located), so a partial that decodes pays for no path bookkeeping.


def decode(kind: Any, value: Any) -> Any:
    """value (plain JSON data) as an instance of the declared type `kind`; ShapeError if it is not one."""
    return _decoder(kind)(value)


def decode_any(value: Any) -> Any:
    """A value typed Any from encode_any's {"json": …} or {"tagged": …}."""
    if isinstance(value, dict) and len(value) == 1:
        if "json" in value:
            return value["json"]  # a parser's output is plain JSON: nothing to walk
        if "tagged" in value:
            return _untag(value["tagged"])
    raise ShapeError((), 'a value typed Any is written {"json": …} or {"tagged": …}')


_SCALARS = {int, float, str, bool, type(None)}


def _untag(value: Any) -> Any:
    """Plain JSON back into tuples, non-finite floats, big ints and non-string-keyed dicts. Containers are
    mapped with plain comprehensions (a run's fingerprint is thousands of nested tuples and numbers: a
    location kept for every container was most of a merge's decoding); a refusal names its key on the way
    out (_named)."""
    if isinstance(value, list):
        if _SCALARS.issuperset(map(type, value)):  # a fingerprint's thousands of numbers: nothing to untag
            return value
        try:
            return [_untag(v) for v in value]
        except ShapeError as exc:
            _named(exc, _untag, enumerate(value))
            raise
    if isinstance(value, dict):
        items = value.items()
        if len(value) == 1:
            ((tag, inner),) = items
            if tag == "tuple" and isinstance(inner, list):
                return tuple(_untag(inner))
            if tag == "float" and inner in _NON_FINITE:
                return _NON_FINITE[inner]
            if tag == "int" and _big_int(inner):
                return int(inner)
            if tag == "bytes" and isinstance(inner, str):
                try:
                    return base64.b64decode(inner, validate=True)
                except ValueError:
                    raise ShapeError((), "`bytes` holds text that is not base64") from None
            if tag == "array":
                made = _array_of(inner)
                if made is not None:
                    return made
            if tag == "dict" and isinstance(inner, dict):
                items = inner.items()
            elif tag in _TAGS:
                raise ShapeError((), f"`{tag}` holds {type(inner).__name__}")
        try:
            return {k: _untag(v) for k, v in items}
        except ShapeError as exc:
            _named(exc, _untag, items)
            raise
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ShapeError((), f"{type(value).__name__} is not JSON data")


def _named(exc: ShapeError, decoder: Callable[[Any], Any], items: Iterable[tuple[Any, Any]]) -> None:
    """Only on refusal: put the key of the first of `items` the decoder refuses in front of where `exc` points."""
    for key, v in items:
        try:
            decoder(v)
        except ShapeError:
            exc.where = (key, *exc.where)
            break


def _located(decoder: Callable[[Any], Any], items: Iterable[tuple[Any, Any]], make: type) -> Any:
    """make((key, decoder(v)) …) — a list of the values or a dict — naming the key of a refused value."""
    items = list(items)
    try:
        if make is dict:
            return {k: decoder(v) for k, v in items}
        return [decoder(v) for _, v in items]
    except ShapeError as exc:
        _named(exc, decoder, items)
        raise


def _array_of(inner: Any) -> array.array[Any] | None:
    """The array ["d", [floats]] or ["q", [64-bit integers]] stands for (what array.array builds from without
    surprise), else None. Its items are untagged once (they were twice: a fifth of a merge's decoding)."""
    if not (isinstance(inner, list) and len(inner) == 2 and inner[0] in _ARRAY_TYPES and isinstance(inner[1], list)):
        return None
    want = _ARRAY_TYPES[inner[0]]
    items = inner[1] if _SCALARS.issuperset(map(type, inner[1])) else [_untag(v) for v in inner[1]]
    if want is int:
        ok = all(type(v) is int and -(2**63) <= v < 2**63 for v in items)
    else:
        ok = all(type(v) in (int, float) for v in items)
    return array.array(inner[0], items) if ok else None


def _big_int(text: Any) -> bool:
    """Digits of an integer beyond 64 bits, as _int writes them (4,300 digits at most: Python's limit)."""
    return isinstance(text, str) and re.fullmatch(r"-?[1-9][0-9]{0,4299}", text) is not None and int(text) not in _INT64


Decoder = Callable[[Any], Any]


def _expect(value: Any, *kinds: type) -> None:
    # bool is an int to Python, never to a declared int field
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise ShapeError((), f"{type(value).__name__} where {' or '.join(k.__name__ for k in kinds)} belongs")


def _mapping_items(value: Any) -> dict[str, Any]:
    """A mapping's items from its encoding (plain, or wrapped in {"dict": …} when its one key is a tag)."""
    _expect(value, dict)
    if len(value) == 1 and next(iter(value)) in _TAGS:
        if "dict" not in value or not isinstance(value["dict"], dict):
            raise ShapeError((), f"`{next(iter(value))}` where a mapping belongs")
        value = value["dict"]
    return value


def _checked(kind: type) -> Decoder:
    def scalar(value: Any) -> Any:
        _expect(value, kind)
        return value

    return scalar


@functools.cache  # types are few and fixed: build each decoder once
def _decoder(kind: Any) -> Decoder:
    if kind is Any:
        return decode_any
    if kind is None or kind is type(None):

        def none(value: Any) -> None:
            if value is not None:
                raise ShapeError((), f"{type(value).__name__} where nothing (null) belongs")

        return none
    if kind in (bool, str):
        return _checked(kind)
    if kind is int:

        def integer(value: Any) -> int:
            if isinstance(value, dict) and set(value) == {"int"} and _big_int(value["int"]):
                return int(value["int"])
            _expect(value, int)
            return int(value)

        return integer
    if kind is float:

        def number(value: Any) -> float:
            if isinstance(value, dict) and set(value) == {"float"} and value["float"] in _NON_FINITE:
                return _NON_FINITE[value["float"]]
            _expect(value, float, int)
            return float(value)

        return number
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is typing.Union or origin is types.UnionType:
        return _union(args)
    if origin is typing.Literal:

        def literal(value: Any) -> Any:
            if value not in args or type(value) not in {type(a) for a in args}:
                raise ShapeError((), f"{value!r} is not one of {list(args)}")
            return value

        return literal
    if origin is tuple:
        return _tuple(args)
    if origin in (list, collections.abc.Sequence):
        item = _decoder(args[0] if args else Any)

        def listed(value: Any) -> list[Any]:
            _expect(value, list)
            return _located(item, enumerate(value), list)

        return listed
    if origin in (frozenset, set, collections.abc.Set):
        item = _decoder(args[0])

        def collected(value: Any) -> Any:
            _expect(value, list)
            return origin(_located(item, enumerate(value), list))

        return collected
    if origin in (dict, collections.abc.Mapping):
        if args and args[0] is not str:
            raise TypeError(f"{kind} has no data encoding: mapping keys must be text")
        item = _decoder(args[1] if args else Any)
        return lambda value: _located(item, _mapping_items(value).items(), dict)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        values = {m.value: m for m in kind}

        def member(value: Any) -> enum.Enum:
            if not isinstance(value, (str, int)) or value not in values:
                raise ShapeError((), f"{value!r} is not a {kind.__name__}")
            return values[value]

        return member
    if isinstance(kind, type) and issubclass(kind, pydantic.BaseModel):

        def model(value: Any) -> pydantic.BaseModel:
            try:  # lax: JSON has no tuples; the model's own types and validators still decide
                return kind.model_validate(value, strict=False)
            except pydantic.ValidationError as exc:
                error = exc.errors()[0]
                raise ShapeError(tuple(error["loc"]), error["msg"]) from None

        return model
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _dataclass(kind)
    raise TypeError(f"{kind!r} has no data encoding")


def _union(args: tuple[Any, ...]) -> Decoder:
    options = [_decoder(a) for a in args if a is not type(None)]
    nullable = type(None) in args

    def union(value: Any) -> Any:
        if value is None and nullable:
            return None
        errors = []
        for option in options:  # the declared alternatives only, in order; the first that fits
            try:
                return option(value)
            except ShapeError as exc:
                errors.append(exc)
        raise errors[-1] if len(errors) == 1 else ShapeError((), "fits none of the declared alternatives")

    return union


def _tuple(args: tuple[Any, ...]) -> Decoder:
    if len(args) == 2 and args[1] is Ellipsis:
        item = _decoder(args[0])
        return lambda value: tuple(_located(item, enumerate(_tagged_tuple(value)), list))
    items = [_decoder(a) for a in args]

    def fixed(value: Any) -> tuple[Any, ...]:
        got = _tagged_tuple(value)
        if len(got) != len(items):
            raise ShapeError((), f"{len(got)} items where {len(items)} belong")
        pairs = list(enumerate(zip(items, got)))
        return tuple(_located(lambda pair: pair[0](pair[1]), pairs, list))

    return fixed


def _tagged_tuple(value: Any) -> list[Any]:
    if not (isinstance(value, dict) and set(value) == {"tuple"} and isinstance(value["tuple"], list)):
        raise ShapeError((), f'{type(value).__name__} where a tuple ({{"tuple": [...]}}) belongs')
    return value["tuple"]


def _dataclass(kind: type) -> Decoder:
    hints = typing.get_type_hints(kind)
    fields = dataclasses.fields(kind)
    decoders = {f.name: _decoder(hints[f.name]) for f in fields}
    names = set(decoders)
    later = [f.name for f in fields if not f.init]  # set after construction, as their loader does

    def field_value(pair: tuple[str, Any]) -> Any:
        return decoders[pair[0]](pair[1])

    def build(value: Any) -> Any:
        _expect(value, dict)
        if value.keys() != names:
            extra, missing = sorted(set(value) - names), sorted(names - set(value))
            raise ShapeError(
                (),
                f"{kind.__name__} has exactly the fields {sorted(names)}"
                + "".join(
                    f"; {what} {', '.join(map(repr, keys))}"
                    for what, keys in (("not", extra), ("missing", missing))
                    if keys
                ),
            )
        got = _located(field_value, ((name, (name, v)) for name, v in value.items()), dict)
        made = kind(**{k: v for k, v in got.items() if k not in later})
        for name in later:
            object.__setattr__(made, name, got[name])
        return made

    return build
