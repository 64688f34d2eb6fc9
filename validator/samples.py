"""A run's raw samples as columns, pulled out once per file and shared by the schema fast path,
the recomputed figures and the copy fingerprint (each used to pull the same columns out again)."""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Sequence


class Columns:
    """Column `key` of a samples list: every sample's value at `key`, in sample order.

    Each column is read once, on first use, by one C-level itemgetter pass; `None` when a sample
    is not a mapping or lacks the key. `types(key)` is the set of the column's value types.
    """

    __slots__ = ("samples", "_values", "_types", "_shape")

    def __init__(self, samples: Sequence[Any]) -> None:
        self.samples = samples
        self._values: dict[str, list[Any] | None] = {}
        self._types: dict[str, frozenset[type]] = {}
        self._shape: tuple[frozenset[type], frozenset[int]] | None = None

    def shape(self) -> tuple[frozenset[type], frozenset[int]]:
        """The types of the samples themselves, and their lengths when all are mappings."""
        if self._shape is None:
            kinds = frozenset(map(type, self.samples))
            self._shape = kinds, frozenset(map(len, self.samples)) if kinds == {dict} else frozenset()
        return self._shape

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
