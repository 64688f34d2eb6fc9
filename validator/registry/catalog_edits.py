"""Edits orv makes to the catalog: a new model, a model's quality and convergence references (catalog/models.yaml);
a new GPU or CPU host (catalog/hardware.yaml)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from validator.files import yamledit
from validator.files.atomic import write_atomic, writer_lock
from validator.registry.layout import HARDWARE_PATH, MODELS_PATH


def models_text(root: str) -> str:
    """catalog/models.yaml's text, to edit round-trip (OSError when it cannot be read)."""
    with open(os.path.join(root, MODELS_PATH), encoding="utf-8") as fh:
        return fh.read()


def write_models(root: str, text: str) -> None:
    write_atomic(os.path.join(root, MODELS_PATH), text.encode("utf-8"))


def hardware_text(root: str) -> str:
    """catalog/hardware.yaml's text, to edit round-trip (OSError when it cannot be read)."""
    with open(os.path.join(root, HARDWARE_PATH), encoding="utf-8") as fh:
        return fh.read()


def write_hardware(root: str, text: str) -> None:
    write_atomic(os.path.join(root, HARDWARE_PATH), text.encode("utf-8"))


def set_model_references(root: str, model: str, field: str, refs: Mapping[str, str]) -> None:
    """Write `field: {key: sha256:…}` (quality_reference by task, convergence_reference by workload) into
    the model's entry of catalog/models.yaml, round-trip (comments, order kept), while no other orv
    writes it. Raises OSError, KeyError (no such model), TypeError or yamledit.EditError; nothing is
    written then."""

    def change(data: Any) -> None:
        entry = data["models"][model]
        if not isinstance(entry.get(field), dict):
            entry[field] = CommentedMap()
        for key, ref in sorted(refs.items()):
            entry[field][key] = DoubleQuotedScalarString(ref)

    with writer_lock(root):
        write_models(root, yamledit.edit(models_text(root), change))
