"""ORV1xx findings on the golden cases: the column points at the offending text, the hint says what to write."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.registry import CASES, make_registry
from validator.engine.evaluate import Config, run

# case -> (code, text the hint must contain, bytes found at the finding's line and column)
EXPECTED = {
    "orv101-yaml-syntax": ("ORV101", "quoting", b": long context"),
    "orv102-yaml-duplicate-key": ("ORV102", "keep one", b"claimed: {decode_tok_s: 45.0}"),
    "orv102-json-duplicate-key": ("ORV102", "keep one", b'"version": "0.31.0"'),
    "orv103-unknown-field": ("ORV103", "did you mean `concurrency`?", b"concurency:"),
    "orv103-misspelled-required-field": ("ORV103", "did you mean `quant`?", b"quantization:"),
    "orv109-gpu-written-as-a-name": ("ORV109", "the catalog id of `H100` is `h100`", b"H100"),
    "orv104-wrong-type": ("ORV104", "without quotes", b'"1"'),
    "orv104-non-text-key": ("ORV104", 'quote the key: `"8192":`', b"8192: 1"),
    "orv105-commit-as-number": ("ORV105", 'commit: "', b"0123456"),
    "version-as-number": ("ORV105", 'version: "', b"0.30}"),
    "orv106-id-differs-from-file": ("ORV106", "rename the file", b"glm-5-3-flash-h100-fp8-single"),
    "orv107-wrong-model-folder": ("ORV107", "move it to recipes/training/qwen3.8-27b/", b"qwen3.8-27b"),
    "orv108-missing-field": ("ORV108", "add `count:`", b"hardware:"),
    "orv109-value-not-allowed": ("ORV109", "YYYY-MM-DD", b'"18/10/2026"'),
    "orv109-component-role-case": ("ORV109", "`engine:`", b"Engine:"),
    "orv110-non-utf8": ("ORV110", "UTF-8", b"\xe9"),
    "orv112-yaml-alias": ("ORV112", "write the value out", b"*who"),
    "orv113-nan-in-run": ("ORV113", "finite number", b"NaN"),
    "orv113-nan-in-yaml": ("ORV113", "plain number", b".nan"),
    "orv115-unknown-gpu": ("ORV115", "did you mean `h200`?", b"h200-sxm"),
    "orv116-declared-tier": ("ORV116", "delete the `tier:` line", b"tier: T1"),
}


def test_a_misspelled_required_field_is_one_rename(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry", CASES / "orv103-misspelled-required-field")
    [missing] = [d for d in run(Config(root=str(root), skip_boards=True)).diagnostics if d.code == "ORV108"]
    assert missing.hint == "rename `quantization:` to `quant:` (this file spells it `quantization`)"
    raw = (root / missing.path).read_bytes()
    assert _at(raw, missing.line, missing.col).startswith(b"quantization:")


def test_an_alias_that_looks_like_an_id_is_answered_with_the_id(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry", CASES / "orv115-unknown-gpu")
    path = next(root.glob("recipes/**/*.yaml"))
    catalog = root / "catalog/hardware.yaml"
    text = catalog.read_text(encoding="utf-8")
    assert "  h200:\n" in text
    catalog.write_text(text.replace("  h200:\n", "  h200:\n    aliases: [h200-sxm, H200]\n", 1), encoding="utf-8")
    [finding] = run(Config(root=str(root), skip_boards=True)).diagnostics
    assert finding.code == "ORV115" and finding.path == str(path.relative_to(root))
    assert finding.hint == (
        "`h200-sxm` is a name or alias of `h200` in catalog/hardware.yaml: write the catalog id, `gpu: h200`"
    )


def _at(raw: bytes, line: int, col: int) -> bytes:
    """The bytes from (line, col) on; col counts characters, which here are ASCII up to the point."""
    return raw.split(b"\n")[line - 1][col - 1 :]


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_finding_points_at_the_text_and_says_what_to_write(case: str, tmp_path: Path) -> None:
    code, hint, text = EXPECTED[case]
    root = make_registry(tmp_path / "registry", CASES / case)
    [finding] = [d for d in run(Config(root=str(root), skip_boards=True)).diagnostics if d.code == code]
    assert hint in finding.hint
    raw = (root / finding.path).read_bytes()
    assert _at(raw, finding.line, finding.col).startswith(text), (finding.line, finding.col)
