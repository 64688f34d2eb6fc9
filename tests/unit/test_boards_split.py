"""The boards stored split (validator/boards/split.py): boards/index.json plus one file per model.

What must hold: the files assemble into exactly the one-file document `orv boards` used to write
(the readers' contract: the site, seed 004's shape, the summary's base lookup); a one-recipe change
rewrites its model's file and the index only; each file is checked on its own (ORV701), including a
file left over for a model no longer on the boards and the old one-file boards/boards.json.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.testing.factories import inference_recipe, training_recipe, write_recipe
from tests.testing.git import commit_all, git, git_init
from tests.testing.paths import REPO
from tests.testing.registry import make_registry
from validator.boards import split as split_module
from validator.boards.build import GitStamp, build, render
from validator.boards.regenerate import regenerate
from validator.boards.split import (
    RANKS,
    SHOWN,
    BoardsUnreadable,
    assemble,
    chunk_of,
    chunk_path,
    committed_files,
    file_reader,
    model_path,
    read_boards,
    read_document,
    read_standing,
    render_standing,
    split,
    split_files,
    standing,
    standing_rows,
    standings_path,
    unstored,
)
from validator.cli import main
from validator.engine.evaluate import Config, analyse, run
from validator.evidence.tiers import derive

INDEX = "boards/index.json"


def orv(*args: str) -> int:
    return main(list(args))


def _document(root: Path) -> dict:
    analysis = analyse(str(root))
    return build(analysis.snapshot, derive(analysis.snapshot, analysis.diagnostics), GitStamp("2026-01-01", "ab" * 20))


def _registry(tmp_path: Path) -> Path:
    root = make_registry(tmp_path / "repo")
    git_init(root)
    write_recipe(root, training_recipe("b200-pp4", 4011.4, gpu="b200"))
    write_recipe(
        root,
        training_recipe(
            "h200-a", 2000.0, gpu="h200", model="qwen3.5-122b-a10b", count=8, layout={"tp": 1, "pp": 1, "dp": 8}
        ),
    )
    write_recipe(root, inference_recipe("claim"))
    commit_all(root, "data", "2026-10-18T09:30:00+02:00")
    assert orv("boards", "--root", str(root)) == 0
    commit_all(root, "boards", "2026-10-18T10:00:00+00:00")
    return root


def _parts(files: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each model's part from split's files (its manifest and chunks, `unstored`), popping them from `files`."""
    parts = {}
    for model in files[INDEX]["model_files"]:
        manifest = files.pop(model_path(model))
        chunks = [files.pop(chunk_path(model, i)) for i in range(manifest["chunks"])]
        for i, chunk in enumerate(chunks):
            assert chunk["model"] == model and chunk["chunk"] == i
            rows = [row for rows in chunk["boards"].values() for row in rows]
            assert not any(key in row for row in rows for key in RANKS)  # ranks follow from the figures
            assert {chunk_of(row["recipe"], manifest["chunks"]) for row in rows} <= {i}
            assert {chunk_of(run["content_hash"], manifest["chunks"]) for run in chunk["runs"]} <= {i}
        parts[model] = unstored(manifest, chunks)
    return parts


