"""Edits orv makes to the catalog: a new model, a model's quality and convergence references (catalog/models.yaml);
a new GPU or CPU host (catalog/hardware.yaml)."""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from typing import Any

from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from validator.errors import LoadError
from validator.files import yamledit
from validator.files.atomic import write_atomic, writer_lock
from validator.load.documents import MAX_YAML_BYTES, decode_utf8, read_bytes
from validator.registry.layout import HARDWARE_PATH, MODELS_PATH


def _catalog_text(root: str, rel: str) -> str:
    """A catalog file's text through the loader's own read (no link followed, a regular file only — never a
    FIFO's endless wait or /dev/zero's endless read —, within the YAML size limit, UTF-8); OSError naming
    why when it cannot be read, as the callers expect of a read."""
    try:
        return decode_utf8(read_bytes(root, rel, MAX_YAML_BYTES))
    except LoadError as exc:
        raise OSError(errno.EINVAL, exc.message) from None


def models_text(root: str) -> str:
    """catalog/models.yaml's text, to edit round-trip (OSError when it cannot be read)."""
    return _catalog_text(root, MODELS_PATH)


def write_models(root: str, text: str) -> None:
    write_atomic(os.path.join(root, MODELS_PATH), text.encode("utf-8"))


def hardware_text(root: str) -> str:
    """catalog/hardware.yaml's text, to edit round-trip (OSError when it cannot be read)."""
    return _catalog_text(root, HARDWARE_PATH)


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
