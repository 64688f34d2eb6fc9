"""Bytes on disk -> Documents (data plus a way to locate any value); bad bytes become findings."""

from __future__ import annotations

import functools
import json
import math
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import yaml

from validator.errors import LoadError

# Documented limits (docs/checks.md). A recipe is a page of YAML; a run file holds raw samples,
# a long inference sweep of 10k requests is ~1.5 MB, so 16 MiB leaves room without letting a PR
# make every clone and check pay for a 100 MB blob.
MAX_YAML_BYTES = 1 * 1024 * 1024
MAX_JSON_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 32

JsonPath = Sequence["str | int"]
Location = tuple[int, int]


@dataclass
class Document:
    """One parsed file. `locate` maps a JSON path to (line, col), parsing positions only on demand."""

    path: str  # repository-relative, forward slashes
    data: Any
    text: str

    def locate(self, json_path: JsonPath) -> Location:
        if self.path.endswith((".yaml", ".yml")):
            return locate_yaml(self.text, json_path)
        return locate_json(self.text, json_path)


# --------------------------------------------------------------------------- reading bytes


def read_bytes(root: str, rel: str, limit: int) -> bytes:
    """Read a file without following symlinks and without reading past the size limit."""
    full = os.path.join(root, rel)
    st = os.lstat(full)
    import stat as _stat

    if _stat.S_ISLNK(st.st_mode):
        raise LoadError(
            "ORV114", "symbolic links are not allowed in the registry", "commit the file itself, not a link to it"
        )
    if not _stat.S_ISREG(st.st_mode):
        raise LoadError("ORV114", "not a regular file", "only regular files belong in the registry")
    if st.st_size > limit:
        raise LoadError(
            "ORV111",
            f"file is {st.st_size:,} bytes; the limit is {limit:,}",
            "split the data or trim it; run files keep raw samples, not logs",
        )
    with open(full, "rb") as fh:
        # read(n) allocates n bytes up front: ask for the size lstat gave (~3x faster than the limit)
        data = fh.read(st.st_size + 1)
        if len(data) > st.st_size:  # the file grew since lstat: read on, up to the limit
            data += fh.read(max(0, limit + 1 - len(data)))
    if len(data) > limit:
        raise LoadError("ORV111", f"file is larger than the {limit:,}-byte limit", "split the data or trim it")
    return data


def decode_utf8(raw: bytes) -> str:
    if raw.startswith(b"\xef\xbb\xbf"):
        raise LoadError("ORV110", "file starts with a UTF-8 byte-order mark", "save the file as UTF-8 without BOM")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise LoadError(
            "ORV110", f"invalid UTF-8 byte 0x{raw[exc.start]:02x}", "save the file as UTF-8", line, col
        ) from None


# --------------------------------------------------------------------------- YAML


class _StrictLoader(yaml.CSafeLoader):
    """libyaml's C parser with three refusals: duplicate keys, anchors/aliases, deep nesting."""

    def construct_document(self, node: yaml.Node) -> Any:
        _refuse_shared_or_deep(node)
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise _YamlRefusal(
                    "ORV112", key_node, "YAML merge keys (<<) are not allowed", "write the fields out in full"
                )
            if not isinstance(key_node, yaml.ScalarNode):
                raise _YamlRefusal(
                    "ORV104", key_node, "a mapping key must be a plain string", "use a simple `name:` key"
                )
            if key_node.tag != "tag:yaml.org,2002:str":
                # `1:`, `true:` or `~:` would become a non-text key that JSON (and the schema) cannot hold.
                raise _YamlRefusal(
                    "ORV104",
                    key_node,
                    f"mapping key `{key_node.value}` is not text",
                    f'quote the key: `"{key_node.value}":`, or use a `name:` key',
                )
            key = key_node.value
            if key in seen:
                first = seen[key].start_mark.line + 1
                raise _YamlRefusal(
                    "ORV102",
                    key_node,
                    f"duplicate key {key!r} (first at line {first})",
                    "keep one of the two entries; YAML would silently drop the first",
                )
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


