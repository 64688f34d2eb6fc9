"""A run's raw samples as columns, pulled out once per file and shared by the schema fast path,
the recomputed figures and the copy fingerprint (each used to pull the same columns out again)."""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Any


class Columns:
    """Column `key` of a samples list: every sample's value at `key`, in sample order.

    Each column is read once, on first use, by one C-level itemgetter pass; `None` when a sample
    is not a mapping or lacks the key. `types(key)` is the set of the column's value types.
    """

    __slots__ = ("samples", "_values", "_types", "_sorted", "_bounds", "_key_count")

    def __init__(self, samples: Sequence[Any]) -> None:
        self.samples = samples
        self._values: dict[str, list[Any] | None] = {}
        self._types: dict[str, frozenset[type]] = {}
        self._sorted: dict[str, list[Any]] = {}
        self._bounds: dict[str, tuple[Any, Any]] = {}
        self._key_count: int | None = None

    def get(self, key: str) -> list[Any] | None:
        try:
            return self._values[key]
        except KeyError:
            pass
        try:
            values: list[Any] | None = list(map(itemgetter(key), self.samples))
        except (KeyError, TypeError, IndexError):  # a sample without the key, or not a mapping
            values = None
        self._values[key] = values
        return values

    def types(self, key: str) -> frozenset[type]:
        """The types of the column's values (empty when the column does not exist)."""
        found = self._types.get(key)
        if found is None:
            values = self.get(key)
            found = self._types[key] = frozenset(map(type, values)) if values is not None else frozenset()
        return found

    def holds(self, keys: Sequence[str]) -> bool:
        """Is every sample a mapping holding (at least) these keys? Each column then exists."""
        return all(self.get(key) is not None for key in keys)

    def holds_exactly(self, keys: Sequence[str]) -> bool:
        """Is every sample a mapping with exactly these keys? The total key count of samples holding
        them all rules out any other key."""
        return self.holds(keys) and self.key_count() == len(keys) * len(self.samples)

    def key_count(self) -> int:
        """The number of keys over all samples; only once every sample is known to be a mapping."""
        if self._key_count is None:
            self._key_count = sum(map(len, self.samples))
        return self._key_count

    def ordered(self, key: str) -> list[Any]:
        """The column sorted, once: for a column whose values compare (the caller checked its types)."""
        found = self._sorted.get(key)
        if found is None:
            found = self._sorted[key] = sorted(self.get(key) or ())
        return found

    def sorted_already(self, key: str, ordered: Sequence[Any]) -> None:
        """`ordered` is the column sorted (a caller sorted it on the way to something else): ordered() returns it."""
        self._sorted.setdefault(key, list(ordered))

    def bounds(self, key: str) -> tuple[Any, Any]:
        """The lowest and the highest value of a non-empty column whose values compare: the ends of the
        sorted column when it was sorted already (no further pass), else min and max, once (the schema's
        fast path and the copy fingerprint both ask for a request's token counts)."""
        found = self._sorted.get(key)
        if found is not None:
            return found[0], found[-1]
        known = self._bounds.get(key)
        if known is None:
            values = self.get(key) or ()
            known = self._bounds[key] = (min(values), max(values))
        return known
