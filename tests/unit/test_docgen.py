"""docs/checks.md is the registry's documentation, regenerated, never hand-edited; `orv explain` prints it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.paths import REPO as ROOT
from validator.checks import all_checks, docgen
from validator.cli import main

DOCS = ROOT / "docs" / "checks.md"
CODES = sorted(all_checks())


def test_committed_checks_md_matches_a_regeneration() -> None:
    assert DOCS.read_text(encoding="utf-8") == docgen.render(all_checks()), (
        "docs/checks.md is out of date: run `python -m validator.checks.docgen` and commit the result"
    )


def test_every_code_has_a_section_with_severity_and_its_documentation() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for code, entry in all_checks().items():
        heading = f"### {code} — {entry.title}\n\n*{entry.severity.value}*"
        assert heading in text, code
        section = text.split(heading, 1)[1].split("\n### ", 1)[0]
        assert entry.doc in section, code


def test_index_anchors_follow_githubs_heading_slugs() -> None:
    # GitHub lower-cases, drops punctuation (the em dash) and turns each space into a hyphen.
    assert docgen._anchor("ORV101", "syntax error") == "orv101--syntax-error"
    assert docgen._anchor("ORV303", "claim copied across GPU counts") == "orv303--claim-copied-across-gpu-counts"
    assert docgen._anchor("ORV116", "tier declared by submitter (T0-T3)") == "orv116--tier-declared-by-submitter-t0-t3"
    text = DOCS.read_text(encoding="utf-8")
    for code, entry in all_checks().items():
        assert f"[{code}](#{docgen._anchor(code, entry.title)})" in text


def test_docgen_writes_the_file_and_check_mode_detects_drift(tmp_path: Path) -> None:
    out = tmp_path / "docs" / "checks.md"
    assert docgen.main(["--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == docgen.render(all_checks())
    assert docgen.main(["--output", str(out), "--check"]) == 0
    out.write_text(out.read_text(encoding="utf-8").replace("ORV401", "ORV499", 1), encoding="utf-8")
    assert docgen.main(["--output", str(out), "--check"]) == 1
    assert docgen.main(["--output", str(tmp_path / "missing.md"), "--check"]) == 1
    assert [p.name for p in out.parent.iterdir()] == ["checks.md"]  # no temporary file left behind


@pytest.mark.parametrize("code", CODES)
def test_orv_explain_prints_the_documentation(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    entry = all_checks()[code]
    assert main(["explain", code.lower()]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{code} ({entry.severity.value}): {entry.title}")
    assert entry.doc in out


def test_orv_explain_all_lists_every_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "all"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert listed == CODES


@pytest.mark.parametrize("code", ["ORV999", "ORV4", "nonsense", ""])
def test_orv_explain_unknown_code_exits_2(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", code]) == 2
    captured = capsys.readouterr()
    assert "unknown check code" in captured.err
    assert "Traceback" not in captured.out + captured.err
