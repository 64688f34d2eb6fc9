"""`orv catalog add-model`: a catalog/models.yaml entry from a Hugging Face config.json, written in place with ruamel;
`orv catalog add-host`: a catalog/hardware.yaml entry for a GPU or CPU host the catalog lacks, from its datasheet.

The figures come from validator/science/params.py (one formula, documented there); the file is
edited with ruamel.yaml's round-trip mode, so every other entry, comment and quote stays as it was.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from validator.commands.outcome import Outcome
from validator.errors import InputFileError, LocatedError, Refusal
from validator.files import yamledit
from validator.files.atomic import writer_lock
from validator.load import schema as schemas
from validator.load.contributor import HF_CONFIG, parse_json, read_named
from validator.load.documents import locate_json
from validator.registry.catalog_edits import hardware_text, models_text, write_hardware, write_models
from validator.registry.layout import HARDWARE_PATH, MODELS_PATH
from validator.science.params import ConfigError, ParamCount, count

MODELS = MODELS_PATH  # the path messages name
CATALOG_ID = re.compile(r"^[a-z0-9]+([.-][a-z0-9]+)*$")
# The family a config's model_type belongs to, when --family is not given.
FAMILY_OF = {
    "llama": "Llama",
    "mistral": "Mistral",
    "mixtral": "Mistral",
    "qwen2": "Qwen",
    "qwen2_moe": "Qwen",
    "qwen3": "Qwen",
    "qwen3_moe": "Qwen",
    "deepseek_v2": "DeepSeek",
    "deepseek_v3": "DeepSeek",
    "gemma": "Gemma",
    "gemma2": "Gemma",
    "gemma3": "Gemma",
    "gpt_oss": "GPT-OSS",
    "glm4_moe": "GLM",
    "phi3": "Phi",
    "olmoe": "OLMo",
    "granitemoe": "Granite",
    "kimi_k2": "Kimi",
}


class CatalogToolError(Refusal):
    """Why the model cannot be added, when the invocation is at fault (an id, a family): exit 2."""


class CatalogFileError(LocatedError):
    """Why the model cannot be added, when a file is at fault (config.json, the catalog): a finding, exit 1."""

    def __init__(self, message: str, hint: str, path: str, code: str = "ORV109", line: int = 1, col: int = 1) -> None:
        super().__init__(code, path, message, hint, line, col)


@dataclass(frozen=True)
class AddedModel:
    model_id: str
    entry: dict[str, Any]
    counted: ParamCount


def billions(n: int) -> float:
    """Parameters in billions to 10 million (the precision model cards publish, and a little more), and to
    three significant digits below 1 billion: a 135M model is 0.135, not 0.13 (4% off, where the identity
    checks allow 10%), and a model under 5M parameters is not 0.0 (refused by the schema)."""
    billions_ = n / 1e9
    if billions_ <= 0:
        return 0.0
    return round(billions_, max(2, 2 - math.floor(math.log10(billions_))))


@dataclass(frozen=True)
class Config:
    """A config.json as read: its data, bytes (for locations) and digest."""

    path: str
    data: dict[str, Any]
    raw: bytes

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()

    def where(self, field: str) -> tuple[int, int]:
        """Line and column of `field`, inside text_config when the language model is nested there."""
        inner = self.data.get("text_config")
        nested = isinstance(inner, dict) and "hidden_size" in inner and field in inner
        return locate_json(self.raw.decode("utf-8", "replace"), ("text_config", field) if nested else (field,))


def read_config(path: str) -> Config:
    """config.json through the bounded reader (docs/limits.md): a regular file within its budget, bounded JSON."""
    try:
        raw = read_named(path, HF_CONFIG)
        config = parse_json(path, raw)
    except InputFileError as exc:
        raise CatalogFileError(exc.message, exc.hint, exc.path, exc.code, exc.line, exc.col) from None
    if not isinstance(config, dict):
        raise CatalogFileError(
            f"{path} is not a JSON object", "pass the model's config.json, unchanged", path, "ORV104"
        )
    return Config(path, config, raw)


def entry_for(read: Config, name: str, family: str, sources: Sequence[str] = ()) -> tuple[dict[str, Any], ParamCount]:
    try:
        counted = count(read.data)
    except ConfigError as exc:
        raise CatalogFileError(
            str(exc),
            "pass the model's own config.json (Hugging Face format), unchanged",
            read.path,
            "ORV109",
            *read.where(exc.field),
        ) from None
    digest = read.digest
    arch = counted.architecture
    shape: dict[str, Any] = {
        "hidden_size": arch.hidden_size,
        "attention_heads": arch.heads,
        "kv_heads": arch.kv_heads,
        "attention": arch.attention,
        "vocab_size": arch.vocab,
    }
    if arch.experts is not None:
        shape.update(experts=arch.experts, experts_per_token=arch.experts_per_token)
        if arch.shared_experts:
            shape["shared_experts"] = arch.shared_experts
        shape["moe_layers"] = arch.moe_layers
    if arch.tied_embeddings:
        shape["tied_embeddings"] = True
    shape["source"] = f"config.json sha256:{digest[:16]}"
    entry: dict[str, Any] = {
        "name": name,
        "family": family,
        "params_b": billions(counted.total),
        "active_b": billions(counted.active),
        "moe": counted.moe,
        "layers": arch.layers,
        "layers_source": "config.json num_hidden_layers",
        "architecture": shape,
        "sources": [
            *sources,
            f"config.json sha256:{digest[:16]}: parameters counted by `orv catalog add-model` "
            f"(validator/science/params.py): {counted.total:,} total, {counted.active:,} active",
        ],
    }
    return entry, counted


def add_model(
    root: str,
    config_path: str,
    model_id: str,
    family: str | None = None,
    name: str | None = None,
    sources: Sequence[str] = (),
    dry_run: bool = False,
) -> AddedModel:
    """Append the model to catalog/models.yaml (in place, everything else kept); CatalogToolError or CatalogFileError if it cannot."""
    if not CATALOG_ID.match(model_id) or len(model_id) > 96:
        raise CatalogToolError(
            f"`{model_id}` is not a catalog id",
            "lower-case letters and digits, parts joined by `-` or `.`, e.g. llama-3.1-8b",
        )
    read = read_config(config_path)
    config = read.data
    inner = config.get("text_config")
    model_type = str((inner if isinstance(inner, dict) else {}).get("model_type") or config.get("model_type", ""))
    family = family or FAMILY_OF.get(model_type)
    if not family:
        raise CatalogToolError(
            f"no family known for model_type `{model_type[:60]}`", "pass --family, e.g. --family Llama"
        )
    entry, counted = entry_for(read, name or model_id, family, sources)
    with writer_lock(root):  # read, edit and write models.yaml while no other orv writes it
        _append_model(root, model_id, entry, dry_run, config_path)
    return AddedModel(model_id, entry, counted)


def _append_model(root: str, model_id: str, entry: dict[str, Any], dry_run: bool, config_path: str) -> None:
    try:
        original = models_text(root)
    except OSError as exc:
        raise CatalogFileError(
            f"cannot read {MODELS}: {exc.strerror}", "run from the registry (or pass --root)", MODELS, "ORV110"
        ) from None

    def change(data: Any) -> None:
        models = data.get("models")
        if not isinstance(models, CommentedMap):
            raise CatalogFileError(f"{MODELS} has no `models:` mapping", "restore the file from git", MODELS, "ORV108")
        taken = {k.lower() for k in models}
        if model_id.lower() in taken:
            raise CatalogToolError(f"`{model_id}` is in {MODELS} already", "edit its entry, or choose another --id")
        node = CommentedMap(entry)
        shape = CommentedMap(entry["architecture"])
        shape.fa.set_flow_style()
        node["architecture"] = shape
        node["sources"] = CommentedSeq(entry["sources"])
        models[model_id] = node

    try:
        edited = yamledit.edit(original, change)
    except yamledit.EditError as exc:
        raise CatalogFileError(f"{MODELS} cannot be edited safely: {exc}", "fix the file, then retry", MODELS) from None
    issues = schemas.validate("catalog-models", yaml.safe_load(edited))
    if issues:
        raise CatalogFileError(
            f"the entry {config_path} gives does not fit the catalog schema: {issues[0].message}",
            issues[0].hint,
            config_path,
            issues[0].code,
        )
    if not dry_run:
        write_models(root, edited)


def add_model_command(
    root: str,
    config_path: str,
    model_id: str,
    family: str | None,
    name: str | None,
    sources: Sequence[str],
    dry_run: bool,
) -> Outcome:
    """`orv catalog add-model`: add (or with dry_run, show) the entry and say what was counted. A file at fault
    (CatalogFileError) or a bad invocation (CatalogToolError) ends it through cli/error_handler.py."""
    outcome = Outcome()
    added = add_model(root, config_path, model_id, family, name, sources, dry_run=dry_run)
    e = added.entry
    experts = (
        f", {e['architecture']['experts']} experts ({e['architecture']['experts_per_token']} per token)"
        if e["moe"]
        else ""
    )
    outcome.out(
        f"{'would add' if dry_run else 'added'} {model_id} to {MODELS}: {e['params_b']}B parameters, "
        f"{e['active_b']}B active, {e['layers']} layers{experts}"
    )
    return outcome


@dataclass(frozen=True)
class Host:
    """A GPU or CPU host as its vendor's datasheet gives it (docs/contributing.md, "Adding a GPU")."""

    host_id: str
    name: str
    vendor: str
    device: str  # gpu or cpu
    memory_gib: float
    memory_tb_s: float
    memory_kind: str
    sources: tuple[str, ...]
    bf16_dense_tflops: float | None = None
    aliases: tuple[str, ...] = ()


