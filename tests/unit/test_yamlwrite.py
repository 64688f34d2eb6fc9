"""What orv writes, it accepts (issue 36 item 1): every YAML writer goes through validator/files/yamlwrite.py, and
any text it writes is read back by `orv check` as exactly that text, with no ORV104 or ORV119."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.testing.paths import FIXTURES
from tests.testing.registry import make_registry
from validator.checks.yaml11 import yaml11_reading
from validator.cli import main
from validator.commands import catalog as catalog_tools
from validator.commands import new_recipe as scaffold
from validator.files import yamledit, yamlout, yamlwrite
from validator.load.documents import parse_yaml, plain_scalars

CONFIGS = FIXTURES / "hf-configs"

# Every spelling YAML 1.1 (the spec's regular expressions, and PyYAML's) reads as something other than text.
YAML11_SPELLINGS = [
    # booleans (the spec's list: PyYAML leaves out y/n, other 1.1 readers do not)
    "y",
    "Y",
    "yes",
    "Yes",
    "YES",
    "n",
    "N",
    "no",
    "No",
    "NO",
    "true",
    "True",
    "TRUE",
    "false",
    "False",
    "FALSE",
    "on",
    "On",
    "ON",
    "off",
    "Off",
    "OFF",
    # null
    "~",
    "null",
    "Null",
    "NULL",
    "",
    # integers: decimal, octal, hex, binary, separators, sexagesimal
    "0",
    "017",
    "-017",
    "0o17",
    "0x1F",
    "0b101",
    "+0b1",
    "1_000",
    "0x_",
    "0b_",
    "1:20",
    "190:20:30",
    "-1:20",
    # floats
    "1.0",
    ".5",
    "-.5",
    "1e3",
    "1.0e+3",
    "6.8523015e+5",
    "685.230_15e+03",
    "190:20:30.15",
    ".inf",
    "-.Inf",
    ".NaN",
    "1_0.5",
    # dates and timestamps
    "2026-01-01",
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43.10 -5",
    "2002-12-14",
    "2026-02-31",
    # the merge key, the value key and other indicators
    "<<",
    "=",
    "-",
    "- a",
    "? x",
    "@x",
    "`x",
    "!x",
    "&a",
    "*a",
    "|",
    ">",
    "%x",
    "'",
    '"',
    "#",
    "a #b",
    "a: b",
    "[a]",
    "{a: 1}",
    "a,b",
]
BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x85", "\u2028", "\u2029"]
CONTROLS = [chr(c) for c in [*range(0x00, 0x20), *range(0x7F, 0xA0)]]

# Any text (no lone surrogates: a UTF-8 file cannot hold them), biased towards what YAML reads otherwise.
_pieces = st.one_of(
    st.sampled_from(YAML11_SPELLINGS),
    st.sampled_from(BREAKS),
    st.sampled_from(CONTROLS),
    st.sampled_from([" ", "  ", "#", ": ", " #", "\t", "\ufeff", "é", "\\", '"', "'"]),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=6),
)
TEXT = st.one_of(st.sampled_from(YAML11_SPELLINGS), st.lists(_pieces, max_size=5).map("".join))


def no_reading_findings(text: str) -> None:
    """No scalar in `text` is one ORV119 would report (a value YAML 1.1 and 1.2 read differently)."""
    for _, node in plain_scalars(text):
        assert yaml11_reading(node.tag, str(node.value)) is None, node.value


# --------------------------------------------------------------------------- the one writer


@pytest.mark.parametrize(
    "value",
    YAML11_SPELLINGS[: YAML11_SPELLINGS.index("<<") + 2] + ["a" + b + "b" for b in BREAKS] + CONTROLS + [" a", "a "],
)
def test_plain_ok_refuses_every_spelling_that_reads_as_something_else(value: str) -> None:
    assert not yamlwrite.plain_ok(value)
    for text in (yamlout.dump({"author": value}), yamledit.new_document({"author": value})):
        assert parse_yaml(text) == {"author": value}


@pytest.mark.parametrize("value", ["lab-a", "Ada Lovelace", "qwen3.8-27b", "0.11.0", "é"])
def test_plain_ok_keeps_ordinary_text_plain(value: str) -> None:
    assert yamlwrite.plain_ok(value)
    assert yamledit.new_document({"author": value}) == f"author: {value}\n"


def test_a_value_that_does_not_read_back_is_quoted_by_the_read_back() -> None:
    """The read-back, not only the up-front test, decides: an emitter that writes everything plain is mended."""
    data = {"author": "No", "notes": "1:20", "count": 3}
    text = yamlwrite.write(
        data,
        lambda d: "".join(
            f"{k}: {v if not isinstance(v, yamlwrite.Quoted) else yamlwrite.double_quoted(v)}\n" for k, v in d.items()
        ),
        where=lambda _: False,
    )
    assert parse_yaml(text) == {"author": "No", "notes": "1:20", "count": 3}
    assert 'author: "No"' in text and 'notes: "1:20"' in text and "count: 3" in text


def test_an_emitter_whose_output_cannot_read_back_is_an_error_not_a_file() -> None:
    with pytest.raises(yamlwrite.WriteError):
        yamlwrite.write({"count": 3}, lambda d: "count: 4\n")


# --------------------------------------------------------------------------- each command's writer, any text


@given(TEXT.filter(lambda v: v == v.strip() and v.strip()))
@settings(max_examples=300)
def test_orv_new_writes_any_author_so_it_reads_back_exactly(author: str) -> None:
    doc = {
        "id": "x",
        "kind": "inference",
        "model": "m",
        "hardware": {"gpu": "h100", "count": 1},
        "author": author,
        "measured": "2026-10-18",
        "software": {"engine": {"name": "vllm", "version": "0.11.0"}},
        "quant": "bf16",
        "serving": {"concurrency": 1},
        "claimed": {},
        "runs": [],
    }
    text = scaffold.render(doc)
    assert parse_yaml(text) == doc
    no_reading_findings(text)


@given(TEXT)
@settings(max_examples=300)
def test_the_importers_writer_reads_back_any_text_in_every_position(value: str) -> None:
    doc = {
        "id": "x",
        "author": value,
        "hardware": {"gpu": value, "count": 1},
        "tags": [value, "b"],
        "notes": f"Imported. {value} and more text to make this a long line " * 3,
        "provenance": {"source": "000.txt", "original": {"a": value}},
        "list": [{"name": value, "n": 1}],
    }
    text = yamlout.dump(doc)
    assert parse_yaml(text) == doc
    no_reading_findings(text)


@given(TEXT)
@settings(max_examples=300)
def test_an_edit_writes_any_text_and_keeps_the_rest_of_the_file(value: str) -> None:
    original = "# a comment\nid: x   # kept\nauthor: 'lab'\nruns: []\nnotes: keep me\n"
    edited = yamledit.edit(original, lambda data: data.__setitem__("author", value))
    assert parse_yaml(edited) == {"id": "x", "author": value, "runs": [], "notes": "keep me"}
    assert edited.startswith("# a comment\nid: x   # kept\n") and edited.endswith("runs: []\nnotes: keep me\n")
    no_reading_findings(edited)


@given(TEXT.filter(lambda v: v.strip() != ""))
@settings(max_examples=60)
def test_catalog_add_model_writes_any_name_so_it_reads_back_exactly(name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "catalog").mkdir()
        (root / "catalog" / "models.yaml").write_text("# models\nmodels: {}\n", encoding="utf-8")
        catalog_tools.add_model(str(root), str(CONFIGS / "llama-3.1-8b.json"), "new-model", name=name)
        text = (root / "catalog" / "models.yaml").read_text(encoding="utf-8")
    assert parse_yaml(text)["models"]["new-model"]["name"] == name
    no_reading_findings(text)


# --------------------------------------------------------------------------- end to end: orv new, then orv check


HARD_AUTHORS = [
    "No",
    "yes",
    "on",
    "off",
    "NO",
    "1:20",
    "y",
    "~",
    "null",
    "017",
    "0o17",
    "1e3",
    "2026-01-01",
    "a\u2028b",
    "a\x85b",
    "a\rb",
    "tab\there",
    "x #y",
    "a: b",
    "é\x7f",
]


def test_orv_new_then_orv_check_reads_every_hard_author_back_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_registry(tmp_path / "registry")
    paths = {}
    for i, author in enumerate(HARD_AUTHORS):
        code = main(
            [
                "new",
                "inference",
                "--workload",
                "single-stream-256",
                "--root",
                str(root),
                "--no-interactive",
                "--model",
                "qwen3.8-27b",
                "--gpu",
                "h100",
                "--engine",
                "vllm@0.11.0",
                "--author",
                author,
                "--measured",
                "2026-10-18",
                "--id",
                f"author-{i}",
            ]
        )
        out, err = capsys.readouterr()
        assert code == 0, err
        paths[out.strip()] = author
    main(["check", "--root", str(root), "--no-cache", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    wrong = [
        (f["code"], f["path"], f["message"])
        for f in report["findings"]
        if f["path"] in paths and f["code"] in ("ORV101", "ORV104", "ORV119")
    ]
    assert wrong == []
    for rel, author in paths.items():
        assert parse_yaml((root / rel).read_text(encoding="utf-8"))["author"] == author


def test_orv119_hint_quotes_a_text_field_and_says_false_only_for_a_boolean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_registry(tmp_path / "registry")
    assert (
        main(
            [
                "new",
                "training",
                "--root",
                str(root),
                "--no-interactive",
                "--model",
                "qwen3.8-27b",
                "--gpu",
                "h100",
                "--count",
                "8",
                "--framework",
                "megatron-core@0.14.0",
                "--author",
                "lab",
                "--measured",
                "2026-10-18",
            ]
        )
        == 0
    )
    rel = capsys.readouterr().out.strip()
    path = root / rel
    text = path.read_text(encoding="utf-8").replace("author: lab", "author: No") + "baseline: yes\n"
    path.write_text(text, encoding="utf-8")
    main(["check", "--root", str(root), "--no-cache", "--format", "json"])
    hints = {
        f["message"].split(":")[0]: f["hint"]
        for f in json.loads(capsys.readouterr().out)["findings"]
        if f["code"] == "ORV119"
    }
    assert hints["`author"] == 'it is text here: quote it, `author: "No"`'
    assert hints["`baseline"] == "write true"
