"""`orv check` text output as people expect it: colour only on a terminal (NO_COLOR / FORCE_COLOR /
--color), --quiet, --severity, --statistics, legacy-import findings counted by code unless --show-all,
exit status in --help; on this repository a screenful whose every number a flag reaches."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from tests.testing.paths import REPO
from tests.testing.registry import CASES, make_registry
from validator.cli import main

ANSI = "\x1b["
FINDING = re.compile(r"^\S+:\d+:\d+: (ORV\d{3}) (error|warning|notice): ")
COUNTED = re.compile(r"^(ORV\d{3}) (error|warning|notice): (\d+) finding\(s\) on legacy-imported entries")
STATISTIC = re.compile(r"^\s*(\d+)  (ORV\d{3})  (error|warning|notice)")
SUMMARY = re.compile(r"^orv: (\d+) files checked, (\d+) error\(s\), (\d+) warning\(s\)")


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    capsys.readouterr()
    code = main(["check", *args])
    return code, capsys.readouterr().out.splitlines()


@pytest.fixture(scope="module")
def repo_json() -> list[dict[str, object]]:
    """Every finding on this repository (JSON is never filtered by the text options)."""
    import io
    from contextlib import redirect_stdout

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        main(["check", "--root", str(REPO), "--format", "json"])
    findings: list[dict[str, object]] = json.loads(buffer.getvalue())["findings"]
    return findings


# --------------------------------------------------------------------------- this repository


def test_a_clean_main_prints_a_screenful_and_every_number_is_reachable(
    capsys: pytest.CaptureFixture[str], repo_json: list[dict[str, object]]
) -> None:
    code, lines = check(capsys, "--root", str(REPO))
    assert len(lines) <= 40, "\n".join(lines)
    assert code == 0 and not any(ANSI in line for line in lines)  # not a terminal: no colour
    total = Counter((f["code"], f["severity"]) for f in repo_json)
    files, errors, warnings = map(int, SUMMARY.match(lines[-1]).groups())  # type: ignore[union-attr]
    assert (errors, warnings) == (
        sum(n for (_, s), n in total.items() if s == "error"),
        sum(n for (_, s), n in total.items() if s == "warning"),
    )
    # each finding is either listed or counted on a per-code line; --show-all lists the counted ones
    listed = Counter(m.groups() for m in map(FINDING.match, lines) if m)
    counted = {(m[1], m[2]): int(m[3]) for m in map(COUNTED.match, lines) if m}
    assert listed + Counter(counted) == total
    _, every = check(capsys, "--root", str(REPO), "--show-all")
    assert Counter(m.groups() for m in map(FINDING.match, every) if m) == total
    assert not any(COUNTED.match(line) for line in every)
    if counted:
        assert f"{sum(counted.values())} on legacy imports counted by code (--show-all lists them)" in lines[-1]
    # --statistics gives the same per-code numbers
    _, stats = check(capsys, "--root", str(REPO), "--statistics")
    assert {(m[2], m[3]): int(m[1]) for m in map(STATISTIC.match, stats) if m} == dict(total)


def test_quiet_and_severity_on_this_repository(
    capsys: pytest.CaptureFixture[str], repo_json: list[dict[str, object]]
) -> None:
    errors = [f for f in repo_json if f["severity"] == "error"]
    below = len(repo_json) - len(errors)
    code, quiet = check(capsys, "--root", str(REPO), "--quiet")
    assert [m.group(2) for m in map(FINDING.match, quiet) if m] == ["error"] * len(errors)
    assert all(FINDING.match(line) or line.startswith("    hint: ") for line in quiet[:-1])
    assert code == (1 if errors else 0)
    if below:
        assert quiet[-1].endswith(f"; {below} not shown (--quiet)")
    _, only_errors = check(capsys, "--root", str(REPO), "--severity", "error", "--show-all")
    assert [line for line in only_errors if FINDING.match(line)] == [line for line in quiet if FINDING.match(line)]


# --------------------------------------------------------------------------- a small registry


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """One error (ORV105) and one warning (ORV408 on a legacy-imported recipe), from the golden cases."""
    root = make_registry(tmp_path / "registry", CASES / "version-as-number")
    legacy = make_registry(tmp_path / "legacy", CASES / "orv408-legacy-unpinned")
    for path in (legacy / "recipes").rglob("*.yaml"):
        target = root / path.relative_to(legacy)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    return root


def test_colour_only_on_request_or_a_terminal(
    mixed: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    code, plain = check(capsys, "--root", str(mixed))
    assert code == 1 and ANSI not in "\n".join(plain)
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, forced = check(capsys, "--root", str(mixed))
    assert "\x1b[31m\x1b[1merror\x1b[0m" in "\n".join(forced)
    monkeypatch.setenv("NO_COLOR", "1")  # no-color.org wins over FORCE_COLOR
    assert ANSI not in "\n".join(check(capsys, "--root", str(mixed))[1])
    assert ANSI in "\n".join(check(capsys, "--root", str(mixed), "--color", "always")[1])
    monkeypatch.delenv("NO_COLOR")
    assert ANSI not in "\n".join(check(capsys, "--root", str(mixed), "--color", "never")[1])
    assert ANSI not in "\n".join(check(capsys, "--root", str(mixed), "--format", "json")[1])


def test_each_option_on_a_registry_with_an_error_and_a_legacy_warning(
    mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = check(capsys, "--root", str(mixed))
    assert code == 1
    assert [FINDING.match(line).group(1) for line in lines if FINDING.match(line)] == ["ORV105"]  # type: ignore[union-attr]
    assert any(
        line.startswith("ORV408 warning: 1 finding(s) on legacy-imported entries: legacy entry without")
        for line in lines
    )
    assert lines[-1].endswith("1 error(s), 1 warning(s); 1 on legacy imports counted by code (--show-all lists them)")

    code, quiet = check(capsys, "--root", str(mixed), "-q")
    assert code == 1 and "ORV408" not in "\n".join(quiet) and "ORV105" in quiet[0]
    assert quiet[-1].endswith("; 1 not shown (--quiet)")

    _, stats = check(capsys, "--root", str(mixed), "--statistics")
    assert [line.split()[:3] for line in stats[:-1]] == [["1", "ORV105", "error"], ["1", "ORV408", "warning"]]

    _, every = check(capsys, "--root", str(mixed), "--show-all")
    assert sorted(FINDING.match(line).group(1) for line in every if FINDING.match(line)) == ["ORV105", "ORV408"]  # type: ignore[union-attr]

    _, errors_only = check(capsys, "--root", str(mixed), "--severity", "error", "--format", "json")
    assert [f["code"] for f in json.loads("\n".join(errors_only))["findings"]] == ["ORV105"]
    assert main(["check", "--root", str(mixed), "--severity", "error"]) == 1  # exit status counts every error


def test_exit_status_is_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["--help"], ["check", "--help"]):
        capsys.readouterr()
        assert main(args) == 0
        out = capsys.readouterr().out
        assert "Exit status:" in out and "0  no errors" in out and "1  errors found" in out and "2  usage" in out


# --------------------------------------------------------------------------- hints


VERSION = re.compile(r"\b\d+\.\d+\.\d+\b")


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.name.startswith("orv4")))
def test_hints_never_invent_a_version_number(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A version in a hint must come from the file it points at (`==0.30.0` -> `0.30.0`), never from orv."""
    root = make_registry(tmp_path / "registry", CASES / case)
    _, lines = check(capsys, "--root", str(root), "--format", "json")
    for finding in json.loads("\n".join(lines))["findings"]:
        text = (root / finding["path"]).read_text(encoding="utf-8", errors="replace")
        for version in VERSION.findall(finding["hint"]):
            assert version in text, (finding["code"], finding["hint"])


