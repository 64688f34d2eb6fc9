"""Editing and writing YAML that people also edit, with ruamel.yaml's round-trip mode (comments, order, quoting kept).

Reading for checks stays on libyaml (validator/load/) for speed; this module is only for the
few places orv changes a file a person wrote or will edit: `orv add-run --write-recipe`,
`orv new`, `orv catalog add-model`. Every text goes out through validator/files/yamlwrite.py: read back
with the same YAML reader as `orv check`, it must hold exactly the intended data, and a value that
would not (`author: No`, `1:20`, a line separator) is double-quoted; lines the edit did not mean to
touch are restored byte for byte (ruamel drops trailing spaces).
"""

from __future__ import annotations

import difflib
import io
from collections.abc import Callable, Mapping
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError as RuamelError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString
from ruamel.yaml.util import load_yaml_guess_indent

from validator.errors import LoadError, Refusal
from validator.files import yamlwrite


class EditError(Refusal, ValueError):
    """The file cannot be edited safely (not YAML, not a mapping, or the edit would not read back)."""


def _yaml(block_seq_indent: int = 2) -> YAML:
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096  # never re-wrap a line a person wrote
    y.indent(mapping=2, sequence=block_seq_indent + 2, offset=block_seq_indent)
    return y


def load(text: str) -> tuple[CommentedMap, YAML]:
    """The round-trip document of `text` and a YAML instance that dumps it in the file's own indentation."""
    try:
        _, _, bsi = load_yaml_guess_indent(text)
        y = _yaml(2 if bsi is None else bsi)
        data = y.load(text)
    except RuamelError as exc:
        raise EditError(f"not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, CommentedMap):
        raise EditError("the file is not a YAML mapping")
    return data, y


def dump(data: Any, y: YAML | None = None) -> str:
    out = io.StringIO()
    (y or _yaml()).dump(data, out)
    return out.getvalue()


def _restore_untouched(original: str, normalized: str, edited: str) -> str:
    """`edited` with every line the edit did not change taken from `original`, byte for byte.

    ruamel re-spaces what it dumps (indentation, spaces inside `{...}`, trailing blanks) and may join
    a flow list a person wrapped over two lines. So `original` and `normalized` (ruamel's dump of the
    unedited document) are paired block by block: each normalized block stands for the original lines
    it came from. A block of `edited` left whole by the edit is written as those original lines; a
    block the edit touched is ruamel's text (verified all the same).
    """
    old, norm, new = (t.splitlines(keepends=True) for t in (original, normalized, edited))
    # normalized line -> (first normalized line of its block, the block's end, the original lines)
    block_of: dict[int, tuple[int, int, list[str]]] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, norm, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            for k in range(j2 - j1):
                block_of[j1 + k] = (j1 + k, j1 + k + 1, old[i1 + k : i1 + k + 1])
        elif tag == "replace":  # e.g. a wrapped flow list joined into one line
            for k in range(j1, j2):
                block_of[k] = (j1, j2, old[i1:i2])
        elif tag == "insert":  # ruamel added lines the original did not have: nothing to restore
            for k in range(j1, j2):
                block_of[k] = (k, k + 1, norm[k : k + 1])
        # "delete": original lines ruamel dropped (blank lines at the end): nothing to map
    crlf = bool(old) and all(line.endswith("\r\n") for line in old)  # keep a Windows file's line endings
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, norm, new, autojunk=False).get_opcodes():
        if tag == "equal":
            i = i1
            while i < i2:
                start, end, lines = block_of.get(i, (i, i + 1, norm[i : i + 1]))
                if start == i and end <= i2:
                    out.extend(lines)
                    i = end
                else:  # a block the edit cut through: ruamel's text for this line
                    out.append(new[j1 + (i - i1)])
                    i += 1
        else:
            # ruamel keeps a comment's own "\r" and adds "\n": one "\r\n" per line in a Windows file
            out.extend(line.rstrip("\r\n") + "\r\n" if crlf and line.endswith("\n") else line for line in new[j1:j2])
    return "".join(out)


def edit(text: str, change: Callable[[CommentedMap], None]) -> str:
    """Apply `change` to the round-trip document of `text`; the result is verified (module docstring)."""
    try:
        before = yamlwrite.read_back(text)
    except LoadError as exc:
        raise EditError(f"not valid YAML: {exc.message}") from None
    data, y = load(text)
    if list(yamlwrite.differences(before, yamlwrite.plain_data(data))):
        # ruamel reads YAML 1.2, libyaml 1.1: a value such as `yes` or `0o10` means two things
        raise EditError(
            "the file reads differently in YAML 1.1 and 1.2 (an unquoted yes/no/on/off or octal?); "
            "quote such values, then retry"
        )
    normalized = dump(data, y)
    change(data)
    # only what the edit wrote is restyled; the rest of the file keeps its own quoting
    fresh = yamlwrite.new_paths(before, yamlwrite.plain_data(data))
    try:
        return yamlwrite.write(
            data, lambda d: _restore_untouched(text, normalized, dump(d, y)), where=lambda path: path in fresh
        )
    except yamlwrite.WriteError as exc:  # pragma: no cover - an emitter bug, reported not written
        raise EditError(f"the edited file would not read back as intended: {exc}") from None


