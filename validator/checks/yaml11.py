"""ORV119: values YAML 1.1 (orv, PyYAML) and YAML 1.2 (editors, most other tools) read differently."""

from __future__ import annotations

import re
from collections.abc import Iterator

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.load.documents import parse_yaml, plain_scalars
from validator.load.schema import types_at
from validator.registry.layout import classify
from validator.registry.snapshot import Snapshot

_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
# YAML 1.1-only spellings (PyYAML's resolver), each with what a YAML 1.2 core-schema reader makes of it.
_OCTAL = re.compile(r"^[-+]?0[0-7_]+$")
_BINARY = re.compile(r"^[-+]?0b[01_]+$")
_HEX = re.compile(r"^[-+]?0x[0-9a-fA-F_]+$")
_BOOL_WORDS = frozenset({"yes", "no", "on", "off"})
_PINS = frozenset({"version", "commit", "tool_version"})
# Cheap test on the whole text before walking its nodes (most files hold none of these spellings):
# one of them written as a whole value, after `key:`, `- `, `[`, `{` or `,`.
_CANDIDATE = re.compile(
    r"(?m)(?:[:,\[{]|^\s*-)\s*(?:[-+]?(?:0[0-7_]+|0b[01_]+|0x[0-9a-fA-F_]+"
    r"|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|[0-9][0-9_]*_[0-9_]*(?:\.[0-9_]*)?)"
    r"|(?i:yes|no|on|off))\s*(?:$|[,\]}#])"
)


def yaml11_reading(tag: str, raw: str) -> tuple[str, str, str] | None:
    """(what YAML 1.1 reads, what YAML 1.2 reads, what to write) for a 1.1-only spelling, else None."""
    if tag == _BOOL:
        word = raw.lower()
        if word not in _BOOL_WORDS:
            return None
        meant = "true" if word in ("yes", "on") else "false"
        return meant, f'the text "{raw}"', meant
    if tag not in (_INT, _FLOAT):
        return None
    try:
        value = parse_yaml(f"v: {raw}")["v"]
    except Exception:  # noqa: BLE001 - unreadable spellings are the loader's findings
        return None
    digits = raw.lstrip("+-").replace("_", "")
    sign = "-" if raw.startswith("-") else ""
    if ":" in raw:  # sexagesimal: 1:20 is 80 in YAML 1.1
        return repr(value), f'the text "{raw}"', f'{value!r}, or "{raw}" in quotes if it is a time or a ratio'
    if tag == _INT and _BINARY.match(raw):
        return repr(value), f'the text "{raw}"', repr(value)
    if tag == _INT and _HEX.match(raw):
        reading = f'the text "{raw}"' if "_" in raw or raw[0] in "+-" else repr(value)
        return repr(value), reading, repr(value)
    if tag == _INT and _OCTAL.match(raw) and digits.strip("0"):  # 017 is 15 in YAML 1.1, 17 in 1.2
        reading = (
            repr(int(sign + digits, 10)) if "_" not in raw and set(digits) <= set("0123456789") else f'the text "{raw}"'
        )
        return (
            f"{value!r} (octal)",
            reading,
            f"{int(sign + digits, 10)} (no leading zero), or {value!r} if you meant the octal number",
        )
    if "_" in raw:  # digit separators: 1_000 is text in YAML 1.2
        return repr(value), f'the text "{raw}"', repr(value)
    return None


_NON_TEXT = frozenset({"boolean", "integer", "number"})


def _hint(kind: str | None, at: tuple[str | int, ...], raw: str, write: str) -> str:
    """What to write, by the type the schema gives the field: a text field is quoted (`author: "No"`,
    never `false`), a boolean or number field gets the value, a field of no known type both."""
    types = types_at(kind, at) if kind and at else set()
    key = str(at[-1]) if at and isinstance(at[-1], str) else "value"
    quoted = f'`{key}: "{raw}"`' if key != "value" else f'"{raw}"'
    if "string" in types and not types & _NON_TEXT:
        return f"it is text here: quote it, {quoted}"
    if types & _NON_TEXT:
        return f"write {write}"
    return f"write {write}, or quote it ({quoted}) if it is text"


@check("ORV119", Severity.ERROR, "YAML 1.1 number or boolean", per_file=True)
def yaml11_spelling(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A value is spelled in a way only YAML 1.1 reads as a number or a boolean. orv reads YAML 1.1
    (PyYAML), but editors, formatters and most other tools read YAML 1.2, so the two disagree on
    what the file says, and the figure on the boards is not what a reviewer sees:

    - `017` is octal 15 in YAML 1.1 and decimal 17 in YAML 1.2 — write `17`;
    - `1:20` is sexagesimal 80 in YAML 1.1 and the text "1:20" in YAML 1.2 — write `80`;
    - `0b101` (binary 5), `0x1F` (hex 31) and `1_000` (digit separators) — write `5`, `31`, `1000`;
    - `yes`, `no`, `on`, `off` are true/false in YAML 1.1 and text in YAML 1.2 — write `true`
      or `false` where the field is a boolean.

    The hint follows the field's type in the schema: a text field (`author: No`, a name) is
    quoted (`author: "No"`), never turned into `false`; a boolean or number field gets the value.

    Like ORV105 for versions, the finding says how each reads the value and what to write. A
    scalar spelled like a YAML 1.1 number with no digits (`0x_`, `0b_`) is reported here too:
    quote it if it is text.
    """
    for path, doc in snapshot.documents.items():
        if not path.endswith((".yaml", ".yml")) or not _CANDIDATE.search(doc.text):
            continue
        for at, node in plain_scalars(doc.text):
            if at and at[-1] in _PINS:
                continue  # a pin written as a number is ORV105's, which says to quote it
            reading = yaml11_reading(node.tag, str(node.value))
            if reading is None:
                continue
            orv, editors, write = reading
            field = ".".join(str(p) for p in at) or "(document)"
            hint = _hint(classify(path), at, str(node.value), write)
            message = (
                f"`{field}: {node.value}` is a hexadecimal {orv}: YAML readers agree, but JSON, the "
                "schemas and most people read numbers in decimal"
                if orv == editors
                else f"`{field}: {node.value}` reads as {orv} in YAML 1.1 (orv) but as {editors} in "
                "YAML 1.2 (editors and most tools)"
            )
            yield Finding(path, message, hint, at=at, line=node.start_mark.line + 1, col=node.start_mark.column + 1)
