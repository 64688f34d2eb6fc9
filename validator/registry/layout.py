"""Where things live in a registry: its folders, generated files, and what a path is (recipe, run, signature)."""

from __future__ import annotations

import os
import re

from validator.errors import UsageError
from validator.git.sparse import sparse_checkout
from validator.hashing import HEX64, run_path

REGISTRY_DIRS = ("recipes", "runs", "catalog", "boards", "measurers")
HARDWARE_PATH = "catalog/hardware.yaml"
MODELS_PATH = "catalog/models.yaml"
WORKLOADS_PATH = "catalog/workloads.yaml"
STARTING_POINTS_PATH = "catalog/starting-points.yaml"
CATALOG_FILES = {
    HARDWARE_PATH: "catalog-hardware",
    MODELS_PATH: "catalog-models",
    WORKLOADS_PATH: "catalog-workloads",
    STARTING_POINTS_PATH: "catalog-starting-points",
}
BOARDS_PATH = "boards/index.json"  # the boards' index; each model's part in BOARDS_MODELS_DIR (boards/split.py)
BOARDS_MODELS_DIR = "boards/models"
BOARDS_STANDINGS_DIR = "boards/standings"  # per model, what the pull-request gate reads of it (boards/split.py)
# The combined boards document (SPEC §7) is published by the boards workflow, never committed: a copy in
# the tree is a generated file no regeneration writes (ORV701 left over, ORV609 in a pull request)
DOCUMENT_PATH = "boards/boards.json"
KEYS_PATH = "boards/keys.json"  # the published relation keys' header (boards/keyfile.py) ...
KEYS_DIR = "boards/keys"  # ... and their shards, by key: boards/keys/<hex>.json, past 2 digits <ab>/<rest>.json
GENERATED_FILES = (BOARDS_PATH, DOCUMENT_PATH, KEYS_PATH)  # orv boards' names on main, never edited by hand
# a model's manifest and standings, and its part's chunks one folder deeper (boards/models/<model>/<i>.json)
_BOARDS_MODEL_PATH = re.compile(r"^boards/(models|standings)/[^/]+\.json$|^boards/models/[^/]+/[^/]+\.json$")
# any name, one folder deep at most (boards/keys/ab/c.json): a hand-made shard is a generated file too
_KEYS_SHARD_PATH = re.compile(r"^boards/keys/([^/]+/)?[^/]+\.json$")
SIGNERS_PATH = "measurers/allowed_signers"  # OpenSSH allowed_signers: the registered measurers (signing.py)
# What the pull-request gate checks out of the registry (non-cone sparse-checkout patterns, also the
# contributor's cheap clone): everything else a check reads, orv checks out itself (git.materialize).
GATE_CHECKOUT = ("/catalog/", "/measurers/", "/" + KEYS_PATH)
_RECIPE_PATH = re.compile(r"^recipes/(training|inference)/([^/]+)/([^/]+)\.ya?ml$")
_RUN_PATH = re.compile(r"^runs/([0-9a-f]{2})/([0-9a-f]{64})\.json$")
_SIGNATURE_PATH = re.compile(r"^runs/([0-9a-f]{2})/([0-9a-f]{64})\.json\.sig$")

# The kinds of file loaded one by one (validator/load/pipeline.py), each with relation keys by content.
LOADABLE = ("recipe-training", "recipe-inference", "run")


def filed_model(rel: str) -> str | None:
    """The model folder a recipe path is filed under (recipes/<kind>/<model-id>/…), None for other paths."""
    m = _RECIPE_PATH.match(rel)
    return m.group(2) if m else None


def is_generated(rel: str) -> bool:
    """Is this a generated boards file (the boards' index and model parts, the keys' header and shards, and
    boards/boards.json, the combined document that is published, never committed)?"""
    return (
        rel in GENERATED_FILES or _BOARDS_MODEL_PATH.match(rel) is not None or _KEYS_SHARD_PATH.match(rel) is not None
    )


def classify(rel: str) -> str | None:
    """The document kind a path holds by its place in the layout, or None if it has no place."""
    if rel in CATALOG_FILES:
        return CATALOG_FILES[rel]
    if rel == BOARDS_PATH or rel == DOCUMENT_PATH:
        return "boards"
    if _BOARDS_MODEL_PATH.match(rel):
        return "boards-model"
    if rel == KEYS_PATH or _KEYS_SHARD_PATH.match(rel):
        return "boards-keys"
    if rel == SIGNERS_PATH:
        return "measurers"
    m = _RECIPE_PATH.match(rel)
    if m:
        return f"recipe-{m.group(1)}"
    m = _RUN_PATH.match(rel)
    if m and m.group(2).startswith(m.group(1)):
        return "run"
    m = _SIGNATURE_PATH.match(rel)
    if m and m.group(2).startswith(m.group(1)):
        return "run-signature"  # a measurer's SSH signature of the run file beside it (signing.py)
    return None


_HASH_NAMED_RUN = re.compile(r"^runs/(?:([^/]+)/)?([0-9a-f]{64})\.json$")


def misplaced_run(rel: str) -> str | None:
    """For a hash-named run file outside its shard folder (runs/ab/cd….json), the path it belongs at."""
    m = _HASH_NAMED_RUN.match(rel)
    if m and m.group(1) != m.group(2)[:2]:
        return run_path(m.group(2))
    return None


def run_digest_from_path(rel: str) -> str | None:
    name = rel.rsplit("/", 1)[-1].removesuffix(".sig").removesuffix(".json")
    return name if HEX64.match(name) else None


def discover(root: str) -> list[str]:
    """Every file (and symlink) under the registry folders, repository-relative, sorted."""
    found: list[str] = []
    for top in REGISTRY_DIRS:
        base = os.path.join(root, top)
        if os.path.islink(base):
            found.append(top)
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
            for d in list(dirnames):
                if os.path.islink(os.path.join(dirpath, d)):
                    found.append(f"{rel_dir}/{d}")  # reported, never followed
                    dirnames.remove(d)
            dirnames.sort()
            found.extend(f"{rel_dir}/{name}" for name in filenames)
    return sorted(found)


def find_root(start: str) -> str:
    """The registry root: the nearest folder at or above `start` holding catalog/ and recipes/ (or
    catalog/ in a sparse checkout that leaves recipes/ out)."""
    here = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        if os.path.isdir(os.path.join(here, "catalog")) and (
            os.path.isdir(os.path.join(here, "recipes")) or sparse_checkout(here) is not None
        ):
            return here  # a sparse checkout may leave recipes/ out (validator/git/)
        parent = os.path.dirname(here)
        if parent == here:
            raise UsageError(f"{start}: not inside an OpenRecipes registry (no catalog/ and recipes/ above it)")
        here = parent


# A recipe's place and name (docs/contributing.md, "Naming"): the schema's slug, at most MAX_ID characters.
TRAINING_SCHEMA_LINE = "# yaml-language-server: $schema=../../../schema/recipe-training.schema.json"
INFERENCE_SCHEMA_LINE = "# yaml-language-server: $schema=../../../schema/recipe-inference.schema.json"
STARTING_POINTS_SCHEMA_LINE = "# yaml-language-server: $schema=../schema/catalog-starting-points.schema.json"
SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_ID = 96


def model_slug(model_id: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", model_id.lower()).strip("-")


def recipe_path(kind: str, model_id: str, recipe_id: str) -> str:
    return f"recipes/{kind}/{model_id}/{recipe_id}.yaml"
