"""lm-eval fixtures as another served configuration would answer: the same answers, its own words.

The committed fixtures (tests/fixtures/lmeval/) come from one fake model, so every run's responses
are the reference's except on the documents it gets wrong; a real quantized model words most of its
chain-of-thought differently from the reference (ORV239 treats >= 98% identical responses as a copy,
docs/quality.md). `reworded` keeps every extracted answer, score, hash and headline, and changes
the wording of every response, as a run of another configuration would.
"""

from __future__ import annotations

import shutil
from pathlib import Path

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
