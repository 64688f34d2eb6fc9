"""Edits orv makes to catalog/models.yaml: a model's quality and convergence references."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from validator.files import yamledit
from validator.files.atomic import write_atomic, writer_lock

MODELS_PATH = "catalog/models.yaml"


def set_model_references(root: str, model: str, field: str, refs: Mapping[str, str]) -> None:
    """Write `field: {key: sha256:…}` (quality_reference by task, convergence_reference by workload) into
    the model's entry of catalog/models.yaml, round-trip (comments, order kept), while no other orv
    writes it. Raises OSError, KeyError (no such model), TypeError or yamledit.EditError; nothing is
    written then."""
    full = os.path.join(root, MODELS_PATH)

    def change(data: Any) -> None:
        entry = data["models"][model]
        if not isinstance(entry.get(field), dict):
            entry[field] = CommentedMap()
        for key, ref in sorted(refs.items()):
            entry[field][key] = DoubleQuotedScalarString(ref)

    with writer_lock(root):
        with open(full, encoding="utf-8") as fh:
            original = fh.read()
        edited = yamledit.edit(original, change)
        write_atomic(full, edited.encode("utf-8"))
