"""boards/keys.json: every recipe's and run file's relation keys by content, published with the boards.

A pull-request check finds the files a change can affect by their relation keys
(validator/relations.py). A recipe's keys need its YAML parsed and a run file's need its samples
fingerprinted, so on a fresh runner (no `.git/orv` index) finding the neighbours of one new file
would load the whole registry. Main's boards workflow therefore writes each committed file's content
keys beside the boards (`orv boards`), and ORV703 (`orv check --boards`) holds them equal to a
fresh regeneration. The gate trusts this file only as far as it can be sure of it:

- it reads the merge base's committed file, never the pull request's copy;
- the whole file is ignored unless its `orv` stamp equals this orv's derivation key (its code,
  schemas and the catalog: validator/load/cache.py), so keys made by another orv are never used;
- an entry is used only for the exact git blob id it names: a file changed since is loaded.

Anything else is loaded as before, so a stale key file costs time, never a finding. A wrong entry
under the right stamp and blob id (a hand edit on main) could hide a neighbour: ORV703 compares
the file with a regeneration on main, and ORV609 fails a pull request that edits it.
One line per file keeps git's diffs and merges of the file small.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Mapping, Optional

import orjson

from validator.git import clean_blobs, git_dir_of_top_level
from validator.load.cache import derivation_key
from validator.registry import LOADABLE, Snapshot, classify
from validator.relations import Keys, content_keys

FORMAT = 1
KEYED = LOADABLE  # files with keys by content: the recipes and run files
_BLOB = re.compile(r"^[0-9a-f]{40}$")

Published = Mapping[str, tuple[str, Keys]]  # path -> (git blob id, content keys)


def blob_id(raw: bytes) -> str:
    """git's object id of a file with these bytes (`git hash-object`)."""
    return hashlib.sha1(b"blob %d\0" % len(raw) + raw, usedforsecurity=False).hexdigest()


def fresh_keys(snapshot: Snapshot) -> bytes:
    """The bytes `orv boards` writes to boards/keys.json for this snapshot (the working tree)."""
    root = snapshot.root
    # git's ids only where git's paths are the registry's (its top level), as the cache trusts them;
    # in a sub-folder registry `git status` names files from the top, so a modified file would look clean
    clean = (clean_blobs(root, ("recipes", "runs")) if git_dir_of_top_level(root) else None) or {}
    lines = []
    for rel in sorted(snapshot.loaded):  # every recipe and run file, links never (pipeline.loadable): KEYED
        blob = clean.get(rel) or _hash_file(root, rel)  # modified or untracked: hash its bytes as git would
        if blob is not None:
            keys = list(content_keys(snapshot.loaded[rel][0]))
            lines.append(orjson.dumps(rel) + b":" + orjson.dumps([blob, keys]))
    head = b'{"format":%d,"orv":%s,"files":{' % (FORMAT, orjson.dumps(derivation_key(root)))
    return head + b"\n" + b",\n".join(lines) + b"\n}}\n"


def _hash_file(root: str, rel: str) -> Optional[str]:
    try:
        with open(os.path.join(root, rel), "rb") as fh:
            return blob_id(fh.read())
    except OSError:
        return None


def read_keys(raw: Optional[bytes], stamp: str) -> Published:
    """The entries of a committed key file made under `stamp`; empty when absent, malformed or
    made by another orv (module docstring: nothing here is ever needed, only time-saving)."""
    if not raw:
        return {}
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    if (not isinstance(document, dict) or document.get("format") != FORMAT or document.get("orv") != stamp
            or not isinstance(document.get("files"), dict)):
        return {}
    published: dict[str, tuple[str, Keys]] = {}
    for rel, entry in document["files"].items():
        if (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) and _BLOB.match(entry[0])
                and isinstance(entry[1], list) and all(isinstance(key, str) for key in entry[1])
                and classify(rel) in KEYED):
            published[rel] = (entry[0], tuple(entry[1]))
    return published
