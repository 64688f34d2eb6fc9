"""Hostile input: each case is rejected with a finding, and nothing else in the registry is affected.

Every test puts one hostile file beside a valid recipe and asserts the exact findings: the hostile
file's, and none for the valid neighbour. Fuzz tests at the end feed random bytes and random
trees to the loaders and the engine; the last test holds each to the number of inputs it promises
(and prints them with `-s`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.testing.registry import CASES, make_registry
from validator.cli import main
from validator.engine.evaluate import Config, run
from validator.errors import LoadError
from validator.load.documents import parse_json, parse_yaml

RECIPE_DIR = "recipes/training/qwen3.8-27b"
CONSTRUCTIONS = 100_000  # YAML values one check of the small registry below may construct
VALID = CASES / "valid-training"


@pytest.fixture
def reg(tmp_path: Path) -> Path:
    return make_registry(tmp_path / "registry", VALID)


def findings(root: Path) -> list[tuple[str, str]]:
    result = run(Config(root=str(root), skip_boards=True))
    return sorted({(d.code, d.path) for d in result.diagnostics})


def put(root: Path, rel: str, data: bytes) -> str:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return rel


def recipe_text(rid: str, extra: str = "") -> str:
    text = (VALID / RECIPE_DIR / "qwen3-8-27b-h100-tp1-pp4-dp2.yaml").read_text()
    return text.replace("qwen3-8-27b-h100-tp1-pp4-dp2", rid) + extra


def test_yaml_alias_bomb(reg: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join(f'*a{i - 1}' for _ in range(9))}]" for i in range(1, 12)]
    rel = put(reg, f"{RECIPE_DIR}/bomb.yaml", "\n".join(lines).encode())
    # Refused before expansion, not after: count what YAML constructs. Expanded, the bomb is 9**12 values;
    # the whole registry (the valid recipe, the catalog) is a few thousand, and the bomb adds none.
    constructed = 0
    construct = yaml.constructor.BaseConstructor.construct_object

    def counted(self: yaml.constructor.BaseConstructor, node: yaml.Node, deep: bool = False) -> object:
        nonlocal constructed
        constructed += 1
        if constructed > CONSTRUCTIONS:
            raise AssertionError(f"more than {CONSTRUCTIONS} YAML values constructed: the bomb is being expanded")
        return construct(self, node, deep)

    monkeypatch.setattr(yaml.constructor.BaseConstructor, "construct_object", counted)
    assert findings(reg) == [("ORV112", rel)]
    assert 0 < constructed <= CONSTRUCTIONS  # the counter saw the valid files' values, so it was in the path


def test_hundred_megabyte_file_is_refused_without_reading_it(reg: Path) -> None:
    rel = f"runs/ab/{'ab' * 32}.json"
    path = reg / rel
    path.parent.mkdir(parents=True)
    with open(path, "wb") as fh:
        fh.truncate(100 * 1024 * 1024)  # sparse: costs no disk
    yaml_rel = put(reg, f"{RECIPE_DIR}/huge.yaml", b"a: 1\n")
    os.truncate(reg / yaml_rel, 2 * 1024 * 1024)
    got = findings(reg)
    assert ("ORV111", rel) in got and ("ORV111", yaml_rel) in got
    assert {p for _, p in got} == {rel, yaml_rel}


def test_deeply_nested_yaml_and_json(reg: Path) -> None:
    yaml_rel = put(reg, f"{RECIPE_DIR}/deep.yaml", ("a: " + "[" * 5000 + "]" * 5000 + "\n").encode())
    block = "".join(f"{'  ' * i}k{i}:\n" for i in range(200)) + "  " * 200 + "v: 1\n"
    block_rel = put(reg, f"{RECIPE_DIR}/deep-block.yaml", block.encode())
    json_rel = put(reg, f"runs/cd/{'cd' * 32}.json", ("[" * 100_000 + "]" * 100_000).encode())
    got = findings(reg)
    assert ("ORV112", yaml_rel) in got and ("ORV112", block_rel) in got and ("ORV112", json_rel) in got
    assert {p for _, p in got} == {yaml_rel, block_rel, json_rel}


def test_invalid_utf8(reg: Path) -> None:
    rel = put(reg, f"{RECIPE_DIR}/latin1.yaml", recipe_text("latin1").replace("ATTUNE", "Jos\xe9").encode("latin-1"))
    got = run(Config(root=str(reg), skip_boards=True)).diagnostics
    assert [(d.code, d.path, d.line) for d in got] == [("ORV110", rel, 6)]  # `author:` line


def test_duplicate_keys_yaml_and_json(reg: Path) -> None:
    rel = put(reg, f"{RECIPE_DIR}/dup.yaml", recipe_text("dup", "author: someone-else\n").encode())
    json_rel = put(reg, f"runs/ef/{'ef' * 32}.json", b'{"kind":"training","kind":"inference"}')
    got = findings(reg)
    assert ("ORV102", rel) in got and ("ORV102", json_rel) in got
    assert {p for _, p in got} <= {rel, json_rel}


def test_nan_and_infinity_in_json(reg: Path) -> None:
    for i, token in enumerate((b"NaN", b"Infinity", b"-Infinity")):
        rel = put(reg, f"runs/0{i}/{('0' + str(i)) * 32}.json", b'{"kind":"training","x":' + token + b"}")
        assert ("ORV113", rel) in findings(reg)


def test_symlink_to_a_file_outside_the_repository(reg: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("password: hunter2\n")
    link = reg / RECIPE_DIR / "leak.yaml"
    link.symlink_to(secret)
    dir_link = reg / "recipes" / "inference" / "escape"
    dir_link.parent.mkdir(parents=True, exist_ok=True)
    dir_link.symlink_to(tmp_path)
    result = run(Config(root=str(reg), skip_boards=True))
    assert sorted((d.code, d.path) for d in result.diagnostics) == [
        ("ORV114", "recipes/inference/escape"),
        ("ORV114", f"{RECIPE_DIR}/leak.yaml"),
    ]
    assert not any("hunter2" in d.message for d in result.diagnostics)


def test_path_traversal_in_a_run_reference(reg: Path) -> None:
    text = recipe_text("traversal").replace("runs: []", 'runs: ["sha256:../../../../etc/passwd"]')
    rel = put(reg, f"{RECIPE_DIR}/traversal.yaml", text.encode())
    assert findings(reg) == [("ORV109", rel)]


def test_case_insensitive_path_collision(reg: Path) -> None:
    lower = put(reg, f"{RECIPE_DIR}/same-name.yaml", recipe_text("same-name").encode())
    upper = put(reg, f"{RECIPE_DIR}/Same-Name.yaml", recipe_text("same-name").encode())
    got = findings(reg)
    assert [p for code, p in got if code == "ORV117"] in ([lower], [upper])


def test_control_characters_in_a_file_name(reg: Path, capsys: pytest.CaptureFixture[str]) -> None:
    put(reg, f"{RECIPE_DIR}/evil\x1b[31m\nname.yaml", recipe_text("evil").encode())
    got = findings(reg)
    # the location names the file (escaping is for display, issue 36); its message shows the name escaped
    assert ("ORV118", f"{RECIPE_DIR}/evil\x1b[31m\nname.yaml") in got
    for fmt in ("github", "text"):
        main(["check", "--root", str(reg), "--format", fmt])
        out = capsys.readouterr().out
        assert "\x1b" not in out  # nothing a file name holds reaches the terminal or the workflow log raw
        assert "evil\\x1b[31m\\nname.yaml" in out
    main(["check", "--root", str(reg), "--format", "json"])
    located = [f["path"] for f in json.loads(capsys.readouterr().out)["findings"] if f["code"] == "ORV118"]
    assert located == [f"{RECIPE_DIR}/evil\x1b[31m\nname.yaml"]


# --------------------------------------------------------------------------- fuzzing

FUZZ_COUNTS: dict[str, int] = {}  # inputs each fuzz test below tried, counted by the tests themselves
LOADER_EXAMPLES = 1500
TREE_EXAMPLES = 150


@pytest.mark.slow
@settings(max_examples=LOADER_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
def test_fuzz_loaders_only_raise_load_errors(raw: bytes) -> None:
    FUZZ_COUNTS["loaders"] = FUZZ_COUNTS.get("loaders", 0) + 1
    for parse in (lambda b: parse_yaml(b.decode("utf-8", "replace")), parse_json):
        try:
            parse(raw)
        except LoadError:
            pass


YAML_ATOMS = st.sampled_from(
    [
        "id: x",
        "kind: training",
        "kind: inference",
        "model: qwen3.8-27b",
        "hardware: {gpu: h100, count: 8}",
        "layout: {tp: 0, pp: 4, dp: 2}",
        "layout: {tp: 1, pp: 4, dp: 2, layer_split: [1]}",
        "runs: [sha256:zz]",
        "software: {framework: {name: m, version: 0.30}}",
        "claimed: {tokens_per_s_per_gpu: -1}",
        "&a x: *a",
        "- 1",
        "? [a]\n: 1",
        "tier: T3",
        "measured: 2026-13-45",
        "workload: nope",
        "notes: |\n  text",
        "{",
        "]",
        "key: !!python/object:os.system ls",
        "a: !!binary aGVsbG8=",
        "x: 1e999",
        "y: .nan",
        "serving: {speculative: {}}",
    ]
)


@pytest.mark.slow
@settings(
    max_examples=TREE_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    files=st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "recipes/training/qwen3.8-27b/a.yaml",
                    "recipes/inference/m/b.yaml",
                    f"runs/aa/{'a' * 64}.json",
                    "catalog/models.yaml",
                    "runs/x.json",
                ]
            ),
            st.lists(YAML_ATOMS, max_size=8).map("\n".join),
        ),
        max_size=4,
    )
)
def test_fuzz_registry_trees_never_crash_the_engine(
    tmp_path_factory: pytest.TempPathFactory, files: list[tuple[str, str]]
) -> None:
    FUZZ_COUNTS["trees"] = FUZZ_COUNTS.get("trees", 0) + 1
    root = make_registry(tmp_path_factory.mktemp("fuzz") / "registry")
    for rel, text in files:
        put(root, rel, text.encode())
    result = run(Config(root=str(root), skip_boards=True))
    assert not [d for d in result.diagnostics if d.code == "ORV900"], result.diagnostics
    for d in result.diagnostics:
        assert d.line >= 1 and d.col >= 1 and d.hint


@pytest.mark.slow
def test_the_fuzz_tests_tried_every_input_they_promise(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A fuzz test that tries few inputs (a filter rejecting most draws, a setting lost) passes as easily as
    one that tries many: hold each to its max_examples. Run alone (-k), it runs the fuzz tests itself."""
    if "loaders" not in FUZZ_COUNTS:
        test_fuzz_loaders_only_raise_load_errors()
    if "trees" not in FUZZ_COUNTS:
        test_fuzz_registry_trees_never_crash_the_engine(tmp_path_factory)
    print(f"\nfuzz inputs tried: {FUZZ_COUNTS}")
    assert FUZZ_COUNTS["loaders"] >= LOADER_EXAMPLES
    assert FUZZ_COUNTS["trees"] >= TREE_EXAMPLES