def test_no_hint_on_this_repository_invents_a_version(repo_json: list[dict[str, object]]) -> None:
    for finding in repo_json:
        text = (REPO / str(finding["path"])).read_text(encoding="utf-8", errors="replace")
        for version in VERSION.findall(str(finding["hint"])):
            assert version in text, (finding["code"], finding["hint"])


# --------------------------------------------------------------------------- exactness debts (issue 36)


def test_the_text_reporter_is_linear_in_the_findings() -> None:
    """5,000 collapsed and shown findings: each finding is hashed a bounded number of times (main rebuilt the
    set of collapsed findings for every finding: n x m hashes, 2.0 s)."""
    from dataclasses import dataclass

    from validator.diagnostics import Diagnostic, Result, Severity
    from validator.report.text import TextOptions, render_with

    hashes = Counter[str]()

    @dataclass(frozen=True, eq=True)
    class Counted(Diagnostic):
        def __hash__(self) -> int:
            hashes["n"] += 1
            return hash((self.code, self.path, self.line))

    n = 5000
    legacy = frozenset(f"recipes/inference/m/legacy-{i}.yaml" for i in range(n // 2))
    diagnostics = tuple(
        Counted(
            "ORV408", Severity.WARNING, f"recipes/inference/m/{'legacy' if i % 2 else 'new'}-{i // 2}.yaml", 1, 1, "m"
        )
        for i in range(n)
    )
    out = render_with(Result(diagnostics, files_checked=n), TextOptions(collapse=True, legacy=legacy))
    assert "2500 finding(s) on legacy-imported entries" in out
    assert hashes["n"] <= 3 * n


def test_orv118_locates_the_real_file_and_escapes_only_for_display(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_registry(tmp_path / "registry")
    folder = root / "recipes" / "inference" / "qwen3.8-27b"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "has space é.yaml").write_text("id: x\n", encoding="utf-8")
    rel = "recipes/inference/qwen3.8-27b/has space é.yaml"
    main(["check", "--root", str(root), "--no-cache", "--format", "json"])
    located = {f["path"] for f in json.loads(capsys.readouterr().out)["findings"] if f["code"] == "ORV118"}
    assert located == {rel}
    main(["check", "--root", str(root), "--no-cache", "--format", "github"])
    annotations = [line for line in capsys.readouterr().out.splitlines() if "title=ORV118" in line]
    assert annotations and all(f"file={rel.replace(':', '%3A')}," in line for line in annotations)
    main(["check", "--root", str(root), "--no-cache", "--format", "sarif"])
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in json.loads(capsys.readouterr().out)["runs"][0]["results"]
        if r["ruleId"] == "ORV118"
    }
    assert uris == {"recipes/inference/qwen3.8-27b/has%20space%20%C3%A9.yaml"}
