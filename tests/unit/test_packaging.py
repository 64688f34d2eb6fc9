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


def test_every_data_file_orv_reads_is_package_data() -> None:
    """The engines' flag tables are read at check time (stacks/launch_args.py): a wheel without them would
    fail every recipe with a launch."""
    block = re.search(r"^\[tool.setuptools.package-data\](.*?)^\[", (ROOT / "pyproject.toml").read_text(), re.S | re.M)
    assert block is not None
    assert re.search(r'^"validator.stacks" = \["flags/\*\.json"\]', block.group(1), re.M)
    assert list((ROOT / "validator" / "stacks" / "flags").glob("*.json"))
