"""Bounds on work instead of stopwatches: a test that holds orv to "within seconds" on a loaded 2-core
machine fails for the load, not for orv. What these helpers bound instead:

- `orv_measured`: `python -m validator ARGS` in a subprocess that reports, as it exits, the bytes it
  read (/proc/self/io `rchar`: every read(2), files and pipes alike) and its peak resident memory.
  A command that reads a 4 GiB input, or holds it, shows it in these figures whatever the load.
- `HANG_SECONDS` / `hang_guard`: a generous limit that only a hang reaches (minutes, where the work
  takes well under a second). Reaching it is reported as a hang, never as slowness.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.testing.paths import REPO

HANG_SECONDS = 120  # refusals take well under a second even on a loaded machine; only a hang gets here

# Runs `python -m validator` exactly (runpy, as `-m` does) and writes what it did to $ORV_TEST_WORK at exit,
# SystemExit included. Imports count in rchar too (the interpreter's and orv's own .py/.pyc files).
_PROBE = r"""
import json, os, resource, runpy, sys
out = os.environ.pop("ORV_TEST_WORK")
try:
    runpy.run_module("validator", run_name="__main__", alter_sys=True)
finally:
    with open("/proc/self/io", encoding="ascii") as fh:
        io = dict(line.split(": ") for line in fh.read().splitlines())
    usage = resource.getrusage(resource.RUSAGE_SELF)
    with open(out, "w", encoding="utf-8") as fh:
        json.dump({"bytes_read": int(io["rchar"]), "peak_rss_bytes": usage.ru_maxrss * 1024}, fh)
"""


def orv_measured(
    args: list[str], *, cwd: Path, preexec_fn: Callable[[], None] | None = None
) -> tuple[subprocess.CompletedProcess[str], dict[str, int]]:
    """`python -m validator ARGS` in a child; its result and the work it did (bytes_read, peak_rss_bytes).

    A child that does not exit within HANG_SECONDS fails the test as a hang."""
    with tempfile.TemporaryDirectory() as scratch:
        report = os.path.join(scratch, "work.json")
        env = {
            **os.environ,
            "ORV_TEST_WORK": report,
            "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        }
        try:
            proc = subprocess.run(
                [sys.executable, "-c", _PROBE, *args],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=HANG_SECONDS,
                preexec_fn=preexec_fn,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"`orv {' '.join(args)}` hung: no exit within {HANG_SECONDS} s")
        assert os.path.exists(report), f"the child left no work report (killed?): {proc.stderr}"
        with open(report, encoding="utf-8") as fh:
            work: dict[str, int] = json.load(fh)
    return proc, work


class Hang(BaseException):
    """Raised by hang_guard; a BaseException, so no `except Exception` in orv can turn it into a finding."""


@contextlib.contextmanager
def hang_guard(seconds: int = HANG_SECONDS) -> Iterator[None]:
    """Fail the block as a hang if it runs past `seconds` (SIGALRM; the main thread only)."""

    def alarm(signum: int, frame: Any) -> None:
        raise Hang(f"hung: still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def bytes_read() -> int:
    """Bytes this process has read so far (/proc/self/io `rchar`: every read(2), files and pipes alike)."""
    with open("/proc/self/io", encoding="ascii") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("rchar:"))
