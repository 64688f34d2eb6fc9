"""The one way orv writes YAML: emit, read back with `orv check`'s own loader, quote what did not read back.

Two emitters exist for two jobs (ruamel's round-trip for files a person edits, validator/files/yamledit.py;
a compact deterministic layout for generated recipes, validator/files/yamlout.py), but both
write through `write()` here, so what one writes the other would accept and `orv check` reads
exactly what was meant. `orv check` reads YAML 1.1 (PyYAML: `No` is false, `1:20` is 80) while
ruamel and editors read YAML 1.2, so a text value is written plain only if both read it as that
same text (`plain_ok`); otherwise, and wherever the read-back still differs, it is double-quoted
with every line break and control escaped (`\\N`, `\\L`, `\\P`, `\\x85`, ...), which every YAML
reader reads back exactly.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import yaml
from ruamel.yaml.nodes import ScalarNode as ScalarNode12
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from validator.errors import LoadError
from validator.load.documents import parse_yaml

Path = tuple[Any, ...]
# A string of this type is always written double-quoted, by either emitter.
Quoted = DoubleQuotedScalarString

_STR = "tag:yaml.org,2002:str"
_RESOLVER_11 = yaml.resolver.Resolver()
_RESOLVER_12 = VersionedResolver(version=(1, 2))
# YAML line breaks (1.1 counts NEL, LS and PS too), tabs and every character YAML does not print raw.
_NOT_PLAIN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")
_ESCAPES = {
    "\0": "\\0",
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    "\x1b": "\\e",
    '"': '\\"',
    "\\": "\\\\",
    "\x85": "\\N",
    "\u2028": "\\L",
    "\u2029": "\\P",
}
_MAX_ROUNDS = 8
# YAML 1.1's spec reads these as booleans too; PyYAML does not, other 1.1 readers (Go's yaml.v2) do.
_SHORT_BOOLS = frozenset({"y", "Y", "n", "N"})


class WriteError(ValueError):
    """What an emitter wrote would not read back as meant, even quoted: a bug in orv, never the user's."""


def plain_ok(text: str) -> bool:
    """Whether `text` written as a plain scalar is read as that text by YAML 1.1 (orv) and 1.2 (editors).

    Only the implicit typing is judged here (`No`, `1:20`, `0o17`, `~`, `2026-01-01`, `.5`); whether
    the characters may stand plain at all (`: `, ` #`, leading spaces) is the emitter's business, and
    the read-back in `write` proves it.
    """
    if not text or text != text.strip() or _NOT_PLAIN.search(text) or text in _SHORT_BOOLS:
        return False
    if _RESOLVER_11.resolve(yaml.ScalarNode, text, (True, False)) != _STR:
        return False
    return _RESOLVER_12.resolve(ScalarNode12, text, (True, False)) == _STR


def double_quoted(text: str) -> str:
    """`text` as a YAML double-quoted scalar that every reader reads back exactly."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif _NOT_PLAIN.match(ch):
            code = ord(ch)
            out.append(f"\\x{code:02X}" if code <= 0xFF else f"\\u{code:04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def plain_data(value: Any) -> Any:
    """The data a document means, with ruamel's and orv's own string subclasses made plain str."""
    if isinstance(value, Mapping):
        return {str(k) if isinstance(k, str) else k: plain_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_data(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return value


def differences(read: Any, meant: Any, at: Path = ()) -> Iterator[Path]:
    """Paths where `read` is not `meant`, types compared strictly (True is not 1, 1 is not 1.0)."""
    if isinstance(meant, dict) and isinstance(read, dict):
        if list(read) != list(meant):
            yield at
            return
        for key in meant:
            yield from differences(read[key], meant[key], at + (key,))
    elif isinstance(meant, list) and isinstance(read, list):
        if len(read) != len(meant):
            yield at
            return
        for i, (r, m) in enumerate(zip(read, meant)):
            yield from differences(r, m, at + (i,))
    elif type(read) is not type(meant) or read != meant:
        yield at


def string_paths(value: Any, at: Path = ()) -> Iterator[tuple[Path, str]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from string_paths(item, at + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from string_paths(item, at + (i,))
    elif isinstance(value, str):
        yield at, value


def _get(data: Any, path: Path) -> Any:
    for part in path:
        data = data[part]
    return data


def quote_at(data: Any, path: Path) -> bool:
    """Make the string at `path` a Quoted one, in place (a ruamel map keeps its comments); False if it
    is not a string or quoted already."""
    if not path:
        return False
    parent = _get(data, path[:-1])
    value = parent[path[-1]]
    if not isinstance(value, str) or isinstance(value, Quoted):
        return False
    parent[path[-1]] = Quoted(value)
    return True


def quote_unsafe(data: Any, where: Callable[[Path], bool] = lambda _: True) -> Any:
    """Quote, in place, every string at a path `where` accepts that would not read back plain; returns data."""
    for path, value in list(string_paths(data)):
        if where(path) and not isinstance(value, Quoted) and not plain_ok(value):
            quote_at(data, path)
    return data


def read_back(text: str) -> Any:
    """`text` read exactly as `orv check` reads it."""
    return parse_yaml(text)


def write(data: Any, emit: Callable[[Any], str], where: Callable[[Path], bool] = lambda _: True) -> str:
    """The YAML text `emit(data)` once it reads back (with `orv check`'s loader) as exactly `data`.

    Strings at paths `where` accepts that would not read back plain are quoted before the first
    emission; any value that still reads back otherwise is quoted and the document emitted again.
    `data` is changed in place (only by turning strings into Quoted ones). WriteError if a value
    cannot be made to read back: that is a bug in an emitter.
    """
    meant = plain_data(data)
    quote_unsafe(data, where)
    for _ in range(_MAX_ROUNDS):
        text = emit(data)
        try:
            read = read_back(text)
        except LoadError as exc:
            raise WriteError(f"the written YAML would not load (line {exc.line}): {exc.message}") from None
        wrong = list(differences(read, meant))
        if not wrong:
            return text
        if not any([quote_at(data, path) for path in wrong]):
            where_ = ".".join(str(p) for p in wrong[0]) or "(document)"
            raise WriteError(f"`{where_}` would not read back as written")
    raise WriteError("the written YAML would not read back as written")  # pragma: no cover - bounded rounds


def new_paths(before: Any, after: Any, at: Path = ()) -> set[Path]:
    """Leaf paths of `after` that `before` lacks or holds otherwise (what an edit added or changed)."""
    if isinstance(after, Mapping):
        old = before if isinstance(before, Mapping) else {}
        return {p for k, v in after.items() for p in new_paths(old.get(k, _MISSING), v, at + (k,))}
    if isinstance(after, list):
        old_list: Sequence[Any] = before if isinstance(before, list) else []
        return {
            p
            for i, v in enumerate(after)
            for p in new_paths(old_list[i] if i < len(old_list) else _MISSING, v, at + (i,))
        }
    return set() if type(before) is type(after) and before == after else {at}


_MISSING = object()
