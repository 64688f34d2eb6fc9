"""One seeded odd edit inside a tool's JSON output: the adapters' mutation tests share the walk."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st


def odd_edit(data: st.DataObject, doc: Any, odd: Sequence[Any]) -> None:
    """Walk down `doc` up to four levels by drawn keys and replace one value with a drawn odd one
    (deep-copied: the odd values' lists and dicts are shared between examples)."""
    for _ in range(data.draw(st.integers(1, 4))):
        keys = list(doc) if isinstance(doc, dict) else []
        if not keys:
            return
        key = data.draw(st.sampled_from(keys))
        if isinstance(doc[key], dict) and data.draw(st.booleans()):
            doc = doc[key]
            continue
        doc[key] = copy.deepcopy(data.draw(st.sampled_from(list(odd))))
        return
