"""Measurer keys and signed runs for tests: real `ssh-keygen` keys made in a temporary folder, never committed."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path
from typing import Any

from tests.testing.factories import training_run
from validator.cli import main
from validator.engine.evaluate import Config, analyse, run
from validator.evidence.tiers import derive
from validator.hashing import run_path


def keygen(folder: Path, name: str) -> Path:
    """A fresh ed25519 key pair in folder (outside the registry); returns the private key's path."""
    key = folder / "keys" / name
    key.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


def register(root: Path, *entries: tuple[str, Path]) -> None:
    lines = [
        f"{who} {(key.parent / (key.name + '.pub')).read_text().split(' ', 2)[0]} "
        f"{(key.parent / (key.name + '.pub')).read_text().split(' ', 2)[1]}"
        for who, key in entries
    ]
    (root / "measurers").mkdir(exist_ok=True)
    (root / "measurers" / "allowed_signers").write_text("# measurers\n" + "\n".join(lines) + "\n")


def measured(recipe: dict[str, Any], tok: float, who: str, when: str, seed: int) -> dict[str, Any]:
    """A training run of `recipe` by `who` at `when` whose step times vary like a real run's."""
    doc = training_run(recipe, tok, measured_by=who)
    rng = random.Random(seed)
    jitter = [1 + rng.uniform(-0.02, 0.02) for _ in doc["samples"]]
    mean = sum(jitter[2:]) / len(jitter[2:])  # the workload's 2 warm-up steps are not timed
    for sample, j in zip(doc["samples"], jitter):
        sample["time_s"] = round(sample["time_s"] * j / mean, 9)
    doc["measured_at"] = when
    return doc


def sign(root: Path, digest: str, key: Path) -> Path:
    rel = run_path(digest.split(":")[-1])
    assert main(["sign", str(root / rel), "--key", str(key), "--root", str(root)]) == 0
    return root / (rel + ".sig")


def codes(root: Path) -> list[str]:
    return sorted(
        f"{d.code} {d.path}"
        for d in run(Config(root=str(root), skip_boards=True)).diagnostics
        if d.severity.value == "error"
    )


def tier(root: Path, rel: str) -> Any:
    analysis = analyse(str(root))
    return derive(analysis.snapshot, analysis.diagnostics)[rel]
