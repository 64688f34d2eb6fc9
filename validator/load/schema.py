"""Compile schema/ once; turn jsonschema errors into ORV1xx findings a contributor can act on."""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

# jsonschema and referencing are imported where used: a clean registry is validated by the
# compiled pydantic models alone, and their import costs ~0.15 s of every command's start-up.
from typing import TYPE_CHECKING, Any, Protocol

from validator.registry.layout import HARDWARE_PATH, MODELS_PATH, WORKLOADS_PATH

if TYPE_CHECKING:
    import jsonschema
    from referencing import Registry

SCHEMA_FILES = {
    "recipe-training": "recipe-training.schema.json",
    "recipe-inference": "recipe-inference.schema.json",
    "run-training": "run-training.schema.json",
    "run-inference": "run-inference.schema.json",
    "run-quality": "run-quality.schema.json",
    "catalog-hardware": "catalog-hardware.schema.json",
    "catalog-models": "catalog-models.schema.json",
    "catalog-workloads": "catalog-workloads.schema.json",
    "catalog-starting-points": "catalog-starting-points.schema.json",
    "boards": "boards.schema.json",
    "partial": "partial.schema.json",
    "judged": "judged.schema.json",
}


@dataclass(frozen=True)
class SchemaIssue:
    """A schema violation, already translated: code, where (JSON path), message and hint."""

    code: str
    path: tuple[str | int, ...]
    message: str
    hint: str
    at_key: bool = False  # locate the key (unknown field) rather than the value


# A recipe from `orv new` has `claimed: {}` until its first run is attached.
_EMPTY_CLAIM_HINT = (
    "attach a run: `orv add-run --recipe <this file> --write-recipe OUTPUT` fills it from the run's "
    "recomputed figures (or write the figure you claim)"
)


def schema_dir() -> Any:
    """The shipped schemas: package data in an installed wheel, the repository's schema/ in a checkout."""
    from pathlib import Path

    checkout = Path(__file__).resolve().parents[2] / "schema"  # validator/load/schema.py -> the checkout
    if (checkout / "common.schema.json").is_file():
        return checkout
    return resources.files("validator.schemas")


@functools.cache
def _raw_schemas() -> dict[str, dict[str, Any]]:
    out = {}
    for entry in schema_dir().iterdir():
        if entry.name.endswith(".schema.json"):
            out[entry.name] = json.loads(entry.read_text(encoding="utf-8"))
    return out


@functools.cache
def _registry() -> Registry:
    from referencing import Registry, Resource

    resources_ = []
    for name, schema in _raw_schemas().items():
        resource = Resource.from_contents(schema)
        # Register under the $id and under the bare file name used by relative $refs.
        resources_.append((schema["$id"], resource))
        resources_.append((name, resource))
    return Registry().with_resources(resources_)


@functools.cache
def ecma_regex(pattern: str) -> Any:
    """A schema pattern compiled as ECMA-262 (JSON Schema's dialect) by regress, not Python's re.

    Python's `$` also matches before a final newline, so re.search would take "h100\n" for an id
    that pydantic's models and every editor reject.
    """
    import regress

    return regress.Regex(pattern, flags="u")


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    import jsonschema

    if validator.is_type(instance, "string") and ecma_regex(pattern).find(instance) is None:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


@functools.cache
def validator_for(kind: str) -> jsonschema.protocols.Validator:
    import jsonschema

    schema = _raw_schemas()[SCHEMA_FILES[kind]]
    cls = jsonschema.validators.extend(jsonschema.validators.validator_for(schema), {"pattern": _ecma_pattern})
    return cls(schema, registry=_registry())


def schema_id(kind: str) -> str:
    return str(_raw_schemas()[SCHEMA_FILES[kind]]["$id"])


