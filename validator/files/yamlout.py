"""Deterministic, human-friendly YAML for generated registry files.

Only what recipes and catalog files hold is supported: mappings (insertion order is kept, so the
caller decides the reading order), lists, strings, integers, floats, booleans and null. Small
leaf mappings and short scalar lists are written in flow style (`{gpu: h100, count: 8}`), long
text as a literal block. A string is written plain only if every YAML 1.1 and 1.2 reader reads it
back as the same string; `0.30`, `18305948`, `2026-10-17`, `yes` and the like are quoted, so a
version, a commit or a date never silently becomes a number, a boolean or a date. The text goes
out through validator/files/yamlwrite.py, which proves it reads back as the document.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from validator.files import yamlwrite

WIDTH = 100
# Pins are always quoted, so they read as text even to a reader who does not know YAML's number rules.
QUOTED_KEYS = frozenset({"version", "commit", "image"})
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+-]*$")
_PLAIN_WORDS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+-]*( [A-Za-z0-9][A-Za-z0-9._/+-]*)*$")


# Characters a block scalar cannot carry as written: every break but "\n", tabs, controls.
_SPECIAL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


class YamlOutError(ValueError):
    """A value this emitter does not write (the caller built an unsupported document)."""


def dump(document: Mapping[str, Any]) -> str:
    """The YAML text of a top-level mapping, ending in one newline, proven to read back as `document`
    (validator/files/yamlwrite.py)."""
    try:
        # this emitter makes its own plain-or-quoted choice (`_string`, block text); the read-back decides the rest
        return yamlwrite.write(copy.deepcopy(dict(document)), _emit, where=lambda _: False)
    except yamlwrite.WriteError as exc:  # pragma: no cover - an emitter bug, reported not written
        raise YamlOutError(str(exc)) from None


def _emit(document: Mapping[str, Any]) -> str:
    if not document:
        return "{}\n"
    lines: list[str] = []
    _mapping_block(document, 0, lines)
    return "\n".join(lines) + "\n"


def scalar(value: Any, flow: bool = False) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise YamlOutError(f"non-finite number {value!r}")
        text = repr(value)
        mantissa, e, exponent = text.partition("e")
        # YAML 1.1 (PyYAML) reads a float only with a dot in the mantissa: "1e-09" would be a string
        return mantissa + ("" if "." in mantissa else ".0") + e + exponent
    if isinstance(value, str):
        return _string(value, flow)
    raise YamlOutError(f"unsupported value of type {type(value).__name__}")


def _string(value: str, flow: bool) -> str:
    pattern = _PLAIN if flow else _PLAIN_WORDS
    if not isinstance(value, yamlwrite.Quoted) and pattern.match(value) and yamlwrite.plain_ok(value):
        return value
    return yamlwrite.double_quoted(value)


def _value(key: str, value: Any, flow: bool = False) -> str:
    if key in QUOTED_KEYS and isinstance(value, str):
        return yamlwrite.double_quoted(value)
    return scalar(value, flow)


def _is_leaf(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _flow(value: Any) -> str | None:
    """Flow-style text for a small leaf mapping or scalar list, or None if it should be a block."""
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        if not all(_is_leaf(v) or _is_scalar_list(v) for v in value.values()):
            return None
        parts = []
        for k, v in value.items():
            inner = _flow(v) if isinstance(v, list) else _value(k, v, flow=True)
            if inner is None or "\n" in inner:
                return None
            parts.append(f"{_key(k)}: {inner}")
        return "{" + ", ".join(parts) + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        if not _is_scalar_list(value):
            return None
        return "[" + ", ".join(scalar(v, flow=True) for v in value) + "]"
    return None


def _is_scalar_list(value: Any) -> bool:
    return isinstance(value, list) and all(_is_leaf(v) and not (isinstance(v, str) and "\n" in v) for v in value)


def _key(key: Any) -> str:
    if not isinstance(key, str):
        raise YamlOutError(f"mapping keys must be strings, not {key!r}")
    return _string(key, flow=True)


def _mapping_block(mapping: Mapping[str, Any], indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for key, value in mapping.items():
        head = f"{pad}{_key(key)}:"
        if isinstance(value, str) and ("\n" in value or len(head) + len(value) + 1 > WIDTH):
            _text_block(head, value, indent, lines)
        elif _is_leaf(value):
            lines.append(f"{head} {_value(key, value)}")
        else:
            flow = _flow(value)
            if flow is not None and len(head) + 1 + len(flow) <= WIDTH:
                lines.append(f"{head} {flow}")
            elif isinstance(value, Mapping):
                lines.append(head)
                _mapping_block(value, indent + 2, lines)
            elif isinstance(value, list):
                lines.append(head)
                _sequence_block(value, indent + 2, lines)
            else:
                raise YamlOutError(f"unsupported value at `{key}`")


def _sequence_block(items: Sequence[Any], indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for item in items:
        if _is_leaf(item):
            lines.append(f"{pad}- {scalar(item)}")
            continue
        flow = _flow(item)
        if flow is not None and indent + 2 + len(flow) <= WIDTH:
            lines.append(f"{pad}- {flow}")
        elif isinstance(item, Mapping):
            sub: list[str] = []
            _mapping_block(item, indent + 2, sub)
            sub[0] = f"{pad}- {sub[0][indent + 2 :]}"
            lines.extend(sub)
        else:
            raise YamlOutError("nested lists are not supported")


def _text_block(head: str, value: str, indent: int, lines: list[str]) -> None:
    """Long text as a folded block (`>-`, wrapped, one blank line between paragraphs), else a literal
    block (`|-`), else quoted: whichever reads back exactly."""
    pad = " " * (indent + 2)
    paragraphs = value.split("\n")
    special = isinstance(value, yamlwrite.Quoted) or bool(_SPECIAL.search(value))
    simple = (
        not special and value == value.strip() and "  " not in value and all(p and p == p.strip() for p in paragraphs)
    )
    if simple:
        lines.append(f"{head} >-")
        for i, paragraph in enumerate(paragraphs):
            if i:
                lines.append("")
            lines.extend(pad + line for line in _wrap(paragraph, WIDTH - len(pad)))
        return
    if special or value != value.strip() or any(line != line.rstrip() or line.startswith(" ") for line in paragraphs):
        lines.append(f"{head} {yamlwrite.double_quoted(value)}")
        return
    lines.append(f"{head} |-")
    lines.extend(f"{pad}{line}" if line else "" for line in paragraphs)


def _wrap(paragraph: str, width: int) -> list[str]:
    out: list[str] = []
    current = ""
    for word in paragraph.split(" "):
        if current and len(current) + 1 + len(word) > width:
            out.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    out.append(current)
    return out
