"""ORV304's pairs judged on several runners: the part of merging shards that grows as the square of the runs.

`orv merge-results` judges every pair of runs that share enough sample keys (checks/independence.py); at
10,000 run files that is most of the merge's time, and one runner does it all, so a sharded check could not
finish much sooner than a single one (docs/scaling.md). Each pair's verdict is its own, so the judging splits:

    orv merge-results PARTIALS --judge K/N --judged-out judged-K.json     # on N runners, K = 1..N
    orv merge-results PARTIALS --judged judged-1.json ... judged-N.json   # on one runner: reports

Part K of N is the K-th of N equal stretches of ORV304's judging order (in_blocks: a block of runs against a
block of later runs, so a stretch unpacks a run's print about as often as one process does for those pairs).
Every runner computes the same pairs in the same order from the same partials, so the same stretches (but for
a chance collision of two sample keys' 64-bit string hashes in one process, which adds a pair there: its count
then differs and the merge refuses the files; running the parts again draws other hashes). A
judged file names the partials it was judged from (their digest), the part, the merge's pairs and its own
count, and the pairs it found one measurement. The reporting merge refuses a file of other partials,
another orv or tree, a missing or repeated part, or counts that do not add up; and it judges every listed
pair again itself (a few pairs: the registry's copies), so a judged file cannot make it report a pair that
its own rules do not find one measurement. What a judged file can still do, as a shard's partial can, is
leave out a copy its part found: that is bounded by where the files come from (the same workflow run's
artifacts; docs/scaling.md).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any

import orjson

from validator.checks.collect import Collector
from validator.checks.independence import (
    copies_among,
    fingerprinted,
    judged_again,
    pack_pair,
    pairs_to_judge,
    unpack_pair,
)
from validator.engine.shard import (
    FileKind,
    Merged,
    Split,
    SplitFiles,
    complete_split,
    other_orv,
    parse_split,
    read_document,
    runtime,
)
from validator.errors import UsageError
from validator.files.atomic import write_atomic
from validator.load.pipeline import assemble_loaded
from validator.registry.snapshot import Snapshot

FORMAT = "orv judged pairs"
VERSION = 1


class Part(Split):
    """Part K of N of ORV304's pairs."""


def parse_part(text: str) -> Part:
    """K/N, e.g. `--judge ${{ matrix.part }}/4`."""
    return Part(*parse_split(text, "--judge"))


def stretch(total: int, part: Part) -> tuple[int, int]:
    """The pairs (by their place in ORV304's judging order, of `total`) that part K of N judges: [start, end)."""
    return total * (part.k - 1) // part.n, total * part.k // part.n


@dataclass(frozen=True)
class Judged:
    path: str
    pairs: int  # judged in this part
    total: int  # ORV304's pairs of the merge
    copies: int  # found one measurement
    size: int  # bytes written


def default_judged_path(part: Part) -> str:
    """Where a part writes when --judged-out is not given: the current folder (what a workflow uploads)."""
    return f"orv-judged-{part.k}-of-{part.n}.json"


def judge_part(root: str, merged: Merged, part: Part, out_path: str, jobs: int) -> Judged:
    """Judge part K of N of ORV304's pairs of the merged shards and write the verdicts to out_path atomically."""
    snapshot = assemble_loaded(root, merged.loaded, Collector())
    runs, pairs = pairs_to_judge(snapshot)
    packed = array("q", (pack_pair(*pair) for pair in pairs))  # 8 bytes a pair: the ties are computed once
    start, end = stretch(len(packed), part)
    mine = map(unpack_pair, packed[start:end])
    copies = [[one.path, other.path, how] for one, other, how in copies_among(runs, mine, jobs)]
    document = {
        "format": FORMAT,
        "version": VERSION,
        **runtime(),
        "tree": merged.tree,
        "partials": merged.partials,
        "part": part.k,
        "of": part.n,
        "total": len(packed),
        "pairs": end - start,
        "copies": copies,
    }
    data = orjson.dumps(document) + b"\n"
    write_atomic(out_path, data)
    return Judged(out_path, end - start, len(packed), len(copies), len(data))


_RERUN = (
    "judge every part (`orv merge-results PARTIALS --judge K/N`) from this workflow run's partials, with the same "
    "orv on the same commit, and pass all N files"
)


JUDGED_FILE = FileKind(
    "judged file", "`orv merge-results --judge K/N`", FORMAT, VERSION, "judged", (_RERUN, _RERUN, _RERUN, _RERUN)
)


def read_judged(path: str) -> dict[str, Any]:
    """A judged file as plain data, refused (ORV901 on it) unless it has the schema's exact shape."""
    return read_document(path, JUDGED_FILE)[0]


def verdicts(
    snapshot: Snapshot, files: list[tuple[str, dict[str, Any]]], merged: Merged
) -> tuple[tuple[str, str, str], ...]:
    """The pairs the judged files found one measurement, each judged again here, after refusing (UsageError) files
    that are not the N parts of one split of this merge's pairs, judged from these partials by this orv on this
    tree, and a listed pair that is not one this merge finds one measurement."""
    mine, tree, partials = runtime(), merged.tree, merged.partials
    for path, document in files:
        differ = other_orv(document, mine)
        if differ:
            raise UsageError(
                f"{path}: judged by another orv ({differ}): judge every part and merge with the same orv and "
                "dependencies"
            )
        if document["tree"] != tree:
            raise UsageError(f"{path}: judged on another registry tree than this checkout: {_RERUN}")
        if document["partials"] != partials:
            raise UsageError(f"{path}: judged from other partial results than these: {_RERUN}")
    n = complete_split([(path, document["part"], document["of"]) for path, document in files], _JUDGED)
    by_part = {document["part"]: (path, document) for path, document in files}
    totals = sorted({document["total"] for _, document in files}, key=repr)
    if len(totals) > 1 or type(totals[0]) is not int:
        raise UsageError(f"judged files of different pairs ({', '.join(map(str, totals))}): {_RERUN}")
    for k, (path, document) in sorted(by_part.items()):
        start, end = stretch(totals[0], Part(k, n))
        if type(document["pairs"]) is not int or document["pairs"] != end - start:
            raise UsageError(
                f"{path}: judged {document['pairs']} pairs; part {k}/{n} of {totals[0]:,} has {end - start:,}: {_RERUN}"
            )
    runs = {run.path: run for run in snapshot.runs.values() if fingerprinted(run)}
    found: dict[tuple[str, str], str] = {}
    for _, (path, document) in sorted(by_part.items()):
        for one, other, _how in document["copies"]:
            if one not in runs or other not in runs or one >= other:
                raise UsageError(f"{path}: lists {one} and {other}, which are not a pair this merge judges: {_RERUN}")
            if (one, other) in found:  # each pair is in one part's stretch, once: a repeat is no runner's output
                raise UsageError(f"{path}: lists {one} and {other} again: {_RERUN}")
            how = judged_again(runs[one], runs[other])
            if how is None:
                raise UsageError(
                    f"{path}: lists {one} and {other} as one measurement; this merge's own rules do not find them "
                    f"one: {_RERUN}"
                )
            found[(one, other)] = how
    return tuple((one, other, how) for (one, other), how in found.items())


_JUDGED = SplitFiles("part", "judged file(s)", "--judge", "pass every `--judge K/N` file")
