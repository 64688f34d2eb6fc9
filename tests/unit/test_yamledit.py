"""validator/files/yamledit.py: ruamel round-trip edits keep a person's comments, order and quoting, and read back."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
import yaml

from tests.testing.paths import REPO
from validator.files import yamledit
from validator.files.yamledit import EditError

REF = "sha256:" + "ab" * 32

HAND_WRITTEN = """\
# yaml-language-server: $schema=../../../schema/recipe-inference.schema.json
# Tuned by hand; keep the comments.
id: qwen3-8-27b-h100-vllm-fp8-c1
kind: 'inference'          # single quotes, on purpose
model: qwen3.8-27b
hardware:   {gpu: h100,   count: 1}
author: "ATTUNE"
measured: '2026-10-18'
software:
    engine:
        name: vllm
        version: "0.11.0"   # pinned
quant: fp8
serving: {context_len: 8192, concurrency: 1}
claimed: {}   # filled by orv add-run
runs: []
notes: >-
  Folded notes that
  span two lines.
"""


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    diff = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0))
    removed = [d[1:] for d in diff if d.startswith("-") and not d.startswith("---")]
    added = [d[1:] for d in diff if d.startswith("+") and not d.startswith("+++")]
    return removed, added


def record(data: object) -> None:
    yamledit.append_to_list(data, "runs", REF)
    yamledit.fill_mapping(data, "claimed", {"decode_tok_s": 41.56, "ttft_ms": 63.79})


def registry_yaml_files() -> list[Path]:
    return sorted(REPO.glob("recipes/**/*.yaml")) + sorted(REPO.glob("catalog/*.yaml"))


def test_every_registry_file_round_trips_byte_for_byte() -> None:
    files = registry_yaml_files()
    assert len(files) > 50
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert yamledit.edit(text, lambda data: None) == text, path


def test_recording_a_run_changes_only_the_claim_and_runs_lines() -> None:
    edited = yamledit.edit(HAND_WRITTEN, record)
    removed, added = changed_lines(HAND_WRITTEN, edited)
    assert removed == ["claimed: {}   # filled by orv add-run", "runs: []"]
    assert added == ["claimed: {decode_tok_s: 41.56, ttft_ms: 63.79} # filled by orv add-run", "runs:", f'  - "{REF}"']
    data = yaml.safe_load(edited)
    assert data["runs"] == [REF] and data["claimed"] == {"decode_tok_s": 41.56, "ttft_ms": 63.79}
    assert data["software"]["engine"]["version"] == "0.11.0"


def test_a_second_reference_follows_the_list_style_and_quoting() -> None:
    once = yamledit.edit(HAND_WRITTEN, record)
    other = "sha256:" + "cd" * 32
    twice = yamledit.edit(once, lambda d: yamledit.append_to_list(d, "runs", other))
    removed, added = changed_lines(once, twice)
    assert removed == [] and added == [f'  - "{other}"']
    assert yamledit.edit(twice, lambda d: yamledit.append_to_list(d, "runs", other)) == twice


def test_plain_items_and_four_space_sequences_are_kept() -> None:
    text = "id: x\nruns:\n    -   sha256:" + "11" * 32 + "\nnotes: n\n"
    edited = yamledit.edit(text, lambda d: yamledit.append_to_list(d, "runs", REF))
    assert yaml.safe_load(edited)["runs"][-1] == REF
    removed, added = changed_lines(text, edited)
    assert removed == [] and len(added) == 1 and added[0].strip().endswith(REF)


def test_a_stated_claim_is_never_overwritten() -> None:
    text = HAND_WRITTEN.replace("claimed: {}", "claimed: {decode_tok_s: 40.0}")
    edited = yamledit.edit(text, record)
    assert yaml.safe_load(edited)["claimed"] == {"decode_tok_s": 40.0}


def test_lines_with_trailing_spaces_that_the_edit_does_not_touch_keep_them() -> None:
    text = HAND_WRITTEN.replace("quant: fp8\n", "quant: fp8   \n").replace("serving: {", "serving:   {")
    edited = yamledit.edit(text, record)
    assert "quant: fp8   \n" in edited
    removed, _ = changed_lines(text, edited)
    assert len(removed) == 2


def test_windows_line_endings_are_kept() -> None:
    text = HAND_WRITTEN.replace("\n", "\r\n")
    edited = yamledit.edit(text, record)
    assert "\n" not in edited.replace("\r\n", "")
    removed, added = changed_lines(text, edited)
    assert len(removed) == 2 and len(added) == 3


@pytest.mark.parametrize(
    "text, why",
    [
        ("id: [unclosed\n", "not valid YAML"),
        ("- a list\n", "not a YAML mapping"),
        ("id: x\nflag: yes\nruns: []\n", "YAML 1.1 and 1.2"),  # True to libyaml, "yes" to ruamel
    ],
)
def test_files_that_cannot_be_edited_safely_are_refused(text: str, why: str) -> None:
    with pytest.raises(EditError, match=why):
        yamledit.edit(text, record)


def test_a_new_document_has_its_header_comments_and_quoted_pins() -> None:
    text = yamledit.new_document(
        {
            "id": "x",
            "measured": "2026-10-18",
            "software": {"engine": {"name": "vllm", "version": "0.30"}},
            "claimed": {},
            "runs": [],
        },
        comments={"claimed": "filled by orv add-run"},
        header="# yaml-language-server: $schema=s.json",
    )
    lines = text.splitlines()
    assert lines[0] == "# yaml-language-server: $schema=s.json"
    assert "# filled by orv add-run" in lines
    assert '  engine: {name: vllm, version: "0.30"}' in lines
    assert yaml.safe_load(text) == {
        "id": "x",
        "measured": "2026-10-18",
        "software": {"engine": {"name": "vllm", "version": "0.30"}},
        "claimed": {},
        "runs": [],
    }