def append_to_list(data: CommentedMap, key: str, item: str) -> bool:
    """Append `item` to the list at `key` unless present; an empty flow list `[]` becomes a block list.

    The item is double-quoted when the list's existing items are (the registry's own style for
    `sha256:` references), plain otherwise. Returns whether the list changed.
    """
    current = data.get(key)
    if current is None or (isinstance(current, list) and not current):
        seq = CommentedSeq()
        seq.fa.set_block_style()
        seq.append(DoubleQuotedScalarString(item))
        data[key] = seq
        return True
    if not isinstance(current, list):
        raise EditError(f"`{key}` is not a list")
    if item in current:
        return False
    quoted = all(isinstance(v, DoubleQuotedScalarString) for v in current)
    current.append(DoubleQuotedScalarString(item) if quoted else item)
    return True


def append_mapping(data: CommentedMap, key: str, values: Mapping[str, Any]) -> None:
    """Append `values` as a flow mapping (`- {concurrency: 8, decode_tok_s: 41.2}`) to the block list at `key`."""
    current = data.get(key)
    if current is None or (isinstance(current, list) and not current):
        current = CommentedSeq()
        current.fa.set_block_style()
        data[key] = current
    if not isinstance(current, list):
        raise EditError(f"`{key}` is not a list")
    item = CommentedMap(values)
    item.fa.set_flow_style()
    current.append(item)


def fill_mapping(data: CommentedMap, key: str, values: Mapping[str, Any]) -> bool:
    """Fill the mapping at `key` with `values` when it is missing or empty; returns whether it changed."""
    current = data.get(key)
    if current:
        return False
    if isinstance(current, CommentedMap):  # `{}` written by a person: fill it where it is, comment and all
        current.update(values)
        current.fa.set_flow_style()
        return True
    filled = CommentedMap(values)
    filled.fa.set_flow_style()  # `claimed: {decode_tok_s: 41.56}`, as the registry writes claims
    data[key] = filled
    return True


def set_text(data: CommentedMap, key: str, value: str) -> None:
    """Set `key` to the text `value`, double-quoted (a date or version must stay text), where it stands."""
    data[key] = DoubleQuotedScalarString(value)


# Values people read as text but YAML would read as numbers or dates: always written quoted.
QUOTED_KEYS = frozenset({"version", "commit", "image", "measured"})


def _node(key: str, value: Any, flow_keys: frozenset[str], depth: int) -> Any:
    if isinstance(value, Mapping):
        node = CommentedMap((k, _node(k, v, flow_keys, depth + 1)) for k, v in value.items())
        if key in flow_keys or depth >= 1 or not value:
            node.fa.set_flow_style()
        return node
    if isinstance(value, (list, tuple)):
        seq = CommentedSeq(_node(key, v, flow_keys, depth + 1) for v in value)
        seq.fa.set_flow_style()
        return seq
    if isinstance(value, str) and key in QUOTED_KEYS:
        return DoubleQuotedScalarString(value)
    return value


def add_missing_keys(data: CommentedMap, key: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """Add to the mapping at `key` the entries of `values` it lacks (never changes one it has); returns them."""
    current = data.get(key)
    if not isinstance(current, CommentedMap):
        return {}
    added = {}
    for name, value in values.items():
        if name not in current:
            node = value
            if isinstance(value, (list, tuple)):
                node = CommentedSeq(value)
                node.fa.set_flow_style()
            current[name] = node
            added[name] = value
    return added


def new_document(
    values: Mapping[str, Any],
    comments: Mapping[str, str] | None = None,
    header: str = "",
    flow_keys: frozenset[str] = frozenset(),
) -> str:
    """YAML text for a new file a person will edit: keys in the given order, a comment line above
    some keys, a header (e.g. the schema modeline), flow style for the mappings in `flow_keys` and
    for every mapping below the top level (`engine: {name: vllm, version: "0.11.0"}`)."""
    doc = CommentedMap((k, _node(k, v, flow_keys, 0)) for k, v in values.items())
    for key, comment in (comments or {}).items():
        if key in doc:
            doc.yaml_set_comment_before_after_key(key, before=comment)
    head = header.rstrip("\n") + "\n" if header else ""
    return yamlwrite.write(doc, lambda d: head + dump(d))
