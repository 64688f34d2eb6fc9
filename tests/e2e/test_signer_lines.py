"""measurers/allowed_signers lines as a maintainer might write them (issue 51, accountable measurers).

A review found two holes beside the tested ones: a revocation misspelled (`revoked: 2026-12-01`,
`Revoked:…`, `REVOKED …`) left the key trusted and showed the maintainer only the waivable ORV607, and a
wildcard principal (`lab-*`), flagged by ORV225 on its own pull request, was still handed to ssh-keygen, so
one key could sign as any measurer. A misspelled revocation now revokes all the same and is ORV225; a line
that is not one measurer id registers no one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.factories import store_run, training_recipe, write_recipe
from tests.testing.git import commit_all
from tests.testing.signing import keygen, measured, register, sign, tier
from tests.unit.test_copies import gate, on_main, open_pr

pytestmark = pytest.mark.git

WELL_SPELLED = ["revoked:2026-12-01", "github:lab-b revoked:2026-12-01"]
MISSPELLED = [
    "revoked: 2026-12-01",
    "Revoked:2026-12-01",
    "revoked:2026-13-45",
    "revoked:",
    "REVOKED 2026-12-01",
    "revoked=2026-12-01",
]


def reproduced(tmp_path: Path) -> tuple[Path, str, Path]:
    """main: a recipe at T3 (lab-a's and lab-b's honest signed runs); a pull request branch open."""
    repo = on_main(tmp_path)
    alice, bob = keygen(tmp_path, "lab-a"), keygen(tmp_path, "lab-b")
    register(repo, ("lab-a", alice), ("lab-b", bob))
    recipe = training_recipe("reproduced", 1480.4)
    first = store_run(repo, measured(recipe, 1480.4, "lab-a", "2026-10-18T10:00:00Z", 1))
    second = store_run(repo, measured(recipe, 1480.4, "lab-b", "2026-10-19T11:00:00Z", 2))
    recipe["runs"] = [first, second]
    rel = write_recipe(repo, recipe)
    sign(repo, first, alice)
    sign(repo, second, bob)
    open_pr(repo)
    assert tier(repo, rel).tier == "T3"
    return repo, rel, bob


def _mark_lab_b(repo: Path, mark: str) -> None:
    path = repo / "measurers" / "allowed_signers"
    lines = [line + " " + mark if line.startswith("lab-b ") else line for line in path.read_text().splitlines()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    commit_all(repo, "revoke lab-b's key")


@pytest.mark.parametrize("mark", WELL_SPELLED + MISSPELLED)
def test_a_revocation_revokes_however_it_is_spelled_and_a_misspelling_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mark: str
) -> None:
    repo, rel, _ = reproduced(tmp_path)
    _mark_lab_b(repo, mark)
    code, errors, _ = gate(repo, capsys)
    assert code == 1 and ("ORV607", "measurers/allowed_signers") in errors  # a signer change: always a waiver
    assert tier(repo, rel).tier == "T2", mark  # lab-b's run counts as unsigned
    misspelled = ("ORV225", "measurers/allowed_signers") in errors
    assert misspelled is (mark in MISSPELLED), (mark, errors)


@pytest.mark.parametrize("principal", ["lab-?", "lab-*", "*", "lab-b,lab-c"])
def test_a_line_that_is_not_one_measurer_id_registers_no_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], principal: str
) -> None:
    """Merged anyway (its ORV225/ORV610 waived by mistake), the line still signs as no one: the recipe whose
    second signature rests on it stays at T2. Its honest twin, `lab-b` itself, is the T3 of `reproduced`."""
    repo, rel, _ = reproduced(tmp_path)
    path = repo / "measurers" / "allowed_signers"
    path.write_text(
        "\n".join(
            principal + line[len("lab-b") :] if line.startswith("lab-b ") else line
            for line in path.read_text().splitlines()
        )
        + "\n",
        encoding="utf-8",
    )
    commit_all(repo, "lab-b's key under a pattern")
    code, errors, _ = gate(repo, capsys)
    assert code == 1 and {c for c, _ in errors} & {"ORV225", "ORV610"}, errors
    assert tier(repo, rel).tier == "T2", principal