def bundled(kind: str) -> dict[str, Any]:
    """The schema of `kind` with every $ref replaced by what it names (the schemas have no cycles):
    one self-contained document, for tools that cannot follow references between files, such as
    hypothesis-jsonschema in tests/unit/test_schema_agreement.py."""
    schema = _raw_schemas()[SCHEMA_FILES[kind]]

    def inline(node: Any, resolver: Any) -> Any:
        if isinstance(node, list):
            return [inline(item, resolver) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            resolved = resolver.lookup(node["$ref"])
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {**inline(resolved.contents, resolved.resolver), **inline(rest, resolver)}
        return {
            k: (v if k in ("enum", "const") else inline(v, resolver))
            for k, v in node.items()
            if k not in ("$id", "$defs", "$schema")
        }

    out = inline(schema, _registry().resolver(base_uri=schema["$id"]))
    return {"$schema": schema["$schema"], **out}


def subschema_properties(kind: str, path: Sequence[str | int]) -> list[str]:
    """Known property names at a JSON path (for 'did you mean' on unknown fields)."""
    return sorted(_properties_at(validator_for(kind), kind, tuple(path)))


def _properties_at(validator: Any, kind: str, path: tuple[str | int, ...]) -> set[str]:
    node = _node_at(kind, path)
    return set(node.get("properties", {})) if isinstance(node, dict) else set()


def types_at(kind: str, path: Sequence[str | int]) -> set[str]:
    """The JSON types the schema of `kind` declares at a JSON path (empty where it says none or the
    path is not in it): ORV119 words its hint by them (quote a text, write false for a boolean)."""
    if kind not in SCHEMA_FILES:
        return set()
    node = _node_at(kind, tuple(path))
    if not isinstance(node, dict):
        return set()
    found = node.get("type")
    types = {found} if isinstance(found, str) else set(found or ())
    for branch in (*node.get("anyOf", ()), *node.get("oneOf", ())):
        if isinstance(branch, dict) and isinstance(branch.get("type"), str):
            types.add(branch["type"])
    return types


def _node_at(kind: str, path: tuple[str | int, ...]) -> Any:
    schema = _raw_schemas()[SCHEMA_FILES[kind]]
    resolver = _registry().resolver(base_uri=schema["$id"])
    node: Any = schema
    for part in (*path, None):
        while isinstance(node, dict) and "$ref" in node:
            resolved = resolver.lookup(node["$ref"])
            resolver = resolved.resolver
            node = resolved.contents
        if part is None:
            break
        if not isinstance(node, dict):
            return None
        if isinstance(part, int):
            node = node.get("items", {})
        elif part in node.get("properties", {}):
            node = node["properties"][part]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        else:
            return None
    return node


@functools.cache
def _compiled(kind: str) -> Any:
    import jsonschema_rs

    registry = jsonschema_rs.Registry([(schema["$id"], schema) for schema in _raw_schemas().values()])
    # formats are annotations here, as for the jsonschema validator above (no format checker)
    return jsonschema_rs.validator_for(
        _raw_schemas()[SCHEMA_FILES[kind]], registry=registry, validate_formats=False, offline=True
    )


def is_valid(kind: str, data: Any) -> bool:
    """Does data satisfy the schema? jsonschema-rs (compiled, ~1,000x jsonschema on the boards
    document); only a False needs `validate` to word the findings. tests/unit/test_fast_paths.py checks
    that it accepts nothing jsonschema rejects."""
    try:
        return bool(_compiled(kind).is_valid(data))
    except ValueError:  # a value JSON has no type for (jsonschema-rs cannot judge it): jsonschema words it
        return False


def first_error(kind: str, data: Any) -> tuple[tuple[str | int, ...], str] | None:
    """(JSON path, message) of the first schema error by jsonschema-rs, or None when `data` is valid.

    For documents too large to word every error with jsonschema (a boards file of 10,000 recipes:
    its uniqueItems alone take minutes there, ~26 ms here): `orv site` refuses such a file by it.
    """
    if _compiled(kind).is_valid(data):
        return None
    for error in _compiled(kind).iter_errors(data):
        return tuple(error.instance_path), error.message
    return None  # pragma: no cover - is_valid said there is an error


def first_violation(kind: str, data: Any) -> tuple[str, str] | None:
    """The first violation (JSON pointer, message) of a document orv itself writes, for a refusal that
    needs no contributor's wording (shard partials); None when data satisfies the schema."""
    found = first_error(kind, data)
    return None if found is None else ("/" + "/".join(map(str, found[0])), found[1])


# Where a recipe names a catalog entry, and the catalog file that defines it.
CATALOG_FIELDS = {("model",): MODELS_PATH, ("hardware", "gpu"): HARDWARE_PATH, ("workload",): WORKLOADS_PATH}


class NameResolver(Protocol):
    """A catalog table's names -> ids (validator/registry/catalog.py NameTable)."""

    def resolve(self, name: str) -> str | None: ...


# field path -> the resolver of the catalog table that field names
CatalogNames = Mapping[tuple[str, ...], NameResolver]


def validate(kind: str, data: Any, names: CatalogNames | None = None) -> list[SchemaIssue]:
    """Schema issues of data, worded for a contributor; `names` lets a catalog name or alias written
    where an id belongs (`gpu: H100`) be answered with the id (`h100`)."""
    issues: dict[tuple[tuple[str | int, ...], str], SchemaIssue] = {}
    for error in validator_for(kind).iter_errors(data):
        for issue in _translate(kind, error, names or {}):
            issues.setdefault((issue.path, issue.code), issue)
    return _renames_for_missing_fields(
        sorted(issues.values(), key=lambda i: (len(i.path), [str(p) for p in i.path], i.code))
    )


def _renames_for_missing_fields(issues: list[SchemaIssue]) -> list[SchemaIssue]:
    """A required field that is missing because it was misspelled (`quantization:` for `quant:`):
    say so on the missing field too, not "add `quant:`" beside an unknown `quantization`."""
    meant = {
        (i.path[:-1], i.hint[len("did you mean `") : -2]): i.path[-1]
        for i in issues
        if i.code == "ORV103" and i.hint.startswith("did you mean `") and i.hint.endswith("`?")
    }
    out = []
    for issue in issues:
        for (parent, name), written in meant.items():
            if (
                issue.code == "ORV108"
                and issue.path == parent
                and issue.message.endswith(f"`{_fmt_path((*parent, name))}`")
            ):
                issue = SchemaIssue(
                    issue.code,
                    (*parent, written),
                    issue.message,
                    f"rename `{written}:` to `{name}:` (this file spells it `{written}`)",
                    at_key=True,
                )
        out.append(issue)
    return out


# --------------------------------------------------------------------------- translation

_VERSIONISH = {"version", "commit", "tool_version"}
# Hints are plain text; only the slug hint takes the suggested id, added by concatenation: a
# pattern or a value may hold braces, which str.format would read as fields (and crash on).
_SLUG = "^[a-z0-9]+(-[a-z0-9]+)*$"
_CATALOG_ID = "^[a-z0-9]+([.-][a-z0-9]+)*$"
_SLUG_HINTS = {
    _SLUG: "lower-case letters, digits and single hyphens, e.g. `",
    _CATALOG_ID: "lower-case letters and digits, with single dots or hyphens between them, e.g. `",
    "^sha256:[0-9a-f]{64}$": "write `sha256:` and the 64 lower-case hex digits that `orv add-run` printed",
    "^[0-9a-f]{64}$": "write the 64 lower-case hex digits of the SHA-256 (`sha256sum FILE`)",
    "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$": 'write the date as "YYYY-MM-DD", e.g. "2026-10-18"',
    "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]+)?)?"
    "(Z|[+-]([01][0-9]|2[0-3])(:?[0-5][0-9])?)?)?$": 'write an RFC 3339 time, e.g. "2026-10-18T14:05:09Z" (month 01-12, day 01-31, hour 00-23, minute and '
    "second 00-59, zone Z or ±HH:MM)",
}


def _slugify(value: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")[:96] or "my-recipe"


def _dotted_slug(value: str) -> str:
    return re.sub(r"[^a-z0-9]+", lambda m: "." if m.group() == "." else "-", value.lower()).strip("-.") or "my-id"


def _fmt_path(path: Sequence[str | int]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(document)"


def _closest_field(extra: str, allowed: list[str], missing: list[str]) -> str | None:
    """The field `extra` most likely means: a close spelling (difflib), else a field it starts with
    or that starts with it (`quantization` -> `quant`), preferring required fields still missing."""
    close = difflib.get_close_matches(extra, allowed, n=1, cutoff=0.6)
    if close:
        return close[0]
    low = extra.lower()
    for pool in (missing, allowed):
        stems = [a for a in pool if min(len(a), len(low)) >= 3 and (low.startswith(a) or a.startswith(low))]
        if stems:
            return max(stems, key=len)
    close = difflib.get_close_matches(extra, missing, n=1, cutoff=0.4)
    return close[0] if close else None


def _catalog_hint(path: tuple[str | int, ...], value: Any, names: CatalogNames) -> str | None:
    """`gpu: H100` -> the catalog id for what was written, when the catalog knows the name or alias."""
    where = CATALOG_FIELDS.get(tuple(str(p) for p in path))
    if where is None or not isinstance(value, str):
        return None
    table = names.get(tuple(str(p) for p in path))
    found = table.resolve(value) if table is not None else None
    if found is None:
        return None
    return f"the catalog id of `{value}` is `{found}` ({where}): write `{path[-1]}: {found}`"


def _translate(kind: str, error: jsonschema.ValidationError, names: CatalogNames) -> Iterator[SchemaIssue]:
    path = tuple(error.absolute_path)
    field = _fmt_path(path)
    validator = error.validator
    value = error.instance
    close: str | list[str] | None  # a closest field name, or difflib's matches
    hint: str | None

    if validator == "additionalProperties" and isinstance(value, dict):
        allowed = subschema_properties(kind, path)
        declared = set(error.schema.get("properties", {}))
        for extra in sorted(k for k in value if k not in declared):
            if not isinstance(extra, str):
                continue
            if extra == "tier":
                yield SchemaIssue(
                    "ORV116",
                    (*path, extra),
                    "`tier` is derived by orv, never declared",
                    "delete the `tier:` line; orv derives the tier from the run files on record",
                    at_key=True,
                )
                continue
            required = error.schema.get("required", [])
            close = _closest_field(extra, allowed, [r for r in required if r not in value])
            hint = (
                f"did you mean `{close}`?"
                if close
                else f"allowed here: {', '.join(allowed)}"
                if allowed and len(allowed) <= 12
                else "remove it, or put free text in `notes`"
            )
            yield SchemaIssue(
                "ORV103", (*path, extra), f"unknown field `{_fmt_path((*path, extra))}`", hint, at_key=True
            )
        return
    if validator == "propertyNames":
        return  # reported through the nested error with a better message
    if validator == "required":
        missing = re.findall(r"'([^']+)' is a required property", error.message)
        for name in missing or ["?"]:
            if kind.startswith("run-") and path == ("tool",) and name == "version":
                # SPEC §6 names "tool version missing" as a pinning rule; report it as one.
                yield SchemaIssue(
                    "ORV405",
                    path,
                    "run file's `tool` has no `version`",
                    "record the exact release of the tool that produced the run, "
                    '`"version": "<the exact release>"`, and store the run again with `orv add-run`',
                )
                continue
            hint = f"add `{name}:` here (see schema/{SCHEMA_FILES[kind]})"
            if kind.startswith("recipe-") and tuple(path) == ("claimed",):
                hint = _EMPTY_CLAIM_HINT
            yield SchemaIssue("ORV108", path, f"missing required field `{_fmt_path((*path, name))}`", hint)
        return
    if validator == "type":
        expected = error.validator_value
        last = path[-1] if path else ""
        if (
            isinstance(last, str)
            and last in _VERSIONISH
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
        ):
            hint = (
                f'quote it: `{last}: "<SHA exactly as git prints it>"` — an unquoted SHA of digits '
                "is read as a number and loses leading zeros"
                if last == "commit"
                else f'quote it: `{last}: "<exactly as released>"` — unquoted 0.30 is read as 0.3'
            )
            yield SchemaIssue("ORV105", path, f"`{field}` is a number ({value!r}), so YAML may have changed it", hint)
            return
        if tuple(path[-2:]) == ("launch", "args") and isinstance(value, str):
            # a command line written as one shell string: say which list it means (docs/protocols.md)
            tokens = value.split()
            yield SchemaIssue(
                "ORV104",
                path,
                "`launch.args` is one shell string; it must be a list of arguments",
                "write one item per token: ["
                + ", ".join(f'"{t}"' for t in tokens[:12])
                + (", …" if len(tokens) > 12 else "")
                + "]",
            )
            return
        yield SchemaIssue(
            "ORV104", path, f"`{field}` should be {_type_words(expected)}, not {_type_of(value)}", _type_hint(expected)
        )
        return
    if validator == "pattern" and "propertyNames" in error.schema_path and isinstance(value, str):
        # A key breaks the naming rule (e.g. `software: {Engine: …}`): point at that key.
        suggestion = re.sub(r"[^a-z0-9_]+", "_", value.lower()).strip("_")
        yield SchemaIssue(
            "ORV109",
            (*path, value),
            f"`{_fmt_path((*path, value))}`: key `{value}` is not allowed",
            f"name it in lower case with letters, digits and `_`: `{suggestion or 'engine'}:`",
            at_key=True,
        )
        return
    if validator == "pattern":
        hint = _catalog_hint(path, value, names)
        if hint is None:
            hint = _SLUG_HINTS.get(error.validator_value, f"must match {error.validator_value}")
            if error.validator_value == _SLUG:
                hint += _slugify(str(value)) + "`"
            elif error.validator_value == _CATALOG_ID:
                hint += _dotted_slug(str(value)) + "`"
        yield SchemaIssue("ORV109", path, f"`{field}` has an invalid value {value!r}", hint)
        return
    if validator in ("enum", "const"):
        allowed = error.validator_value if validator == "enum" else [error.validator_value]
        close = difflib.get_close_matches(str(value), [str(a) for a in allowed], n=1, cutoff=0.5)
        hint = f"did you mean `{close[0]}`?" if close else f"use one of: {', '.join(map(str, allowed))}"
        yield SchemaIssue("ORV109", path, f"`{field}` has an invalid value {value!r}", hint)
        return
    if validator in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        yield SchemaIssue(
            "ORV109", path, f"`{field}` is out of range: {error.message}", "use a value inside the allowed range"
        )
        return
    if validator == "minProperties" and kind.startswith("recipe-") and tuple(path) == ("claimed",):
        # a recipe from `orv new` has `claimed: {}` until its first run is attached
        yield SchemaIssue("ORV109", path, f"`{field}` states no figure yet", _EMPTY_CLAIM_HINT)
        return
    if validator in ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "uniqueItems"):
        yield SchemaIssue(
            "ORV109",
            path,
            f"`{field}`: {error.message}",
            "remove the repeated entry" if validator == "uniqueItems" else "adjust the size of this value",
        )
        return
    yield SchemaIssue("ORV109", path, f"`{field}`: {error.message}", "see the schema for this field")


def _type_words(expected: Any) -> str:
    names: list[str] = expected if isinstance(expected, list) else [expected]
    words = {
        "string": "text",
        "integer": "a whole number",
        "number": "a number",
        "object": "a mapping",
        "array": "a list",
        "boolean": "true or false",
        "null": "null",
    }
    return " or ".join(words.get(n, n) for n in names)


def _type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int):
        return "a whole number"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if value is None:
        return "null"
    # YAML 1.1 tags libyaml constructs (the loader refuses them; this words any that get through)
    if isinstance(value, (bytes, bytearray)):
        return "binary data (a YAML `!!binary` value)"
    if isinstance(value, (set, frozenset)):
        return "a set (a YAML `!!set` value)"
    return f"a {type(value).__name__} value"


def _type_hint(expected: Any) -> str:
    if expected == "string":
        return "quote the value so YAML keeps it as text"
    if expected in ("integer", "number"):
        return "write a plain number without quotes or units"
    if expected == "object":
        return "write `key: value` pairs indented under this field"
    if expected == "array":
        return "write a list: `- item` lines, or [a, b]"
    return "fix the value's type"
