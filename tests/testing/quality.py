"""lm-eval fixtures as another served configuration would answer: the same answers, its own words.

The committed fixtures (tests/fixtures/lmeval/) come from one fake model, so every run's responses
are the reference's except on the documents it gets wrong; a real quantized model words most of its
chain-of-thought differently from the reference (ORV239 treats >= 98% identical responses as a copy,
docs/quality.md). `reworded` keeps every extracted answer, score, hash and headline, and changes
the wording of every response, as a run of another configuration would.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

# the fake model's three phrasings (make_fixtures.py, Behaviour.respond) -> another model's
PHRASES = {
    " Adding the boxes first, then multiplying by the size, gives ": " Boxes times size after adding them: ",
    " Adding the boxes and multiplying, the answer is ": " Sum the boxes, multiply, and the answer is ",
    " Adding up and multiplying gives ": " Summing and then multiplying yields ",
}


def reworded(source: Path, dest: Path) -> Path:
    """A copy of lm-eval output folder `source` at `dest` whose responses are worded differently."""
    shutil.copytree(source, dest)
    for samples in dest.glob("samples_*.jsonl"):
        text = samples.read_text(encoding="utf-8")
        for old, new in PHRASES.items():
            text = text.replace(old, new)
        samples.write_text(text, encoding="utf-8")
    return dest


def _samples(folder: Path) -> tuple[Path, list[dict[str, Any]]]:
    path = next(folder.glob("samples_*.jsonl"))
    return path, [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def pasted_hashes(folder: Path, reference: Path) -> Path:
    """Issue #51's few-shot forgery, in place: lm-eval output `folder` (a 3-shot run) with the reference
    run's per-document prompt_hash and its task_hashes pasted in, every other field its own."""
    _, reference_lines = _samples(reference)
    prompt_of = {line["doc_id"]: line["prompt_hash"] for line in reference_lines}
    path, lines = _samples(folder)
    for line in lines:
        line["prompt_hash"] = prompt_of[line["doc_id"]]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    results = next(folder.glob("results_*.json"))
    data = json.loads(results.read_text(encoding="utf-8"))
    data["task_hashes"] = json.loads(next(reference.glob("results_*.json")).read_text(encoding="utf-8"))["task_hashes"]
    results.write_text(json.dumps(data), encoding="utf-8")
    return folder