def _refuse_shared_or_deep(root: yaml.Node) -> None:
    """An alias makes one node reachable twice; find that before constructing anything."""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            # The node's own mark is the anchor's; parse_yaml moves the finding to the alias.
            raise _YamlRefusal(
                "ORV112",
                node,
                "YAML aliases (*name) are not allowed",
                "write the value out; anchors and aliases can hide huge documents",
                alias=True,
            )
        seen.add(id(node))
        if node.tag not in _JSON_TAGS:
            raise _YamlRefusal(
                "ORV104",
                node,
                f"a `{_short_tag(node.tag)}` value is not JSON data ({_TAG_WORDS.get(node.tag, 'a YAML-only type')})",
                "write plain text, a number, true/false, a list or a mapping",
            )
        if depth > MAX_DEPTH:
            raise _YamlRefusal(
                "ORV112", node, f"document nests deeper than {MAX_DEPTH} levels", "flatten the structure"
            )
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                stack.append((k, depth + 1))
                stack.append((v, depth + 1))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((v, depth + 1) for v in node.value)


# What JSON (and so the schemas, canonical JSON and the boards) can hold; timestamps stay text.
_JSON_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp")
)
_TAG_WORDS = {
    "tag:yaml.org,2002:binary": "binary data, base64-decoded into bytes",
    "tag:yaml.org,2002:set": "a set: keys without values, in no order",
    "tag:yaml.org,2002:omap": "an ordered mapping, read as a list of pairs",
    "tag:yaml.org,2002:pairs": "a list of pairs",
}


def _short_tag(tag: str) -> str:
    return "!!" + tag.removeprefix("tag:yaml.org,2002:") if tag.startswith("tag:yaml.org,2002:") else tag


class _YamlRefusal(LoadError):
    def __init__(self, code: str, node: yaml.Node, message: str, hint: str, alias: bool = False) -> None:
        super().__init__(code, message, hint, node.start_mark.line + 1, node.start_mark.column + 1)
        self.alias = alias


def _first_alias(text: str) -> Location | None:
    """Where the first `*alias` is written (only called after an alias was found)."""
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            if isinstance(event, yaml.AliasEvent):
                assert event.start_mark is not None  # libyaml marks every event it parses
                return (event.start_mark.line + 1, event.start_mark.column + 1)
    except yaml.YAMLError:
        pass
    return None


# Python refuses int() of more than 4,300 digits (CVE-2020-10735); the YAML forms below are read
# as int by PyYAML's YAML 1.1 resolver but are no number at all (`0x_`, `0b_`, `+0b_`).
MAX_INT_DIGITS = 4300


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    digits = sum(ch.isdigit() for ch in str(node.value))
    if digits > MAX_INT_DIGITS:
        raise _YamlRefusal(
            "ORV120",
            node,
            f"a number of {digits:,} digits is too long to read",
            "write the figure in scientific notation (e.g. 1.5e+30) or as quoted text",
        )
    try:
        return int(yaml.SafeLoader.construct_yaml_int(loader, node))
    except ValueError:
        raise _YamlRefusal(
            "ORV119",
            node,
            f"`{node.value}` looks like a YAML 1.1 number but has no digits",
            f'quote it if it is text: `"{node.value}"`; write a plain decimal if it is a number',
        ) from None


def _construct_bool(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> bool:
    try:
        return bool(yaml.SafeLoader.construct_yaml_bool(loader, node))
    except KeyError:  # `!!bool maybe`
        raise _YamlRefusal("ORV104", node, f"`{node.value}` is not true or false", "write true or false") from None


def _construct_finite_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
    try:
        value = yaml.SafeLoader.construct_yaml_float(loader, node)
    except ValueError:  # `!!float abc`
        raise _YamlRefusal(
            "ORV104", node, f"`{node.value}` is not a number", "write a plain number such as 1.5"
        ) from None
    if not math.isfinite(value):
        # .nan passes every range check in the schema (all comparisons are false) and .inf is no
        # measurement; JSON cannot even write them.
        raise _YamlRefusal(
            "ORV113",
            node,
            f"`{node.value}` is not a finite number",
            "write the measured figure as a plain number, or leave the field out",
        )
    return float(value)


_StrictLoader.add_constructor("tag:yaml.org,2002:float", _construct_finite_float)
_StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_StrictLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)

