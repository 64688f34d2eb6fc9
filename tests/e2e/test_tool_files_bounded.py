"""The adapters of issue 30 (llama-bench, AIPerf, trtllm-bench) read a contributor's files within the same
bounds as the others (issue 35, docs/limits.md): each hostile input makes `orv add-run` exit 1 having read a
bounded number of bytes under a 2 GiB address-space limit, with a finding naming the file, no traceback, nothing written.

The capped subprocess and its assertions are tests/e2e/test_contributor_files.py's `refused`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.test_contributor_files import MODEL, _cap_address_space, deep, refused
from tests.testing.bounds import HANG_SECONDS
from tests.testing.registry import TOOLS, make_registry

LLAMA = TOOLS / "llamabench" / "pp512-tg128.json"
AIPERF = TOOLS / "aiperf" / "streaming"
TRT_REQUESTS = TOOLS / "trtllm" / "streaming-requests.json"
TRT_REPORT = TOOLS / "trtllm" / "streaming-report.json"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_registry(tmp_path / "registry")


def llama(dest: Path) -> tuple[Path, list[str]]:
    path = dest / "bench.json"
    shutil.copy(LLAMA, path)
    return path, ["--from", "llama-bench", str(path)]


def aiperf(dest: Path) -> tuple[Path, list[str]]:
    folder = dest / "artifacts"
    shutil.copytree(AIPERF, folder)
    return folder / "profile_export.jsonl", ["--from", "aiperf", str(folder)]


def trt_requests(dest: Path) -> tuple[Path, list[str]]:
    requests, report = dest / "requests.json", dest / "report.json"
    shutil.copy(TRT_REQUESTS, requests)
    shutil.copy(TRT_REPORT, report)
    return requests, ["--from", "trtllm-bench", str(requests), "--report", str(report)]


def trt_report(dest: Path) -> tuple[Path, list[str]]:
    requests, args = trt_requests(dest)
    return dest / "report.json", args


# each: (the file a hostile edit goes into, the add-run arguments that read it)
INPUTS: dict[str, Callable[[Path], tuple[Path, list[str]]]] = {
    "llama-bench": llama,
    "aiperf": aiperf,
    "trtllm-bench requests": trt_requests,
    "trtllm-bench report": trt_report,
}


def add_run(root: Path, args: list[str]) -> str:
    return refused(root, "add-run", "--root", str(root), *args, *MODEL)


@pytest.mark.parametrize("which", INPUTS)
def test_a_file_linked_to_dev_zero_is_refused(root: Path, tmp_path: Path, which: str) -> None:
    target, args = INPUTS[which](tmp_path)
    target.unlink()
    target.symlink_to("/dev/zero")
    err = add_run(root, args)
    assert "ORV114" in err and target.name in err


@pytest.mark.parametrize("which", INPUTS)
def test_a_file_that_is_a_fifo_is_refused_without_blocking(root: Path, tmp_path: Path, which: str) -> None:
    target, args = INPUTS[which](tmp_path)
    target.unlink()
    os.mkfifo(target)
    err = add_run(root, args)
    assert "ORV114" in err and target.name in err


def test_an_aiperf_folder_whose_records_link_out_of_it_is_refused(root: Path, tmp_path: Path) -> None:
    target, args = aiperf(tmp_path)
    outside = tmp_path / "elsewhere.jsonl"
    shutil.move(target, outside)
    target.symlink_to(outside)
    err = add_run(root, args)
    assert "ORV114" in err and target.name in err


def _replace_first_string(path: Path, replacement: str) -> None:
    """Put `replacement` (raw JSON text) in place of the first string value after a key."""
    text = path.read_text()
    at = text.index('": "') + 3
    end = text.index('"', at + 1) + 1
    path.write_text(text[:at] + replacement + text[end:])


@pytest.mark.parametrize("which", INPUTS)
def test_200000_deep_json_is_a_finding(root: Path, tmp_path: Path, which: str) -> None:
    target, args = INPUTS[which](tmp_path)
    if '": "' not in target.read_text():  # compact JSON lines
        target.write_text(target.read_text().replace('":"', '": "', 1))
    _replace_first_string(target, deep(200_000))
    err = add_run(root, args)
    assert "ORV112" in err and target.name in err


@pytest.mark.parametrize("which", INPUTS)
def test_a_5000_digit_integer_is_a_finding(root: Path, tmp_path: Path, which: str) -> None:
    target, args = INPUTS[which](tmp_path)
    if '": "' not in target.read_text():
        target.write_text(target.read_text().replace('":"', '": "', 1))
    _replace_first_string(target, "1" * 5000)
    err = add_run(root, args)
    assert "ORV113" in err and target.name in err


@pytest.mark.parametrize("which", INPUTS)
@pytest.mark.parametrize("separator", ["\u2028", "\u0085"])
def test_a_line_separator_in_a_string_is_no_crash(root: Path, tmp_path: Path, which: str, separator: str) -> None:
    """U+2028 and U+0085 are ordinary characters inside a JSON string, yet `str.splitlines` breaks lines at
    them: a reader that splits JSON lines that way cuts a record in two. Either the run is stored, its bytes
    hashing to its name, or it is refused; never a traceback."""
    target, args = INPUTS[which](tmp_path)
    text = target.read_text()
    at = re.search(r'":\s*"', text).end()  # inside the first string value
    target.write_text(text[:at] + separator + text[at:])
    before = set(root.rglob("*"))
    proc = subprocess.run(
        [sys.executable, "-m", "validator", "add-run", "--root", str(root), *args, *MODEL],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=HANG_SECONDS,
        preexec_fn=_cap_address_space,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "ORV101" not in proc.stderr  # the file stays one JSON document: no reader cut it at the separator
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    for path in set(root.rglob("*")) - before:
        if path.parent.parent.name == "runs" and path.suffix == ".json":
            assert hashlib.sha256(path.read_bytes()).hexdigest() == path.stem