@pytest.mark.parametrize("chunk_items", [split_module.CHUNK_ITEMS, 1])
def test_split_and_assemble_are_inverses_on_the_repository(chunk_items: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Byte for byte, with the shipped chunk size and with every model in as many chunks as it has items."""
    monkeypatch.setattr(split_module, "CHUNK_ITEMS", chunk_items)
    document = _document(REPO)
    files: dict[str, Any] = split(document)
    parts = _parts(files)
    index = files.pop(INDEX)
    standings = {path: files.pop(path) for path in list(files) if path.startswith("boards/standings/")}
    assert files == {}  # every file is the index, a manifest, a chunk or a standing
    assert render(assemble(index, parts.values())) == render(document)
    if chunk_items == 1:
        assert max(len(p["runs"]) + sum(map(len, p["boards"].values())) for p in parts.values()) > 2
    # each model's rows are in its own files and nowhere else
    for model, part in parts.items():
        assert {row["model"] for rows in part["boards"].values() for row in rows} <= {model}
        assert {run["model"] for run in part["runs"]} <= {model}
        # its standings: every row again, with what ranks it and what the summary shows of it, nothing lost
        kept = standings.pop(standings_path(part["model"]))
        assert kept == standing(part) and kept["models"] == part["models"] and kept["frontiers"] == part["frontiers"]
        written = render_standing(kept)  # its bytes: the same JSON, one entry a line
        assert json.loads(written) == kept
        entries = sum(len(g["entries"]) for groups in kept["boards"].values() for g in groups)
        assert sum(1 for line in written.splitlines() if line.lstrip().startswith(b'["')) == entries
        for name, rows in standing_rows(kept).items():
            # every row once, its group's entries by recipe id (the groups in the part's order)
            full_rows = {row["recipe"]: row for row in part["boards"][name]}
            assert sorted(row["recipe"] for row in rows) == sorted(full_rows)
            for group in kept["boards"][name]:
                assert [e[0] for e in group["entries"]] == sorted(e[0] for e in group["entries"])
            for short in rows:
                full = full_rows[short["recipe"]]
                assert short == {key: full.get(key) for key in short}, (name, short["recipe"])
                assert set(short) >= {"tier", "tier_reasons", "model", "gpu", "workload", *SHOWN[name]}
    assert standings == {}


def test_a_model_is_stored_in_more_chunks_as_it_grows_each_chunk_splitting_in_two() -> None:
    assert [split_module.chunk_count(n) for n in (0, 1, 512, 513, 1024, 1025, 100_000)] == [1, 1, 1, 2, 2, 4, 256]
    keys = [f"recipe-{i}" for i in range(2000)]
    for count in (1, 2, 4, 256):
        at = [chunk_of(key, count) for key in keys]
        assert set(at) == set(range(count))  # every chunk used: the keys spread
        doubled = [chunk_of(key, 2 * count) for key in keys]
        assert all(d // 2 == a for a, d in zip(at, doubled))  # chunk i splits into 2i and 2i + 1
    # at the bench's largest model (~85,000 rows and runs at 100,000 run files) no chunk holds much more
    # than CHUNK_ITEMS: the largest of 256 chunks of hashed keys within 20% of the mean
    big = [f"sha256:{i:064x}" for i in range(85_000)]
    count = split_module.chunk_count(len(big))
    sizes = [0] * count
    for key in big:
        sizes[chunk_of(key, count)] += 1
    assert max(sizes) <= 1.2 * split_module.CHUNK_ITEMS


@pytest.mark.git
def test_combined_is_the_one_file_document_byte_for_byte(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    out = tmp_path / "combined.json"
    assert orv("boards", "--combined", str(out), "--root", str(root)) == 0
    assert out.read_bytes() == regenerate(analyse(str(root)))
    assert json.loads(out.read_bytes())["meta"]["source_commit"] == git(root, "rev-parse", "HEAD~1")


@pytest.mark.git
def test_a_one_recipe_change_rewrites_its_model_file_its_standings_and_the_index_only(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    before = committed_files(str(root))
    write_recipe(root, training_recipe("b200-pp8", 3000.0, gpu="b200"))
    commit_all(root, "one recipe", "2026-10-19T09:30:00+00:00")
    assert orv("boards", "--root", str(root)) == 0
    after = committed_files(str(root))
    changed = sorted(path for path in set(before) | set(after) if before.get(path) != after.get(path))
    assert changed == [
        INDEX,
        "boards/models/qwen3.8-27b.json",  # its manifest: the model's `models` entry counts the recipe
        "boards/models/qwen3.8-27b/0.json",  # its one chunk
        "boards/standings/qwen3.8-27b.json",
    ]
    assert orv("boards", "--check", "--root", str(root)) == 0


@pytest.mark.git
def test_a_recipe_that_moves_every_rank_of_its_group_rewrites_one_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fastest recipe of a group pushes every other down a rank and changes every `rank_of`: stored with
    ranks, every chunk holding a row of the group would be rewritten; stored without, only its own."""
    monkeypatch.setattr(split_module, "CHUNK_ITEMS", 1)
    root = _registry(tmp_path)
    for i in range(5):  # with b200-pp4 and the inference claim: 7 rows, 8 chunks (and still 8 with one more)
        write_recipe(root, training_recipe(f"b200-more-{i}", 3000.0 + i, gpu="b200"))
    commit_all(root, "more", "2026-10-19T09:30:00+00:00")
    assert orv("boards", "--root", str(root)) == 0
    commit_all(root, "boards", "2026-10-19T10:00:00+00:00")
    before = committed_files(str(root))
    manifest = json.loads(before[model_path("qwen3.8-27b")])
    assert manifest["chunks"] == 8
    write_recipe(root, training_recipe("b200-fastest", 5000.0, gpu="b200"))
    commit_all(root, "the fastest", "2026-10-20T09:30:00+00:00")
    assert orv("boards", "--root", str(root)) == 0
    after = committed_files(str(root))
    changed = sorted(path for path in set(before) | set(after) if before.get(path) != after.get(path))
    assert changed == sorted(
        [
            INDEX,
            "boards/models/qwen3.8-27b.json",
            chunk_path("qwen3.8-27b", chunk_of("b200-fastest", 8)),
            "boards/standings/qwen3.8-27b.json",
        ]
    )
    ranks = {row["recipe"]: (row["rank"], row["rank_of"]) for row in read_boards(str(root))["boards"]["training"]}
    assert ranks["b200-fastest"] == (1, 7) and ranks["b200-pp4"] == (2, 7) and ranks["b200-more-0"] == (7, 7)


@pytest.mark.git
def test_reading_some_models_reads_only_their_rows(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    whole = read_boards(str(root))
    assert whole is not None
    assert {r["model"] for r in whole["boards"]["training"]} == {"qwen3.8-27b", "qwen3.5-122b-a10b"}
    read: list[str] = []

    def reader(rel: str) -> bytes | None:
        read.append(rel)
        path = root / rel
        return path.read_bytes() if path.exists() else None

    part = read_document(reader, ["qwen3.5-122b-a10b", "not-a-model"])
    assert part is not None and [r["recipe"] for r in part["boards"]["training"]] == ["h200-a"]
    assert part["wanted"]["models"] == whole["wanted"]["models"]  # global lists come whole from the index
    # no other model's file is opened
    assert read == [INDEX, "boards/models/qwen3.5-122b-a10b.json", "boards/models/qwen3.5-122b-a10b/0.json"]


@pytest.mark.git
def test_a_model_gone_from_the_boards_loses_its_file(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    gone = root / "boards/models/qwen3.5-122b-a10b.json"
    assert gone.is_file()
    git(root, "rm", "-q", "recipes/training/qwen3.5-122b-a10b/h200-a.yaml")
    commit_all(root, "remove", "2026-10-19T09:30:00+00:00")
    assert orv("boards", "--check", "--root", str(root)) == 1
    assert orv("boards", "--root", str(root)) == 0
    assert not gone.exists() and not (root / "boards/models/qwen3.5-122b-a10b/0.json").exists()
    assert orv("boards", "--check", "--root", str(root)) == 0


@pytest.mark.git
def test_a_left_over_or_copied_model_file_is_stale(tmp_path: Path) -> None:
    """The forgery: a model's file copied under another model's name (every figure kept). It assembles into
    nothing (the index does not list it), but it is a published file no regeneration writes: ORV701."""
    root = _registry(tmp_path)
    shutil.copy(root / "boards/models/qwen3.8-27b.json", root / "boards/models/qwen3-32b.json")
    findings = [(d.code, d.path) for d in run(Config(root=str(root))).diagnostics]
    assert findings == [("ORV701", "boards/models/qwen3-32b.json")]
    assert orv("boards", "--root", str(root)) == 0
    assert not (root / "boards/models/qwen3-32b.json").exists()


@pytest.mark.git
def test_an_index_that_hides_a_model_is_stale_and_a_missing_part_is_unreadable(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    index_path = root / INDEX
    index = json.loads(index_path.read_text())
    index["model_files"].remove("qwen3.5-122b-a10b")  # its rows would silently vanish from the site
    index_path.write_text(json.dumps(index, indent=2, sort_keys=True) + "\n")
    assert [(d.code, d.path) for d in run(Config(root=str(root))).diagnostics] == [("ORV701", INDEX)]
    assert orv("boards", "--root", str(root)) == 0
    (root / "boards/models/qwen3.8-27b.json").unlink()
    with pytest.raises(BoardsUnreadable, match="missing"):
        read_boards(str(root))
    assert [(d.code, d.path) for d in run(Config(root=str(root))).diagnostics] == [
        ("ORV701", "boards/models/qwen3.8-27b.json")
    ]


@pytest.mark.git
def test_the_combined_document_is_never_committed_and_a_committed_copy_is_left_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SPEC §1 and §7: the combined document is published by the boards workflow (`orv boards --combined`),
    never committed. A copy in the tree (from an orv before the document left git, or added by hand) is a
    generated file no regeneration writes: ORV701 names it, `orv boards --check` fails, `orv boards`
    removes it, and no reader takes anything from it."""
    root = _registry(tmp_path)
    whole = root / "boards/boards.json"
    assert not whole.exists()  # orv boards wrote the split files only
    assert [(d.code, d.path) for d in run(Config(root=str(root))).diagnostics] == []  # the honest twin
    combined = regenerate(analyse(str(root)))
    whole.write_bytes(combined.replace(b'"T1"', b'"T3"', 1))  # a committed copy, hand-raised a tier
    (finding,) = run(Config(root=str(root))).diagnostics
    assert (finding.code, finding.path, finding.severity.value) == ("ORV701", "boards/boards.json", "error")
    assert "published by the boards workflow, never committed" in finding.message
    assert json.loads(combined) == read_boards(str(root))  # readers read the split files, never the copy
    capsys.readouterr()
    assert orv("boards", "--check", "--root", str(root)) == 1
    assert "boards/boards.json is left over: the combined document is published" in capsys.readouterr().out
    assert orv("boards", "--root", str(root)) == 0
    assert "boards/boards.json removed" in capsys.readouterr().out
    assert not whole.exists()
    assert orv("boards", "--check", "--root", str(root)) == 0
    # a registry with only a boards.json (no index) publishes no boards: it is not read whole either
    for path in split_files(_document(root)):
        (root / path).unlink()
    whole.write_bytes(combined)
    assert read_boards(str(root)) is None


@pytest.mark.git
def test_the_site_renders_the_split_boards(tmp_path: Path) -> None:
    root = _registry(tmp_path)
    site = tmp_path / "site"
    done = subprocess.run(
        [str(Path(__import__("sys").executable)), "-m", "validator", "site", str(site), "--root", str(root)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "h200-a" in (site / "index.html").read_text()


def test_a_model_id_that_is_no_file_name_gets_a_portable_name_inside_boards_models() -> None:
    assert model_path("qwen3.8-27b") == "boards/models/qwen3.8-27b.json"
    for odd in ("../escape", "a/b", "Upper Case", ""):
        path = model_path(odd)
        name = path.rsplit("/", 1)[1]
        assert path.startswith("boards/models/_") and "/" not in name[:-5] and name[1:-5].isalnum()


@pytest.mark.git
@pytest.mark.parametrize(
    ("rel", "damage", "said"),
    [
        ("qwen3.8-27b/0.json", lambda c: c["boards"].update(training=5), "is not chunk 0 of model"),
        ("qwen3.8-27b/0.json", lambda c: c["runs"].append({"no": "hash"}), "is not chunk 0 of model"),
        ("qwen3.8-27b/0.json", lambda c: c["wanted"].pop("quality"), "is not chunk 0 of model"),
        ("qwen3.8-27b/0.json", lambda c: c.update(model="another"), "is not chunk 0 of model"),
        ("qwen3.8-27b/0.json", lambda c: c.update(chunk=1), "is not chunk 0 of model"),
        ("qwen3.8-27b/0.json", lambda c: c["boards"]["training"][0].pop("gpu"), "is not chunk 0 of model"),
        ("qwen3.8-27b/0.json", lambda c: c["boards"]["training"][0].pop("workload"), "hold a malformed row"),
        ("qwen3.8-27b/0.json", lambda c: c["boards"]["training"][0].update(tok_s_per_gpu="fast"), "is not chunk 0"),
        ("qwen3.8-27b.json", lambda m: m.update(chunks=3), "is not the boards manifest of model"),
        ("qwen3.8-27b.json", lambda m: m.update(chunks=2), "which is missing"),
        ("qwen3.8-27b.json", lambda m: m.pop("frontiers"), "is not the boards manifest of model"),
        ("qwen3.8-27b.json", lambda m: m.update(model="another"), "is not the boards manifest of model"),
    ],
)
def test_a_damaged_model_file_is_unreadable_never_a_crash(
    tmp_path: Path, rel: str, damage: Any, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _registry(tmp_path)
    path = root / "boards/models" / rel
    content = json.loads(path.read_text())
    damage(content)
    path.write_text(json.dumps(content))
    with pytest.raises(BoardsUnreadable, match="qwen3.8-27b"):
        read_boards(str(root))
    assert orv("site", str(tmp_path / "site"), "--root", str(root)) == 2
    assert orv("boards", "--combined", str(tmp_path / "c.json"), "--root", str(root)) == 1
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


@pytest.mark.git
@pytest.mark.parametrize(
    "forge",
    [
        lambda e: e.__setitem__(2, [99]),  # a reason that is not in `reasons`
        lambda e: e.__setitem__(2, [-1]),
        lambda e: e.__setitem__(3, 7),  # a quality record that does not exist
        lambda e: e.__setitem__(4, "4011.4"),  # a figure as text
        lambda e: e.__setitem__(4, True),  # a figure as a boolean
        lambda e: e.__setitem__(1, 3),  # a tier that is not text
        lambda e: e.__setitem__(0, None),  # no recipe id
        lambda e: e.append(1.0),  # one column too many
        lambda e: e.pop(),  # one too few
    ],
)
def test_a_malformed_standing_is_unreadable_not_a_crash(tmp_path: Path, forge) -> None:
    """The summary trusts a standing only in the shape standing_rows reads; anything else is BoardsUnreadable
    (the summary then reads the model's part: tests/e2e/test_summary.py)."""
    root = _registry(tmp_path)
    path = root / standings_path("qwen3.8-27b")
    found = json.loads(path.read_bytes())
    assert read_standing(file_reader(str(root)), "qwen3.8-27b") == found  # as written, it reads
    entry = found["boards"]["training"][0]["entries"][0]
    forge(entry)
    path.write_text(json.dumps(found), encoding="utf-8")
    with pytest.raises(BoardsUnreadable, match="standings of model 'qwen3.8-27b'"):
        read_standing(file_reader(str(root)), "qwen3.8-27b")
