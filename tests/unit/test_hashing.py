"""Content addresses: RFC 8785 bytes, SHA-256 names any tool can reproduce, and what tampering looks like."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.testing.registry import CASES, make_registry
from validator.cli import main
from validator.engine.evaluate import Config, run
from validator.hashing import canonical_bytes, content_address, is_canonical, run_path
from validator.registry.store import add_run


def test_rfc8785_number_forms() -> None:
    # ES6 shortest round-trip formatting: integral floats lose ".0", exponents from 1e21, -0 is 0
    doc = {"b": 1, "a": [1.0, 1e21, 1e-7, 0.000001, -0.0, 123456789012.5, 2**53 - 1]}
    assert canonical_bytes(doc) == b'{"a":[1,1e+21,1e-7,0.000001,0,123456789012.5,9007199254740991],"b":1}'


def test_rfc8785_orders_keys_by_utf16_code_units() -> None:
    # U+FF61 sorts after U+1F600 in UTF-16 (0xFF61 > 0xD83D) though before it by code point
    doc = {"\uff61": 1, "\U0001f600": 2, "\r": 3, "1": 4, "\u20ac": 5}
    assert canonical_bytes(doc).decode("utf-8") == '{"\\r":3,"1":4,"€":5,"😀":2,"｡":1}'


@pytest.mark.parametrize(
    "doc",
    [
        {"a": 1.5, "b": [1, 2, {"c": "x"}]},
        {"big": 1e300, "small": 5e-324, "neg": -0.5},
        {"integral": 3.0, "k": "\u00e9\u4e2d"},
        {"\U0001f600": 1, "\uff61": 2},
    ],
)
def test_fast_canonical_check_agrees_with_rfc8785(doc: dict[str, object]) -> None:
    canonical = canonical_bytes(doc)
    parsed = json.loads(canonical)
    assert is_canonical(canonical, parsed)
    assert not is_canonical(canonical + b"\n", parsed)
    assert not is_canonical(json.dumps(parsed, indent=1).encode(), parsed)


def test_content_address_is_plain_sha256_of_the_bytes(tmp_path: Path) -> None:
    raw = canonical_bytes({"kind": "x", "n": 1})
    assert content_address(raw) == hashlib.sha256(raw).hexdigest()
    if shutil.which("sha256sum"):
        file = tmp_path / "f.json"
        file.write_bytes(raw)
        out = subprocess.run(["sha256sum", str(file)], capture_output=True, text=True, check=True).stdout
        assert out.split()[0] == content_address(raw)


def test_orv_hash_prints_the_address(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "f.json"
    file.write_bytes(b'{"a":1}')
    assert main(["hash", str(file)]) == 0
    assert capsys.readouterr().out.strip() == "sha256:" + hashlib.sha256(b'{"a":1}').hexdigest()


def _stored_run(case: str) -> Path:
    (path,) = (CASES / case / "runs").glob("*/*.json")
    return path


def test_golden_run_files_are_named_by_their_hash() -> None:
    for case in ("valid-training-run", "valid-inference", "orv204-orphan-run", "orv511-aggregate"):
        path = _stored_run(case)
        raw = path.read_bytes()
        assert path.name == content_address(raw) + ".json"
        assert canonical_bytes(json.loads(raw)) == raw


def test_add_run_of_a_pretty_printed_file_stores_the_canonical_bytes(tmp_path: Path) -> None:
    original = _stored_run("valid-training-run")
    doc = json.loads(original.read_bytes())
    pretty = json.dumps(dict(reversed(list(doc.items()))), indent=3).encode()
    stored = add_run(str(tmp_path), pretty)
    assert stored.digest == original.name.removesuffix(".json")
    assert (tmp_path / stored.path).read_bytes() == original.read_bytes()
    again = add_run(str(tmp_path), pretty)
    assert again.digest == stored.digest and not again.created


def test_a_tampered_byte_names_expected_and_actual_hash(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "reg", CASES / "orv201-tampered-run")
    (path,) = (root / "runs").glob("*/*.json")
    expected = path.name.removesuffix(".json")
    actual = content_address(path.read_bytes())
    (finding,) = run(Config(root=str(root), skip_boards=True)).diagnostics
    assert finding.code == "ORV201" and finding.path == run_path(expected)
    assert f"expected {expected}" in finding.message and f"actual {actual}" in finding.message


def test_flipping_any_digit_of_a_valid_run_is_caught(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "reg", CASES / "valid-training-run")
    (path,) = (root / "runs").glob("*/*.json")
    raw = path.read_bytes()
    start = raw.index(b'"time_s":') + len('"time_s":')
    offset = next(i for i in range(start + 1, len(raw)) if raw[i : i + 1].isdigit())  # inside a sample's time
    tampered = raw[:offset] + bytes([ord("0") + (raw[offset] - ord("0") + 1) % 10]) + raw[offset + 1 :]
    path.write_bytes(tampered)
    codes = {d.code for d in run(Config(root=str(root), skip_boards=True)).diagnostics}
    assert "ORV201" in codes


def test_reformatting_is_located_at_the_first_non_canonical_byte(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "reg")
    raw = canonical_bytes({"a": 1, "b": 2})
    spaced = raw.replace(b'"b":', b'"b": ')
    digest = content_address(spaced)
    target = root / run_path(digest)
    target.parent.mkdir(parents=True)
    target.write_bytes(spaced)
    result = run(Config(root=str(root), skip_boards=True))
    (finding,) = [d for d in result.diagnostics if d.code == "ORV202"]
    assert (finding.line, finding.col) == (1, spaced.index(b" ") + 1)


def test_a_reformatted_run_is_told_it_only_changed_formatting(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "reg", CASES / "valid-training-run")
    (path,) = (root / "runs").glob("*/*.json")
    path.write_bytes(json.dumps(json.loads(path.read_bytes()), indent=2).encode())
    result = run(Config(root=str(root), skip_boards=True))
    assert sorted(d.code for d in result.diagnostics) == ["ORV201", "ORV202"]
    orv201 = next(d for d in result.diagnostics if d.code == "ORV201")
    assert "only the formatting changed" in orv201.hint


@pytest.mark.parametrize("value", [1e-06, 2.0**60, 2.2543873907179048e16, 1e16, 1e21, 5e-324])
def test_what_add_run_stores_the_check_calls_canonical(value: float) -> None:
    # Found by tests/unit/test_properties.py: JCS writes these without exponent or fraction (0.000001,
    # 1152921504606847000), which orjson formats differently and which read back as ints beyond 2^53.
    doc = {"summary": {"x": value}, "tool": {"version": "0.30.0"}}
    raw = canonical_bytes(doc)
    assert is_canonical(raw, json.loads(raw))


def test_an_integer_no_double_can_hold_is_never_canonical() -> None:
    raw = b'{"a":9007199254740993}'
    assert not is_canonical(raw, json.loads(raw))