# Timestamps stay strings: a recipe's `measured: 2026-10-17` is compared as text, and YAML's
# implicit datetime would not survive JSON Schema validation or canonical JSON.
# (type: ignore: types-PyYAML types add_constructor for Loader classes, not SafeConstructor's methods.)
_StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)  # type: ignore[type-var]


def parse_yaml(text: str) -> Any:
    _refuse_deep_flow(text)
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except _YamlRefusal as exc:
        line, col = (_first_alias(text) if exc.alias else None) or (exc.line, exc.col)
        raise LoadError(exc.code, exc.message, exc.hint, line, col) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        raise LoadError(
            "ORV101", f"YAML syntax error: {problem}", "check indentation and quoting around this position", line, col
        ) from None
    except yaml.YAMLError as exc:
        raise LoadError("ORV101", f"YAML syntax error: {exc}", "check the YAML syntax") from None
    except (ValueError, TypeError, KeyError, OverflowError) as exc:  # a constructor not wrapped above
        raise LoadError(
            "ORV101", f"YAML value cannot be read ({type(exc).__name__})", "quote the value so YAML reads it as text"
        ) from None
    except RecursionError:
        raise LoadError("ORV112", f"document nests deeper than {MAX_DEPTH} levels", "flatten the structure") from None
    return data


def _refuse_deep_flow(text: str) -> None:
    """libyaml recurses per nesting level; refuse absurd bracket depth before handing it over."""
    depth = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            if depth > MAX_DEPTH * 4:
                raise LoadError("ORV112", f"document nests deeper than {MAX_DEPTH} levels", "flatten the structure")
        elif ch in "]}":
            depth = max(0, depth - 1)