def add_host_command(root: str, host: Host, dry_run: bool) -> Outcome:
    """`orv catalog add-host`: append the entry to catalog/hardware.yaml (everything else kept byte for byte),
    checked by the catalog schema first; a recipe can then name it (`orv new --gpu ID`)."""
    if not CATALOG_ID.match(host.host_id) or len(host.host_id) > 96:
        raise CatalogToolError(
            f"`{host.host_id}` is not a catalog id",
            "lower-case letters and digits, parts joined by `-` or `.`, e.g. rtx-4090 or epyc-9654",
        )
    if not host.sources:
        raise CatalogToolError(
            "a catalog entry cites where its figures come from", "pass --source URL (the vendor's datasheet)"
        )
    entry: dict[str, Any] = {"name": host.name, "vendor": host.vendor}
    if host.device == "cpu":
        entry["device"] = "cpu"  # an entry without it is a GPU
    if host.bf16_dense_tflops is not None:
        entry["bf16_dense_tflops"] = host.bf16_dense_tflops
    entry.update(hbm_gib=host.memory_gib, hbm_tb_s=host.memory_tb_s, memory_kind=host.memory_kind)
    if host.aliases:
        entry["aliases"] = list(host.aliases)
    entry["sources"] = list(host.sources)
    with writer_lock(root):  # read, edit and write hardware.yaml while no other orv writes it
        try:
            original = hardware_text(root)
        except OSError as exc:
            raise CatalogFileError(
                f"cannot read {HARDWARE_PATH}: {exc.strerror}",
                "run from the registry (or pass --root)",
                HARDWARE_PATH,
                "ORV110",
            ) from None

        def change(data: Any) -> None:
            table = data.get("hardware")
            if not isinstance(table, CommentedMap):
                raise CatalogFileError(
                    f"{HARDWARE_PATH} has no `hardware:` mapping", "restore the file from git", HARDWARE_PATH, "ORV108"
                )
            if host.host_id.lower() in {k.lower() for k in table}:
                raise CatalogToolError(
                    f"`{host.host_id}` is in {HARDWARE_PATH} already", "edit its entry, or choose another --id"
                )
            node = CommentedMap(entry)
            if "aliases" in entry:
                aliases = CommentedSeq(entry["aliases"])
                aliases.fa.set_flow_style()
                node["aliases"] = aliases
            node["sources"] = CommentedSeq(entry["sources"])
            table[host.host_id] = node

        try:
            edited = yamledit.edit(original, change)
        except yamledit.EditError as exc:
            raise CatalogFileError(
                f"{HARDWARE_PATH} cannot be edited safely: {exc}", "fix the file, then retry", HARDWARE_PATH
            ) from None
        issues = schemas.validate("catalog-hardware", yaml.safe_load(edited))
        if issues:
            raise CatalogToolError(f"the entry does not fit the catalog schema: {issues[0].message}", issues[0].hint)
        if not dry_run:
            write_hardware(root, edited)
    outcome = Outcome()
    kind = "CPU host" if host.device == "cpu" else "GPU"
    outcome.out(f"{'would add' if dry_run else 'added'} {kind} {host.host_id} to {HARDWARE_PATH}: {host.name}")
    outcome.note(
        f"next: orv new inference --gpu {host.host_id} …; a maintainer checks the figures against the sources "
        "(ORV606): commit the catalog with the recipe (`git add recipes runs catalog`)"
    )
    return outcome
