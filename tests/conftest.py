"""Shared fixtures: registry trees in temporary folders (helpers live in tests/testing/)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from hypothesis import settings

# Hypothesis: CI (.ci/run, the default) is derandomized — every run tries the same inputs, so a
# failure is reproducible and a pass is not luck. HYPOTHESIS_PROFILE=explore draws new random
# inputs each run and, for tests that leave max_examples to the profile, many more of them; a
# failure it finds becomes an explicit case in tests/unit/test_crash_regressions.py.
# "The same inputs" holds for the same set of loaded modules: Hypothesis mixes constants from every module in
# sys.modules into its draws, so one test file run alone can draw other examples than in the full suite
# (each deterministic). Reproduce a full-suite failure with the full suite, or pin it with @example.
# A shell without job control starts a background command with SIGINT ignored, and an ignored signal stays
# ignored in every process it starts: the Ctrl-C tests (tests/e2e/test_durability.py) would then deliver
# their Ctrl-C to commands that never see it. Python's own handler back, for the suite and its children.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile(
    "explore",
    derandomize=False,
    database=None,
    deadline=None,
    print_blob=True,
    max_examples=int(os.environ.get("ORV_EXPLORE_EXAMPLES", "20000")),
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def fuzz_examples(ci: int) -> int:
    """A fuzz test's budget: `ci` examples in CI, the explore profile's many when exploring."""
    return settings.default.max_examples if os.environ.get("HYPOTHESIS_PROFILE") == "explore" else ci


from tests.testing.registry import make_registry  # noqa: E402 - after the Hypothesis profile is loaded


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return make_registry(tmp_path / "registry")


@pytest.hookimpl(tryfirst=True)  # before `-m` selects: a forgotten marker must not let a browser test through
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that asks for the `browser` fixture (tests/e2e/test_site.py) drives Chromium: marked so."""
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()) and item.get_closest_marker("browser") is None:
            item.add_marker(pytest.mark.browser)
