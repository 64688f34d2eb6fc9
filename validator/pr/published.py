"""The merge base's published keys (boards/keys.json and its shards), read only where the change needs them.

boards/keyfile.py says what is published and why the gate may trust it. Here the gate asks two
things of it: is a base file's content covered by the published keys (its blob unchanged since the
trees the keys were made from), and which covered files hold any of these keys (read from the
shards those keys fall into, each shard read once; an entry is a blob id, and names the covered base
files holding exactly those bytes). Every read goes through the merge base's tree (BaseTree.read_many): in a
blobless sparse clone git fetches just those blobs, each hop's shards in one request (git.prefetch).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from validator.boards.keyfile import KEYED, TREE_DIRS, Entries, Header, read_header, read_shard, shard_name, shard_path
from validator.git.diff import MODE_SYMLINK, BaseTree, changed_since
from validator.git.partial import prefetch
from validator.registry.layout import KEYS_PATH, classify

PATH_ONLY = "f:"  # relations.py: the case-folded path, a key by path alone (the base listing has them all)


class PublishedKeys:
    """The published keys of one merge base, under this orv's stamp."""

    def __init__(self, root: str, commit: str, base: BaseTree, header: Header, stale: set[str]) -> None:
        self.root, self.commit, self.base, self.header, self.stale = root, commit, base, header, stale
        self.shards: dict[str, Entries] = {}  # read so far, by name

    def covers(self, rel: str, mode: int, blob: str) -> bool:
        """Are this base file's content keys in the shards (its blob is the one they were made from)?"""
        return mode != MODE_SYMLINK and rel not in self.stale and classify(rel) in KEYED

    def holders(self, keys: Iterable[str], paths: Callable[[str], Iterable[str]]) -> dict[str, set[str]]:
        """The files listed under any of `keys`, each with the keys it is listed under: the paths `paths`
        names for each blob id listed (the base tree's covered files holding exactly those bytes); a blob
        no such path has is stale and names nothing. Raises KeysUnusable when a shard needed is malformed."""
        found: dict[str, set[str]] = {}
        keys = [key for key in keys if not key.startswith(PATH_ONLY)]  # no file has it by content: in no shard
        names = {shard_name(key, self.header.digits) for key in keys}
        unread = {shard_path(name): name for name in sorted(names - set(self.shards))}
        prefetch(self.root, self.commit, list(unread))
        for path, data in self.base.read_many(list(unread)).items():  # one git process for the hop's shards
            self.shards[unread[path]] = read_shard(data, unread[path])
        for key in keys:
            for blob in self.shards[shard_name(key, self.header.digits)].get(key, ()):
                for rel in paths(blob):
                    found.setdefault(rel, set()).add(key)
        return found


def open_published(
    root: str,
    base: BaseTree,
    commit: str,
    stamp: str,
    base_files: Mapping[str, tuple[int, str]],
    holder: BaseTree | None = None,
) -> PublishedKeys | None:
    """The merge base's published keys, or None when it has none this orv can use (absent, malformed,
    another orv's, made from an uncommitted working tree, or trees git cannot compare). `holder`: the
    commit whose keys to read instead (a merge's boards update reads HEAD's, made from the data commit its
    boards name, which is `base` there and holds no keys of its own); files are stale against `commit`."""
    if holder is None and KEYS_PATH not in base_files:
        return None
    holder = holder or base
    header = read_header(holder.read(KEYS_PATH), stamp)
    if header is None:
        return None
    stale: set[str] = set()
    for top in TREE_DIRS:
        moved = changed_since(root, header.trees[top], commit, top)
        if moved is None:
            return None
        stale |= moved
    return PublishedKeys(root, holder.commit.hexsha, holder, header, stale)
