"""Issue 54: no generated file near GitHub's limits (it warns at 50 MB and refuses a file over 100 MB).

Two guards: the size model of bench/merge_bytes.py (a registry spread over N // 25 models by Zipf's law,
each kind of generated file scaled from the largest measured registry by what it grows with) keeps every
committed file under the limit at 100,000 recipes; and `orv boards` refuses, writing nothing, when a file it
would write passes the limit anyway.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.factories import training_recipe, write_recipe
from validator.boards.regenerate import oversized
from validator.cli import main
from validator.commands.boards import FileTooLarge, boards
from validator.commands.outcome import Outcome, no_progress


def test_oversized_names_only_the_files_over_the_limit_largest_first() -> None:
    files = {"boards/index.json": b"x" * 10, "boards/models/a.json": b"x" * 30, "boards/models/b.json": b"x" * 31}
    assert oversized(files, 30) == [("boards/models/b.json", 31)]
    assert oversized(files, 9) == [
        ("boards/models/b.json", 31),
        ("boards/models/a.json", 30),
        ("boards/index.json", 10),
    ]
    assert oversized(files) == []  # the default limit is FILE_LIMIT_MB


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_orv_boards_refuses_a_file_over_the_limit_before_writing_anything(registry: Path) -> None:
    write_recipe(registry, training_recipe("x", 100.0))
    assert main(["boards", "--root", str(registry)]) == 0
    write_recipe(registry, training_recipe("y", 200.0))  # something to write: the model's file grows
    before = _tree(registry / "boards")
    model_file = len((registry / "boards/models/qwen3.8-27b.json").read_bytes())
    with pytest.raises(FileTooLarge) as refused:
        boards(str(registry), False, 1, False, no_progress, max_file_bytes=model_file)
    assert "boards/models/qwen3.8-27b.json" in refused.value.message and "nothing was written" in refused.value.message
    assert "--max-file-mb" in refused.value.hint and refused.value.exit_code == 1
    assert _tree(registry / "boards") == before  # not one file written or removed
    with pytest.raises(
        FileTooLarge
    ):  # --check refuses the same way: the regeneration it compares with is unpublishable
        boards(str(registry), True, 1, False, no_progress, max_file_bytes=model_file)
    # the honest twin: under the limit (the default, and one just above the largest file) it writes
    outcome = boards(str(registry), False, 1, False, no_progress, max_file_bytes=10 * model_file)
    assert isinstance(outcome, Outcome) and outcome.exit_code == 0
    assert _tree(registry / "boards") != before
    assert main(["boards", "--check", "--max-file-mb", "1", "--root", str(registry)]) == 0


def test_the_cli_refusal_is_a_message_and_a_hint_never_a_traceback(
    registry: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_recipe(registry, training_recipe("x", 100.0))
    monkeypatch.setattr("validator.commands.boards.FILE_LIMIT_MB", 0)  # every file passes a zero limit
    assert main(["boards", "--root", str(registry)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("orv: a generated file would pass the limit") and "hint:" in err and "Traceback" not in err
    assert not (registry / "boards" / "index.json").exists()
