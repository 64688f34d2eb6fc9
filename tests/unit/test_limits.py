"""ORV111: files over the documented size limits are refused before they are read, never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

from validator.cli import main
from validator.engine.evaluate import Config, run
from validator.load.documents import MAX_JSON_BYTES, MAX_YAML_BYTES

RECIPE = "recipes/inference/glm-5.3-flash/glm-5-3-flash-h100-fp8-c1.yaml"
RUN = "runs/ab/" + "ab" * 32 + ".json"


def _findings(root: Path) -> list[tuple[str, str, int]]:
    return [(d.code, d.path, d.line) for d in run(Config(root=str(root), skip_boards=True)).diagnostics]


def test_recipe_over_one_mebibyte_is_orv111(registry: Path) -> None:
    path = registry / RECIPE
    path.parent.mkdir(parents=True)
    # A plausible way to get there: a long log pasted into a comment.
    filler = "# " + "x" * 78 + "\n"
    path.write_text("id: glm-5-3-flash-h100-fp8-c1\n" + filler * (MAX_YAML_BYTES // len(filler) + 1))
    assert os.path.getsize(path) > MAX_YAML_BYTES
    assert _findings(registry) == [("ORV111", RECIPE, 1)]


def test_recipe_at_the_limit_is_read(registry: Path) -> None:
    path = registry / RECIPE
    path.parent.mkdir(parents=True)
    head = "id: glm-5-3-flash-h100-fp8-c1\n"
    path.write_text(head + "#" * (MAX_YAML_BYTES - len(head)))
    assert os.path.getsize(path) == MAX_YAML_BYTES
    assert "ORV111" not in {code for code, _, _ in _findings(registry)}


def test_run_file_over_sixteen_mebibytes_is_orv111_without_reading_it(registry: Path) -> None:
    path = registry / RUN
    path.parent.mkdir(parents=True)
    with open(path, "wb") as fh:  # sparse: the size is on record, the bytes are never read
        fh.truncate(MAX_JSON_BYTES + 1)
    assert _findings(registry) == [("ORV111", RUN, 1)]


def test_catalog_over_the_limit_is_orv111(registry: Path) -> None:
    path = registry / "catalog" / "models.yaml"
    with open(path, "ab") as fh:
        fh.write(b"#" * (MAX_YAML_BYTES + 1))
    codes = _findings(registry)
    assert ("ORV111", "catalog/models.yaml", 1) in codes


def test_cli_reports_orv111_and_exits_1(registry: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = registry / RUN
    path.parent.mkdir(parents=True)
    with open(path, "wb") as fh:
        fh.truncate(MAX_JSON_BYTES + 1)
    assert main(["check", "--root", str(registry), "--format", "text"]) == 1
    out = capsys.readouterr()
    assert "ORV111" in out.out and "Traceback" not in out.out + out.err