@functools.lru_cache(maxsize=32)
def _node_tree(text: str) -> Any:
    """libyaml's node graph of a YAML text: every key and value with its start position.

    Composing (no construction) in C costs well under a millisecond for a recipe, ~50x less than
    a pure-Python round-trip parse, so locating thousands of findings stays cheap.
    """
    try:
        return yaml.compose(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:  # locating is best effort; the parse error was reported already
        return None


def _child(node: Any, part: Any) -> tuple[Any, Any] | None:
    """(key node or None, value node) for one JSON-path step, or None when it does not exist."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == str(part):
                return key, value
    elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        return None, node.value[part]
    return None


def _at(mark: Any) -> Location:
    return (mark.line + 1, mark.column + 1)


def locate_yaml(text: str, json_path: JsonPath) -> Location:
    """Line/col of the value at json_path (or of the deepest existing parent).

    A mapping entry whose value is null or a collection is located at its key: that is the line a
    contributor reads ("hardware:"), not the first nested key.
    """
    node = _node_tree(text)
    loc: Location = (1, 1)
    for part in json_path:
        found = _child(node, part)
        if found is None:
            break
        key, value = found
        is_null = isinstance(value, yaml.ScalarNode) and value.tag == "tag:yaml.org,2002:null"
        if key is not None and (is_null or isinstance(value, (yaml.MappingNode, yaml.SequenceNode))):
            loc = _at(key.start_mark)
        else:
            loc = _at(value.start_mark)
        node = value
    return loc


def plain_scalars(text: str) -> Iterator[tuple[tuple[str | int, ...], yaml.ScalarNode]]:
    """Every unquoted scalar value of a YAML text (not keys) with its JSON path, from the cached
    node tree: what YAML 1.1 typed by its spelling (an int, a float, a bool), with its position."""
    root = _node_tree(text)
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), root)] if root is not None else []
    while stack:
        path, node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            stack.extend(((*path, str(k.value)), v) for k, v in reversed(node.value) if isinstance(k, yaml.ScalarNode))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(node.value))))
        elif isinstance(node, yaml.ScalarNode) and not node.style:  # libyaml: "", PyYAML: None
            yield path, node


def locate_yaml_key(text: str, json_path: JsonPath) -> Location:
    """Line/col of the key that holds json_path[-1] (for 'unknown field' findings)."""
    if not json_path:
        return (1, 1)
    node = _node_tree(text)
    for part in json_path[:-1]:
        found = _child(node, part)
        if found is None:
            return locate_yaml(text, json_path[:-1])
        node = found[1]
    found = _child(node, json_path[-1])
    if found is not None and found[0] is not None:
        return _at(found[0].start_mark)
    return locate_yaml(text, json_path[:-1])


# --------------------------------------------------------------------------- JSON


def _reject_constant(name: str) -> Any:
    raise LoadError("ORV113", f"{name} is not a JSON number", "write a finite number, or null for no value")


def parse_json(raw: bytes, text: str | None = None) -> Any:
    """Strict JSON: no NaN/Infinity, no duplicate keys (see below), nesting bounded by the parser.

    orjson is the fast path (~5x the stdlib; it rejects NaN and nests at most 1,024 deep). It
    silently keeps the last of duplicate keys, so callers re-check any file that is not canonical:
    a canonical file cannot contain a duplicate key.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _parse_json_slow(raw, text)  # for the precise error and position


def find_duplicate_json_keys(text: str) -> None:
    """Raise ORV102 if any object repeats a key (stdlib parser with a pairs hook)."""
    _parse_json_slow(text.encode("utf-8"), text)


def _parse_json_slow(raw: bytes, text: str | None) -> Any:
    if text is None:
        text = decode_utf8(raw)

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                line, col = _duplicate_key_position(text, key)
                raise LoadError(
                    "ORV102",
                    f"duplicate key {key!r}",
                    "keep one of the two entries; parsers disagree on which one wins",
                    line,
                    col,
                )
            out[key] = value
        return out

    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_constant=_reject_constant)
    except LoadError as exc:
        if exc.code == "ORV113":  # parse_constant is not told where; the first one is the culprit
            exc.line, exc.col = _first_non_finite(text)
        raise
    except json.JSONDecodeError as exc:
        raise LoadError(
            "ORV101",
            f"JSON syntax error: {exc.msg}",
            "fix the JSON syntax here (orv add-run writes valid files for you)",
            exc.lineno,
            exc.colno,
        ) from None
    except ValueError:  # int() refused a literal over Python's 4,300-digit limit
        line, col = _first_long_number(text)
        raise LoadError(
            "ORV120",
            f"a number of more than {MAX_INT_DIGITS:,} digits is too long to read",
            "write the figure in scientific notation (e.g. 1.5e+30)",
            line,
            col,
        ) from None
    except RecursionError:
        raise LoadError("ORV112", f"document nests deeper than {MAX_DEPTH} levels", "flatten the structure") from None
    _refuse_unrepresentable(data, text)
    return data


def json_nodes(data: Any) -> Iterator[Any]:
    """Every value of a parsed JSON tree, mapping keys included, without recursion (any depth)."""
    stack = [data]
    while stack:
        item = stack.pop()
        yield item
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _lone_surrogate(item: Any) -> bool:
    if not isinstance(item, str):
        return False
    try:
        item.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def has_lone_surrogate(data: Any) -> bool:
    """Does a string of the tree hold half a UTF-16 surrogate pair (what a `\\ud800` escape gives the
    standard library's parser; orjson refuses it, and no UTF-8 file can hold it)?"""
    return any(map(_lone_surrogate, json_nodes(data)))


SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _refuse_unrepresentable(data: Any, text: str) -> None:
    """What the stdlib parser lets through and orjson (the fast path) refuses: a number literal
    beyond the double range (1e400 -> inf) and a `\\ud800` escape naming half a character."""
    for item in json_nodes(data):
        if isinstance(item, float) and not math.isfinite(item):
            m = re.search(r"-?[0-9][0-9.]*[eE][+]?[0-9]{3,}", text)
            line, col = _offset_to_location(text, m.start()) if m else (1, 1)
            raise LoadError(
                "ORV113",
                "a number is beyond the range of a double (it reads as infinity)",
                "write the measured figure as a finite number",
                line,
                col,
            )
        if _lone_surrogate(item):
            m = SURROGATE_ESCAPE.search(text)
            line, col = _offset_to_location(text, m.start()) if m else (1, 1)
            raise LoadError(
                "ORV110",
                "a `\\uD800`-`\\uDFFF` escape names half of a UTF-16 surrogate pair, which is no character",
                "write the character itself, or a complete pair",
                line,
                col,
            )


