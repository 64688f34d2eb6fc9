"""Engine behaviour that no static tree shows: crashing checks, path filtering."""

from __future__ import annotations

from pathlib import Path

from validator import checks
from validator.checks import Check
from validator.diagnostics import Severity
from validator.engine.evaluate import Config, run


def test_a_crashing_check_is_reported_not_raised(registry: Path, monkeypatch) -> None:
    def explode(snapshot):  # type: ignore[no-untyped-def]
        yield from ()
        raise ZeroDivisionError("boom")

    checks.all_checks()
    monkeypatch.setitem(checks.REGISTRY, "ORV999", Check("ORV999", Severity.ERROR, "t", "registry", "doc", explode))
    result = run(Config(root=str(registry), skip_boards=True))
    assert [d.code for d in result.diagnostics] == ["ORV900"]
    assert "ORV999 crashed" in result.diagnostics[0].message
    assert result.exit_code == 1
