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


def _may_differ_from_jcs(raw: bytes) -> bool:
    """Could orjson's number formatting differ from JCS's somewhere in raw?

    orjson writes integral floats as "1.0" (JCS: "1") and large/small ones with an exponent,
    "1e+16" (JCS: "10000000000000000"), "3e-6" (JCS: "0.000003"). Shortest round-trip digits are otherwise the same. Plain
    substring searches (memchr speed) find both; a hit inside a string only costs the slow path.
    """
    if b".0," in raw or b".0]" in raw or b".0}" in raw or raw.endswith(b".0"):
        return True
    if b".0000" in raw:  # JCS writes 1e-6 <= |x| < 1e-4 in plain decimals, orjson with an exponent
        return True
    for marker in (b"e+", b"e-", b"E+", b"E-"):
        i = raw.find(marker)
        while i > 0:
            if raw[i - 1] in _DIGITS:
                return True
            i = raw.find(marker, i + 1)
    return False


def canonical_bytes(document: Any) -> bytes:
    """The RFC 8785 serialization: the exact bytes a run file must contain."""
    return rfc8785.dumps(document)


def content_address(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def run_path(digest: str) -> str:
    return f"runs/{digest[:2]}/{digest}.json"


def is_canonical(raw: bytes, document: Any) -> bool:
    """True when raw is exactly the JCS form of document.

    Fast path: orjson with sorted keys matches JCS byte for byte unless a number is integral-float
    or exponent-formatted, or a key needs UTF-16 ordering (non-ASCII); only then use rfc8785.
    """
    if raw.isascii() and not _may_differ_from_jcs(raw):
        try:
            return orjson.dumps(document, option=orjson.OPT_SORT_KEYS) == raw
        except TypeError:
            pass
    try:
        return canonical_bytes(document) == raw
    except (rfc8785.CanonicalizationError, ValueError, TypeError):
        return False