def _first_long_number(text: str) -> Location:
    m = re.search(r"[0-9]{%d,}" % (MAX_INT_DIGITS + 1), text)  # noqa: UP031 - a regex quantifier's braces
    return _offset_to_location(text, m.start()) if m else (1, 1)


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:]')
_JSON_NON_FINITE = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')


def _duplicate_key_position(text: str, key: str) -> Location:
    """Position of the repeated `key` inside one object — not merely its second mention in the text,
    which may belong to another object (`version` of the tool and of the engine)."""
    stack: list[set[str] | None] = []  # the keys seen per open object; None for an open array
    pending: tuple[str, int] | None = None  # the last string, a key if a ':' follows
    for m in _JSON_TOKEN.finditer(text):
        token = m.group()
        if token == ":" and pending is not None and stack and stack[-1] is not None:
            name, start = pending
            if name in stack[-1] and name == key:
                return _offset_to_location(text, start)
            stack[-1].add(name)
        elif token in "{[":
            stack.append(set() if token == "{" else None)
        elif token in "}]":
            if stack:
                stack.pop()
        pending = (_json_string(token), m.start()) if token.startswith('"') else None
    return (1, 1)


def _json_string(token: str) -> str:
    try:
        return str(json.loads(token))
    except ValueError:
        return token[1:-1]


def _first_non_finite(text: str) -> Location:
    for m in _JSON_NON_FINITE.finditer(text):
        if m.group(1):
            return _offset_to_location(text, m.start(1))
    return (1, 1)


def _offset_to_location(text: str, offset: int) -> Location:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return (line, col)


def locate_json(text: str, json_path: JsonPath) -> Location:
    """Line/col of the value at json_path in a JSON text, by a small position-tracking scan."""
    try:
        offset = _JsonLocator(text).find(list(json_path))
    except (IndexError, ValueError):
        offset = 0
    return _offset_to_location(text, offset)


class _JsonLocator:
    _WS = " \t\r\n"

    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def _ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in self._WS:
            self.pos += 1

    def find(self, path: list[str | int]) -> int:
        self._ws()
        best = self.pos
        for part in path:
            ch = self.text[self.pos]
            if ch == "{" and isinstance(part, str):
                if not self._enter_object(part):
                    return best
            elif ch == "[" and isinstance(part, int):
                if not self._enter_array(part):
                    return best
            else:
                return best
            best = self.pos
        return best

    def _enter_object(self, key: str) -> bool:
        self.pos += 1
        while True:
            self._ws()
            if self.text[self.pos] == "}":
                return False
            start = self.pos
            self._skip_string()
            name = json.loads(self.text[start : self.pos])
            self._ws()
            self.pos += 1  # ':'
            self._ws()
            if name == key:
                return True
            self._skip_value()
            self._ws()
            if self.text[self.pos] == ",":
                self.pos += 1

    def _enter_array(self, index: int) -> bool:
        self.pos += 1
        i = 0
        while True:
            self._ws()
            if self.text[self.pos] == "]":
                return False
            if i == index:
                return True
            self._skip_value()
            self._ws()
            if self.text[self.pos] == ",":
                self.pos += 1
            i += 1

    def _skip_string(self) -> None:
        self.pos += 1
        while self.text[self.pos] != '"':
            self.pos += 2 if self.text[self.pos] == "\\" else 1
        self.pos += 1

    def _skip_value(self) -> None:
        ch = self.text[self.pos]
        if ch == '"':
            self._skip_string()
        elif ch in "[{":
            depth = 0
            while True:
                c = self.text[self.pos]
                if c == '"':
                    self._skip_string()
                    continue
                if c in "[{":
                    depth += 1
                elif c in "]}":
                    depth -= 1
                self.pos += 1
                if depth == 0:
                    return
        else:
            while self.pos < len(self.text) and self.text[self.pos] not in ",]}" + self._WS:
                self.pos += 1


# --------------------------------------------------------------------------- documents


def load_yaml_document(root: str, rel: str) -> Document:
    text = decode_utf8(read_bytes(root, rel, MAX_YAML_BYTES))
    return Document(rel, parse_yaml(text), text)
