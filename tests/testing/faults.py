"""Fault injection for the durability tests: run `orv ARGS` in a child process that dies, stops or is
interrupted at an exact point of its writing, and compare registry trees afterwards.

    python -m tests.testing.faults SPEC -- ARGS...

SPEC is JSON. `{"at": ["replace", 2, "before"], "do": "kill"}`: SIGKILL itself just before its second
os.replace (ops: replace, fsync, mkstemp, mkdtemp, open-write, fork; when: before | after). `"do": "stop"`:
SIGSTOP itself there (a test resumes it with SIGCONT); `"do": "interrupt"`: send SIGINT to its whole
process group, as a terminal's Ctrl-C does. `"count": FILE`: write how often each op ran to FILE.
`"match": "S"`: only calls whose path contains S count. `"trace": FILE`: append `op path` per call.
`"fsize": N`: a file size limit of N bytes (RLIMIT_FSIZE: a full disk where mounting is not allowed). `"no_lock": true`: writers do not take turns
(the forgery the concurrency test must catch). The real os functions do the work; nothing is mocked
but the moment.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.testing.paths import REPO

SKIP = (".git",)


def run(
    spec: dict[str, Any], args: list[str], cwd: Path | None = None, timeout: float = 60, wait: bool = True
) -> subprocess.CompletedProcess[str] | subprocess.Popen[str]:
    """`orv ARGS` under SPEC in its own process group (so a group Ctrl-C reaches only it)."""
    cmd = [sys.executable, "-m", "tests.testing.faults", json.dumps(spec), "--", *args]
    repo = str(REPO)
    env = {**os.environ, "PYTHONPATH": repo + os.pathsep + os.environ.get("PYTHONPATH", "")}
    popen = subprocess.Popen(
        cmd, cwd=cwd or repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    if not wait:
        return popen
    try:
        out, err = popen.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(popen.pid, signal.SIGKILL)
        popen.communicate()
        raise
    return subprocess.CompletedProcess(cmd, popen.returncode, out, err)


def tree(root: Path) -> dict[str, bytes]:
    """Every file under root but the git folder: path -> bytes."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP]
        for name in filenames:
            full = Path(dirpath) / name
            out[full.relative_to(root).as_posix()] = full.read_bytes()
    return out


def stopped(pid: int) -> bool:
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        return fh.read().rsplit(")", 1)[1].split()[0] == "T"


# --------------------------------------------------------------------------- inside the child


def _install(spec: dict[str, Any]) -> None:
    at = spec.get("at")
    counts: dict[str, int] = {}
    count_file = spec.get("count")
    match = spec.get("match")
    trace = spec.get("trace")
    if spec.get("fsize") is not None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (spec["fsize"], spec["fsize"]))

    def fault() -> None:
        if spec.get("do") == "stop":
            os.kill(os.getpid(), signal.SIGSTOP)
        elif spec.get("do") == "interrupt":
            os.killpg(0, signal.SIGINT)
        else:
            os.kill(os.getpid(), signal.SIGKILL)

    def hook(op: str, real: Callable[..., Any], path_of: Callable[..., Any] | None = None) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if match is not None and (path_of is None or match not in str(path_of(*args, **kwargs))):
                return real(*args, **kwargs)
            counts[op] = counts.get(op, 0) + 1
            if trace:
                with real_open(trace, "a", encoding="utf-8") as fh:
                    fh.write(f"{op} {path_of(*args, **kwargs) if path_of else ''}\n")
            if count_file:
                with real_open(count_file, "w", encoding="utf-8") as fh:
                    fh.write(json.dumps(counts))
            hit = at is not None and at[0] == op and at[1] == counts[op]
            if hit and at[2] == "before":
                fault()
            result = real(*args, **kwargs)
            if hit and at[2] == "after" and (op != "fork" or result != 0):
                fault()
            return result

        return wrapper

    real_open = builtins.open

    def opened(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        return (opener if ("w" in mode or "a" in mode) else real_open)(file, mode, *args, **kwargs)

    opener = hook("open-write", real_open, lambda file, *a, **k: file)
    builtins.open = opened
    os.replace = hook("replace", os.replace, lambda src, dst, *a, **k: dst)
    os.fsync = hook("fsync", os.fsync, lambda fd: os.readlink(f"/proc/self/fd/{fd}"))
    os.fork = hook("fork", os.fork)
    tempfile.mkstemp = hook("mkstemp", tempfile.mkstemp, lambda *a, **k: k.get("dir"))
    tempfile.mkdtemp = hook("mkdtemp", tempfile.mkdtemp, lambda *a, **k: k.get("dir"))
    if spec.get("no_lock"):
        import validator.files.atomic

        nothing = contextlib.nullcontext
        validator.files.atomic.writer_lock = lambda near: nothing()  # type: ignore[assignment]
        for name in (
            "validator.registry.store",
            "validator.registry.recipe_edits",
            "validator.registry.catalog_edits",
            "validator.commands.catalog",
            "validator.commands.new_recipe",
            "validator.importers",
        ):
            module = __import__(name, fromlist=["writer_lock"])
            module.writer_lock = lambda near: nothing()  # type: ignore[attr-defined]


def main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    assert argv[1] == "--"
    _install(spec)
    from validator.cli import main as orv

    return orv(argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
