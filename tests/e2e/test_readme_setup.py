"""README's set-up runs anywhere (issue 52): its apt-get lines work as root without sudo (containers, CI
images) and as a user with sudo, update the package lists first, and `.ci/run` ends with exactly the README's
test command."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.testing.paths import REPO


def _setup() -> str:
    return (
        (REPO / "README.md")
        .read_text(encoding="utf-8")
        .split("\n## Set up on a fresh machine\n", 1)[1]
        .split("\n## ", 1)[0]
    )


def _blocks() -> list[list[str]]:
    return [b.strip().splitlines() for b in re.findall(r"^```sh\n(.*?)^```$", _setup(), re.S | re.M)]


def _apt_lines() -> list[str]:
    prose = re.sub(r"^```sh\n.*?^```$", "", _setup(), flags=re.S | re.M)
    inline = re.findall(r"`([^`\n]*apt-get[^`\n]*)`", prose.replace("`\n", "` "))
    in_blocks = [line for block in _blocks() for line in block if "apt-get" in line]
    return [line.split("  #", 1)[0].strip() for line in inline + in_blocks if "install" in line]


def test_the_two_set_up_commands_and_ci_run_agree() -> None:
    blocks = _blocks()
    assert [b[-1] for b in blocks] == [
        "python -m pip install -e . && orv check",
        "python -m pip install -e '.[test]' && python -m pytest",
    ]
    ci = [line for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines() if line.strip()]
    assert ci[-1] == blocks[-1][-1]  # .ci/run calls exactly the README's test command
    assert len(_apt_lines()) == 2 and all("apt-get update &&" in line for line in _apt_lines())


@pytest.mark.parametrize("with_sudo", [False, True], ids=["root-without-sudo", "user-with-sudo"])
def test_the_apt_lines_run_with_and_without_sudo(tmp_path: Path, with_sudo: bool) -> None:
    """Each apt line as written, in bash, with stand-ins for apt-get (and sudo) that record how they were called."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    stand_ins = {"apt-get": f'echo "apt-get $*" >> {log}\n'}
    if with_sudo:
        stand_ins["sudo"] = f'echo "sudo $1" >> {log}\nexec "$@"\n'
    for name, body in stand_ins.items():
        (bin_dir / name).write_text("#!/bin/bash\n" + body, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    for line in _apt_lines():
        log.unlink(missing_ok=True)
        done = subprocess.run(["/bin/bash", "-c", line], env={"PATH": str(bin_dir)}, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        calls = log.read_text(encoding="utf-8").splitlines()
        apt = [c for c in calls if c.startswith("apt-get")]
        assert apt[0] == "apt-get update" and apt[1].startswith("apt-get install -y ")
        assert (calls.count("sudo apt-get") == 2) is with_sudo
