"""Canonical JSON (RFC 8785 / JCS) and the SHA-256 content address of run files."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import orjson
import rfc8785

RUN_REF = re.compile(r"^sha256:([0-9a-f]{64})$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")

_DIGITS = frozenset(b"0123456789")
# ".0" then , ] or }: one regex pass with its literal-prefix search is ~4x three substring scans
_INTEGRAL_FLOAT = re.compile(rb"\.0[,\]}]")
# "e" then a sign: one pass, ~2x two substring scans; orjson never writes "E"
_EXPONENT = re.compile(rb"e[+-]")


def _may_differ_from_jcs(raw: bytes) -> bool:
    """Could orjson's number formatting equal raw where JCS's does not?

    orjson writes integral floats as "1.0" (JCS: "1") and some numbers with an exponent where JCS
    does not, "1e+16" (JCS: "10000000000000000"), "3e-6" (JCS: "0.000003"); shortest round-trip
    digits are otherwise the same. Such a number in raw is found by literal searches (a regex with
    alternatives or a character class in front is ~10x slower); a hit inside a string only costs
    the slow path, never a wrong answer. The reverse, JCS's "0.000003" in raw, needs no search:
    orjson writes that number otherwise, so the comparison itself fails and rfc8785 decides.
    """
    if _INTEGRAL_FLOAT.search(raw) or raw.endswith(b".0"):
        return True
    return any(m.start() > 0 and raw[m.start() - 1] in _DIGITS for m in _EXPONENT.finditer(raw))


def canonical_bytes(document: Any) -> bytes:
    """The RFC 8785 serialization: the exact bytes a run file must contain."""
    try:
        return rfc8785.dumps(document)
    except rfc8785.IntegerDomainError:
        # JCS writes an integral double such as 2.0**60 without a fraction; read back, it is a
        # Python int beyond 2^53 that rfc8785 refuses. JCS numbers are doubles, so use the double.
        return rfc8785.dumps(_as_doubles(document))


_JCS_INT_MAX = 2**53 - 1


def _as_doubles(value: Any) -> Any:
    """Integers beyond ±(2^53 - 1) that are JCS's text of a double, as that double; others unchanged."""
    if isinstance(value, dict):
        return {k: _as_doubles(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_doubles(v) for v in value]
    if type(value) is int and abs(value) > _JCS_INT_MAX:
        try:
            as_double = float(value)
        except OverflowError:
            return value
        # ES6 prints the shortest digits that round-trip (2.2543873907179048e16 -> 22543873907179050)
        return as_double if rfc8785.dumps(as_double) == str(value).encode() else value
    return value


def content_address(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def run_path(digest: str) -> str:
    return f"runs/{digest[:2]}/{digest}.json"


# UTF-8 lead bytes of U+E000..U+FFFF and of U+10000 and above: the only code points whose order
# differs between UTF-16 code units (JCS sorts keys so) and code points (orjson sorts keys so).
_LEAD_E000_FFFF = re.compile(rb"[\xee\xef]")
_LEAD_SUPPLEMENTARY = re.compile(rb"[\xf0-\xf4]")


def _key_order_may_differ(raw: bytes) -> bool:
    """Could a key order by code point (orjson) differ from JCS's UTF-16 order somewhere in raw?
    Only if raw holds both a character in U+E000..U+FFFF and one beyond U+FFFF."""
    return not raw.isascii() and bool(_LEAD_SUPPLEMENTARY.search(raw)) and bool(_LEAD_E000_FFFF.search(raw))


def is_canonical(raw: bytes, document: Any) -> bool:
    """True when raw is exactly the JCS form of document.

    Fast path, for any UTF-8: orjson with sorted keys matches JCS byte for byte (strings are escaped
    identically for every code point: tests/unit/test_hashing.py) unless a number is integral-float or
    exponent-formatted, or keys could sort differently by UTF-16 code units; only then use rfc8785.
    The fast path can only confirm: orjson writes 0.000001 as 1e-6 and 1e16 in exponent form
    where JCS does not, so a mismatch is settled by rfc8785.
    """
    if not _may_differ_from_jcs(raw) and not _key_order_may_differ(raw):
        try:
            # STRICT_INTEGER: an integer beyond 2^53 raises here, so rfc8785 decides it.
            if orjson.dumps(document, option=orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER) == raw:
                return True
        except TypeError:
            pass
    try:
        return canonical_bytes(document) == raw
    except (rfc8785.CanonicalizationError, ValueError, TypeError):
        return False
