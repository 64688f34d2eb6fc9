"""The wheel ships every package under validator/ (pyproject lists them; a forgotten one would import
in a checkout and fail in the Action's installed orv)."""

from __future__ import annotations

import re

from tests.testing.paths import REPO as ROOT


def test_every_package_under_validator_is_listed_in_pyproject() -> None:
    block = re.search(r"^packages = \[(.*?)\]", (ROOT / "pyproject.toml").read_text(), re.S | re.M)
    assert block is not None
    listed = set(re.findall(r'"([a-z_.]+)"', block.group(1)))
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "validator").rglob("__init__.py")}
    assert found - listed == set()
    assert "validator.schemas" in listed  # schema/, mapped by package-dir
