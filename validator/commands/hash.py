"""`orv hash FILE`: the content address under which `orv add-run FILE` stores FILE (and when there is none)."""

from __future__ import annotations

from validator.adapters.detect import RUN, detect
from validator.commands.outcome import Outcome
from validator.errors import LoadError
from validator.hashing import canonical_bytes, content_address, is_canonical
from validator.load.documents import decode_utf8, parse_json


def hash_file(file: str, exact_bytes: bool) -> Outcome:
    """The bytes' own SHA-256 for a canonical run document, a tool's output or --bytes; else the canonical form's."""
    outcome = Outcome()
    with open(file, "rb") as fh:
        raw = fh.read()
    own = f"sha256:{content_address(raw)}"
    found = detect(raw)
    if exact_bytes or found is None:
        outcome.out(own)
        return outcome
    if found.fmt != RUN:
        outcome.out(own)
        outcome.note(
            f"note: {file} is {found.what}; this is the hash of its bytes, not a run address: "
            f"`orv add-run --from {found.fmt} --recipe …` converts it and prints the address it stores "
            "the run under"
        )
        return outcome
    try:
        data = parse_json(raw, decode_utf8(raw))
    except LoadError:
        outcome.out(own)
        return outcome
    if is_canonical(raw, data):
        outcome.out(own)
        return outcome
    outcome.out(f"sha256:{content_address(canonical_bytes(data))}")
    outcome.note(
        f"note: {file} is not canonical JSON (RFC 8785): the address above is that of the canonical form "
        f"`orv add-run` writes; the file's own bytes hash to {own} (--bytes prints that)"
    )
    return outcome
