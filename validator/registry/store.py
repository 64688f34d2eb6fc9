"""Writing run files into the registry: validated, canonical, stored under their content address."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from validator.diagnostics import Diagnostic, Result, Severity
from validator.errors import AddRunError, LoadError
from validator.files.atomic import write_atomic
from validator.git.sparse import materialize
from validator.hashing import canonical_bytes, content_address, run_path
from validator.load.documents import (
    Document,
    decode_utf8,
    find_duplicate_json_keys,
    parse_json,
)
from validator.load.pipeline import validate_run_data
from validator.load.run_budget import over_budget
from validator.science.consistency import inconsistencies


@dataclass(frozen=True)
class StoredRun:
    digest: str
    path: str  # repository-relative
    created: bool


def store_run_document(root: str, document: Any, source: str | None = None) -> StoredRun:
    """Canonicalise an already-validated run document and store it under its content address; refused
    (ORV211, naming `source`, the file given to add-run) when it is over its kind's budget."""
    raw = canonical_bytes(document)
    digest = content_address(raw)
    rel = run_path(digest)
    over = over_budget(document.get("kind") if isinstance(document, dict) else None, len(raw))
    if over is not None:
        raise AddRunError(Result((Diagnostic("ORV211", Severity.ERROR, source or rel, 1, 1, *over),)))
    full = os.path.join(root, rel)
    materialize(root, [rel])  # a sparse checkout shows it if git has it, and keeps it once written
    if os.path.lexists(full):
        with open(full, "rb") as fh:
            existing = fh.read()
        if existing != raw:
            raise AddRunError(
                Result(
                    (
                        Diagnostic(
                            "ORV201",
                            Severity.ERROR,
                            rel,
                            1,
                            1,
                            f"{rel} exists with different bytes (sha256 {content_address(existing)})",
                            "the stored file was altered; restore it from git instead of overwriting it",
                        ),
                    )
                )
            )
        return StoredRun(digest, rel, False)
    write_atomic(full, raw)
    return StoredRun(digest, rel, True)


def add_run(root: str, raw: bytes, source_name: str = "-") -> StoredRun:
    """Parse, validate and store a run document given as JSON bytes (any key order or spacing)."""
    try:
        data = parse_json(raw, decode_utf8(raw))
        find_duplicate_json_keys(decode_utf8(raw))
    except LoadError as exc:
        raise AddRunError(
            Result((Diagnostic(exc.code, Severity.ERROR, source_name, exc.line, exc.col, exc.message, exc.hint),))
        ) from None
    issues = validate_run_data(data)
    if issues:
        doc = Document(source_name, data, decode_utf8(raw))
        diags = tuple(
            Diagnostic(i.code, Severity.ERROR, source_name, *doc.locate(i.path), i.message, i.hint) for i in issues
        )
        raise AddRunError(Result(diags))
    refuse_inconsistent(data, source_name, Document(source_name, data, decode_utf8(raw)))
    return store_run_document(root, data, source_name)


def refuse_inconsistent(document: Any, source_name: str, located: Document | None = None) -> None:
    """Refuse a run whose own fields disagree (ORV212-ORV214), as `orv check` would report the stored
    file: a run document located in its own text, a tool's converted output at its file's first line."""
    found = inconsistencies(document) if isinstance(document, dict) else []
    if found:
        raise AddRunError(
            Result(
                tuple(
                    Diagnostic(
                        i.code,
                        Severity.ERROR,
                        source_name,
                        *(located.locate(i.at) if located is not None else (1, 1)),
                        i.message,
                        i.hint,
                    )
                    for i in found
                )
            )
        )
