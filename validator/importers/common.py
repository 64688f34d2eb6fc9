"""What both importers share: reading the seed source, input errors, figures at hand-entered precision."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

from validator.errors import ImportInputError, InputFileError
from validator.load.contributor import SEED_SOURCE, read_named


def read_source(path: str) -> bytes:
    """The seed file through the bounded reader (docs/limits.md): a regular file within its budget."""
    try:
        return read_named(path, SEED_SOURCE)
    except InputFileError as exc:
        raise ImportInputError(exc.code, path, exc.message, exc.hint, exc.line, exc.col) from None


def decode_source(path: str, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ImportInputError(
            "ORV110", path, f"the source is not UTF-8 (byte {exc.start})", "save the export as UTF-8", line
        ) from None


def round_figure(value: float | int, places: int = 2) -> float | int:
    """A claimed figure at the precision people enter by hand: integers stay, floats to `places`."""
    if isinstance(value, int):
        return value
    quantized = Decimal(repr(value)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN)
    return float(quantized)
