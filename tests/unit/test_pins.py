"""Pin rules (validator/stacks/pins.py) and the ORV4xx findings built on them: what is accepted, what is
rejected under which code, and that every hint says what to write instead."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.testing.paths import REPO
from tests.testing.registry import CASES, make_registry
from validator.checks.pinning import CODE_BY_KIND, codes_by_kind
from validator.engine.evaluate import Config, run
from validator.models import Component, Patch, Tool
from validator.stacks.pins import (
    FLOATING_WORDS,
    _image_repository,
    commit_kind,
    commit_problem,
    component_problems,
    floating_word,
    image_problem,
    is_pep440,
    is_pinned,
    is_semver,
    tool_problems,
    version_problem,
)

SHA40 = "1fe3a15714c2d7e8f0b9a6c3d5e7f9a1b3c5d7e9"
DIGEST = "a" * 64

EXACT = [
    "0.30.0",
    "v0.5.21",
    "0.26.1rc1.dev1024+g1fe3a1571",
    "0.1.dev21830+g8244d1c44",
    "1.5.4.post1",
    "1.2.3-rc.1+build.5",
    "0.30",
    "2.13.0+cu130",
    "0.28.1rc1.dev93+cu133",
    "1.0b2",
    "2026.10.14",
    "1.0-1",
]

# (text, kind): seed 004's engine_ver values and the SPEC's examples of what is not a pin.
REJECTED = [
    ("latest", "floating"),
    ("nightly", "floating"),
    ("main", "floating"),
    ("master", "floating"),
    ("HEAD", "floating"),
    ("stable", "floating"),
    ("edge", "floating"),
    ("beta", "floating"),
    ("dev", "floating"),
    ("dsx 0.1.0 @ 971c072 (HEAD, unpinned upstream)", "floating"),
    ("image tag qwen38-flash:v1.5 (FROM lmsysorg/sglang:latest)", "floating"),
    ("git main @ 2e7c85da6 (torch 2.13.0+cu130)", "floating"),
    ("nightly-77154ca6 + b12x 1.5.1", "floating"),
    ("karmic-kraken-beta (vLLM cfdecfaa4)", "floating"),
    ("v0.5.21-edge", "floating"),
    ("0.1.dev21830+g8244d1c44.d20261015", "dirty"),
    ("v0.30.0-dirty", "dirty"),
    ("1.0.0+dirty", "dirty"),
    (">=0.30", "range"),
    ("0.30.*", "range"),
    ("~0.30", "range"),
    ("^1.2", "range"),
    ("0.30.x", "range"),
    ("==0.30.0", "range"),
    ("v0.30.0 fork", "range"),
    ("vLLM v0.30.0 fork (02acf67c)", "range"),
    ("ExLlamaV3 1.5.1 (stock) + glm53 monkeypatch stack", "range"),
    ("0.1.dev20073 (qwen38-flash-next, iter7g floor)", "range"),
    ("0f685aa", "inexact"),
    ("1.0.0.Final", "inexact"),
    ("r34", "inexact"),
]


@pytest.mark.parametrize("version", EXACT)
def test_exact_releases_are_pins(version: str) -> None:
    assert version_problem(version) is None
    assert is_pinned(Component(name="x", version=version))


@pytest.mark.parametrize("version,kind", REJECTED)
def test_non_releases_are_rejected_with_their_kind(version: str, kind: str) -> None:
    problem = version_problem(version)
    assert problem is not None and problem[0] == kind
    assert not is_pinned(Component(name="x", version=version))


def test_a_dev_release_number_is_not_a_floating_word() -> None:
    assert floating_word("0.1.dev20073") is None
    assert floating_word("0.5.19.dev series") is None  # `dev` belongs to the number; the rest is prose
    assert floating_word("built from dev") == "dev"


@pytest.mark.parametrize(
    "commit,kind",
    [
        (SHA40, None),
        ("2e7c85d", None),
        ("2e7c85", "inexact"),
        ("2E7C85DA6", "inexact"),
        ("HEAD", "floating"),
        ("main", "floating"),
        ("8244d1c44-dirty", "dirty"),
        ("0f685aa + row32 four-slot profile", "inexact"),
    ],
)
def test_commit_kinds(commit: str, kind: str | None) -> None:
    assert commit_kind(commit) == kind
    assert (commit_problem(commit) is None) == (kind is None)


def test_image_needs_a_full_digest() -> None:
    assert image_problem(f"vllm/vllm-openai:v0.30.0@sha256:{DIGEST}") is None
    assert image_problem(f"vllm/vllm-openai@sha256:{DIGEST}") is None
    assert image_problem("vllm/vllm-openai:v0.30.0") is not None
    assert image_problem(f"vllm/vllm-openai@sha256:{DIGEST[:63]}") is not None
    assert _image_repository("lmsysorg/sglang:latest") == "lmsysorg/sglang"
    assert _image_repository("localhost:5000/vllm:v1") == "localhost:5000/vllm"
    assert _image_repository("localhost:5000/vllm") == "localhost:5000/vllm"


def _kinds(component: Component) -> list[tuple[str, tuple[str | int, ...]]]:
    return [(p.kind, p.field) for p in component_problems(component)]


def test_component_rules() -> None:
    assert _kinds(Component(name="vllm")) == [("unpinned", ())]
    # A branch name beside a valid commit is pinned by the commit; beside a bad one it is not.
    assert _kinds(Component(name="sglang", version="main", commit=SHA40)) == []
    assert _kinds(Component(name="sglang", version="main", commit="HEAD")) == [
        ("floating", ("version",)),
        ("floating", ("commit",)),
    ]
    # A commit does not turn a range or a dirty build into one release.
    assert _kinds(Component(name="vllm", version=">=0.30", commit=SHA40)) == [("range", ("version",))]
    assert _kinds(Component(name="vllm", version="0.1.dev1+gabc1234.d20261015", commit=SHA40)) == [
        ("dirty", ("version",))
    ]
    # An image tag is not pinned even beside an exact version: the image is what runs.
    assert _kinds(Component(name="vllm", version="0.30.0", image="vllm/vllm-openai:v0.30.0")) == [("image", ("image",))]
    assert _kinds(
        Component(
            name="vllm",
            image=f"vllm/vllm-openai@sha256:{DIGEST}",
            patches=[Patch(name="a.patch", sha256=DIGEST), Patch(name="b.patch")],
        )
    ) == [("patch", ("patches", 1))]


def test_tool_rules() -> None:
    assert tool_problems(Tool(name="bench", version="0.8.0")) == []
    assert [p.kind for p in tool_problems(Tool(name="bench", version="latest", commit=SHA40))] == ["floating"]
    assert [p.field for p in tool_problems(Tool(name="bench", version="0.8.0", commit="main"))] == [("tool", "commit")]


def test_every_problem_kind_has_a_code() -> None:
    kinds = {"unpinned", "floating", "dirty", "range", "inexact", "image", "patch"}
    assert set(codes_by_kind()) == kinds
    assert set(codes_by_kind().values()) == {"ORV401", "ORV402", "ORV403", "ORV404", "ORV406", "ORV407"}
    assert CODE_BY_KIND["inexact"] == CODE_BY_KIND["range"] == "ORV407"


_versions = st.one_of(st.sampled_from(EXACT + [v for v, _ in REJECTED]), st.text(max_size=20))
_commits = st.one_of(
    st.none(), st.just(SHA40), st.sampled_from(["HEAD", "2e7c85", "main", "abc1234-dirty"]), st.text(max_size=12)
)
_images = st.one_of(st.none(), st.just(f"repo@sha256:{DIGEST}"), st.just("repo:tag"), st.text(max_size=12))


@given(
    version=st.one_of(st.none(), _versions), commit=_commits, image=_images, patched=st.lists(st.booleans(), max_size=3)
)
def test_is_pinned_is_exactly_no_problems(
    version: str | None, commit: str | None, image: str | None, patched: list[bool]
) -> None:
    component = Component(
        name="x",
        version=version or None,
        commit=commit or None,
        image=image or None,
        patches=list(Patch(name=f"p{i}", sha256=DIGEST if ok else None) for i, ok in enumerate(patched)),
    )
    problems = component_problems(component)
    assert is_pinned(component) == (not problems)
    for p in problems:
        assert p.hint and p.message
    if is_pinned(component):
        assert component.version or component.commit or component.image


@given(st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=4), st.booleans())
def test_numeric_releases_are_exact(parts: list[int], v_prefix: bool) -> None:
    version = ("v" if v_prefix else "") + ".".join(map(str, parts))
    assert version_problem(version) is None


@given(
    st.sampled_from(sorted(FLOATING_WORDS)),
    st.sampled_from(["", "0.30.0 ", "build "]),
    st.sampled_from(["", " build", "-2026"]),
    st.booleans(),
)
def test_a_floating_word_is_never_a_release(word: str, before: str, after: str, upper: bool) -> None:
    version = before + (word.upper() if upper else word) + after
    problem = version_problem(version)
    assert problem is not None and problem[0] in ("floating", "dirty")


# --------------------------------------------------------------------------- through the engine

# case -> (code, what the hint must show the contributor to write, column of the offending value)
HINTS = {
    "orv401-component-without-pin": ("ORV401", 'version: "', 3),
    "orv401-missing-engine": ("ORV401", "engine: {name: vllm, version:", 1),
    "orv402-latest": ("ORV402", 'commit: "<40-hex SHA>"', 14),
    "orv402-commit-is-a-branch": ("ORV402", 'commit: "<40-hex SHA>"', 13),
    "orv403-tag-without-digest": ("ORV403", "image: lmsysorg/sglang@sha256:<digest>", 12),
    "orv404-patch-without-sha256": ("ORV404", "sha256: <64 hex>", 9),
    "orv405-floating-tool-version": ("ORV405", '"version": "<the exact release>"', None),
    "orv405-missing-tool-version": ("ORV405", '"version": "<the exact release>"', None),
    "orv406-dirty": ("ORV406", 'version: "0.1.dev21830+g8244d1c44"', 14),
    "orv407-range": ("ORV407", "write the vLLM release you ran as it is published", 14),  # docs/versions.md
    "orv407-free-text": ("ORV407", "repository:", 14),
    "orv407-commit-not-hex": ("ORV407", 'commit: "<40-hex SHA>"', 13),
    "orv408-legacy-unpinned": ("ORV408", "rise above T0", 3),
}


@pytest.mark.parametrize("case", sorted(HINTS))
def test_pin_findings_say_what_to_write_and_point_at_the_value(case: str, tmp_path: Path) -> None:
    code, snippet, col = HINTS[case]
    root = make_registry(tmp_path / "registry", CASES / case)
    [finding] = run(Config(root=str(root), skip_boards=True)).diagnostics
    assert finding.code == code
    assert snippet in finding.hint
    if col is not None:
        assert finding.col == col
    if finding.path.startswith("runs/"):
        assert "orv add-run" in finding.hint or "record the run again" in finding.hint


def test_run_file_tool_version_points_at_the_value(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry", CASES / "orv405-floating-tool-version")
    [finding] = run(Config(root=str(root), skip_boards=True)).diagnostics
    text = (root / finding.path).read_text(encoding="utf-8")
    assert text[finding.col - 1 :].startswith('"latest"')


def test_legacy_grace_is_only_for_a_missing_pin(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry", CASES / "orv402-legacy-floating-no-grace")
    assert [(d.code, d.severity.value) for d in run(Config(root=str(root), skip_boards=True)).diagnostics] == [
        ("ORV402", "error")
    ]
    root = make_registry(tmp_path / "legacy", CASES / "orv408-legacy-unpinned")
    result = run(Config(root=str(root), skip_boards=True))
    assert [(d.code, d.severity.value) for d in result.diagnostics] == [("ORV408", "warning")]
    assert result.exit_code == 0
    assert "stack not stated by the source" in result.diagnostics[0].message


# --------------------------------------------------------------------------- the standards' own examples (issue 36)

# PEP 440, "Normalization": every spelling it lists normalises to one release, so each is exact.
PEP440_NORMALISED = [
    "1.1RC1",
    "00",
    "09000",
    "1.0+foo0100",
    "1.1.a1",
    "1.1-a1",
    "1.1_a1",
    "1.0a.1",
    "1.1alpha1",
    "1.1beta2",
    "1.1c3",
    "1.1pre1",
    "1.1preview1",
    "1.2a",
    "1.2.post2",
    "1.2-post2",
    "1.2_post2",
    "1.2post2",
    "1.0-r4",
    "1.0-rev4",
    "1.2.post",
    "1.0-1",
    "1.2-dev2",
    "1.2dev2",
    "1.2.dev",
    "1.0+ubuntu-1",
    "v1.0",
    "1!2.0",
    "0.26.1rc1.dev1024+g1fe3a1571",
]
PEP440_INVALID = ["1.0-", "1.0.*", "1.0rc1rc2rc3", "1..0", "a1.0", "1.0+", "1.0+local+other", " 1.0", "1.0\n", ""]
# semver.org's expression, with the examples of the specification and of its published test list.
SEMVER_VALID = [
    "0.0.4",
    "1.2.3",
    "10.20.30",
    "1.1.2-prerelease+meta",
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-0.3.7",
    "1.0.0-x.7.z.92",
    "1.0.0-x-y-z.--",
    "1.0.0-alpha+001",
    "1.0.0+20130313144700",
    "1.0.0-beta+exp.sha.5114f85",
    "1.0.0+21AF26D3----117B344092BD",
    "1.0.0-alpha.beta",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.2.3-x.7.z.92",
    "2.0.0-rc.1+build.123",
    "1.2.3----RC-SNAPSHOT.12.9.1--.12+788",
]
SEMVER_INVALID = [
    "1",
    "1.2",
    "1.2.3-0123",
    "1.2.3-0123.0123",
    "1.1.2+.123",
    "+invalid",
    "-invalid",
    "alpha",
    "1.0.0-alpha_beta",
    "1.0.0-alpha..1",
    "01.1.1",
    "1.01.1",
    "1.1.01",
    "1.2.3.DEV",
    "1.2-SNAPSHOT",
    "9.8.7+meta+meta",
    "9.8.7-whatever+meta+meta",
    "1.2.3\n",
    "１.2.3",
]
# Neither grammar: each is a finding that names both.
NEITHER = ["1.2-SNAPSHOT", "9.8.7+meta+meta", "1.0rc1rc2rc3", "1.0.0-alpha..1", "1.2.3.4-x.y"]


@pytest.mark.parametrize("version", PEP440_NORMALISED)
def test_pep440_normalisation_examples_are_exact(version: str) -> None:
    assert is_pep440(version) and version_problem(version) is None


@pytest.mark.parametrize("version", PEP440_INVALID)
def test_pep440_invalid_examples_are_not(version: str) -> None:
    assert not is_pep440(version)


@pytest.mark.parametrize("version", SEMVER_VALID)
def test_semver_examples_are_exact(version: str) -> None:
    assert is_semver(version) and version_problem(version) is None


@pytest.mark.parametrize("version", SEMVER_INVALID)
def test_semver_invalid_examples_are_not(version: str) -> None:
    assert not is_semver(version)


@pytest.mark.parametrize("version", NEITHER)
def test_a_version_neither_grammar_reads_names_both(version: str) -> None:
    problem = version_problem(version)
    assert problem is not None and problem[0] in ("inexact", "range")
    assert "PEP 440" in problem[1] and "SemVer 2.0.0" in problem[1]


def test_the_issue_rows_generic_components() -> None:
    """`kernels: {name: flashinfer, version: ...}`: free-form suffixes are refused, real SemVer is exact."""
    for version in ("1.0-dev-dev-dev", "1.0rc1rc2rc3"):
        assert not is_pinned(Component(name="flashinfer", version=version))
    assert is_pinned(Component(name="flashinfer", version="1.2.3-x.7.z.92"))
    assert not is_pinned(Component(name="flashinfer", version="v0.5.21-nightly"))  # a channel, not a stage


def test_every_pin_in_the_registry_is_still_exact() -> None:
    """The registry's own pins, unchanged, pass the standards' rule (no loosening to make them pass)."""
    import yaml

    root = REPO
    seen = 0
    for path in sorted((root / "recipes").rglob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for name, component in (data.get("software") or {}).items():
            if isinstance(component, dict) and isinstance(component.get("version"), str):
                seen += 1
                problem = version_problem(component["version"], component.get("name"))
                assert problem is None, (path.name, name, component["version"], problem)
    assert seen > 10
