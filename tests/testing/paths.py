"""Where things are, for every test wherever its file sits (tests/unit/, tests/e2e/): one definition."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent  # tests/
REPO = TESTS.parent  # the project's root: validator/, docs/, pyproject.toml
CASES = TESTS / "cases"  # golden cases
FIXTURES = TESTS / "fixtures"  # real tool outputs, seeds, configs
