"""What counts as a pin: exact releases, commit SHAs, image digests — and what does not.

The rules live here, once, so that `orv check` (checks/pinning.py), tier derivation and
`orv import` can never disagree about whether a component is pinned. `component_problems` lists
every reason a software component is not pinned, each with what to write instead; `is_pinned` is
true exactly when that list is empty.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from validator.models import Component, Tool
from validator.stacks.engines import LLAMA_CPP_NAMES, SGLANG_NAMES, TRT_LLM_NAMES, VLLM_NAMES

FLOATING_WORDS = frozenset({"latest", "nightly", "main", "master", "head", "stable", "edge", "beta", "dev"})

# SemVer 2.0.0's own regular expression (semver.org, FAQ "Is there a suggested regular expression
# (RegEx) to check a SemVer string?"), numbered-group form; ASCII digits only, as the standard's BNF.
SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$",
    re.ASCII,
)
GRAMMARS = "PEP 440 (Python packaging) or SemVer 2.0.0 (semver.org)"
_RANGE = re.compile(r"[<>=~^*|,]|\s-\s|(^|\.)x(\.|$)|\s")
# setuptools-scm marks a build from a modified work tree with a date local part (.d20261015) or
# "dirty"; such a build cannot be reproduced from its commit.
_DIRTY = re.compile(r"(\+|\.)d\d{8}\b|dirty", re.IGNORECASE)
HEX_COMMIT = re.compile(r"^[0-9a-f]{7,64}$")
IMAGE_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
_WORDS = re.compile(r"[^\s(),;]+")
_LETTER_RUNS = re.compile(r"[A-Za-z]+")
_EXACT_AFTER_EQ = re.compile(r"^==\s*(\S+)$")

# A container image digest recorded as the version is as exact as a release (docs/versions.md).
VERSION_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def is_pep440(version: str) -> bool:
    """One exact PEP 440 version (what PyPI accepts), by packaging's own parser, not a copy of it.

    Every spelling PEP 440 normalises is one release (`1.0-1` is 1.0.post1, `v1.0c1` is 1.0rc1);
    wildcards (`1.0.*`) and ranges do not parse. packaging strips surrounding whitespace, so text
    with any is refused here first. A local part (`+g1fe3a1571`) is kept: setuptools-scm writes
    the commit there, which names one build (a dirty one is refused before, ORV406).
    """
    if not version or any(ch.isspace() for ch in version):
        return False
    try:
        Version(version)
    except InvalidVersion:
        return False
    return True


# Words that name a channel, not a stage: a SemVer pre-release `-edge` or `-nightly` is a moving tag
# (`beta`, `dev`, `alpha`, `rc` are stages of one release, as in PEP 440).
CHANNEL_WORDS = FLOATING_WORDS - {"beta", "dev"}


def is_semver(version: str) -> bool:
    """SemVer 2.0.0 by its published expression; a leading `v` is the git-tag convention (v1.2.3).
    A pre-release identifier that is a channel word (CHANNEL_WORDS) is a moving tag, not exact."""
    m = SEMVER.fullmatch(version[1:] if version[:1] == "v" else version)
    if not m:
        return False
    return not any(part.lower() in CHANNEL_WORDS for part in (m.group(4) or "").split("."))


def exact_release(version: str) -> bool:
    """One exact release by a standard that names it: PEP 440 or SemVer 2.0.0 (GRAMMARS)."""
    return is_pep440(version) or is_semver(version)


@dataclass(frozen=True)
class ReleaseScheme:
    """How one engine names its releases; docs/versions.md lists each with where its tags are published."""

    engine: str
    names: frozenset[str]  # component (or tool) names, lower case, that use this scheme
    grammar: str  # in words, for the finding
    example: str
    matches: Callable[[str], bool]


_LLAMA_CPP_TAG = re.compile(r"^b[0-9]{1,7}$")  # one immutable tag per build: b6800
_TRT_LLM = re.compile(r"^v?[0-9]+\.[0-9]+\.[0-9]+(rc[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?$")

RELEASE_SCHEMES = (
    ReleaseScheme(
        "llama.cpp", LLAMA_CPP_NAMES, "a build tag `b` + build number", "b6800", lambda v: bool(_LLAMA_CPP_TAG.match(v))
    ),
    ReleaseScheme("vLLM", VLLM_NAMES, "a PEP 440 version", "0.11.0", is_pep440),
    ReleaseScheme("SGLang", SGLANG_NAMES, "a PEP 440 version", "0.5.1.post1", is_pep440),
    ReleaseScheme(
        "TensorRT-LLM",
        TRT_LLM_NAMES,
        "x.y.z, optionally rcN, .postN or .devN",
        "1.2.0rc6",
        lambda v: bool(_TRT_LLM.match(v)),
    ),
)
_SCHEME_BY_NAME = {name: scheme for scheme in RELEASE_SCHEMES for name in scheme.names}


def release_scheme(name: str | None) -> ReleaseScheme | None:
    """The engine release scheme a component or tool name follows, if orv knows one."""
    return _SCHEME_BY_NAME.get(name.lower()) if name else None


# Hints never guess a version: a made-up number is one a contributor may paste (issue 15).
EXAMPLE_VERSION = '`version: "<the exact release you ran>"`'
EXAMPLE_COMMIT = '`commit: "<40-hex SHA>"`'
_REV_PARSE = "`git rev-parse HEAD` in the checkout you ran prints it"


def floating_word(text: str) -> str | None:
    """The first word of text that names a moving target (latest, main, HEAD, …), if any.

    A word that is itself an exact release (`0.1.dev20073`, `1.0b2`) is not floating: its `dev`
    or `b` is part of the release number, not a branch.
    """
    for word in _WORDS.findall(text):
        if exact_release(word):
            continue
        for token in _LETTER_RUNS.findall(word):
            if token.lower() in FLOATING_WORDS:
                return token
    return None


def version_problem(version: str, name: str | None = None) -> tuple[str, str] | None:
    """None for an exact release; else (kind, explanation) with kind in floating|dirty|range|inexact.

    `name` is the component's (or tool's): an engine with its own release scheme (RELEASE_SCHEMES:
    llama.cpp's b6800, vLLM's PEP 440, …) is held to that scheme instead of the generic one.
    """
    if _DIRTY.search(version):
        return ("dirty", f"`{version}` is a build from a modified (dirty) work tree")
    scheme = release_scheme(name)
    if VERSION_DIGEST.match(version):
        return None
    if scheme is None:
        if exact_release(version):
            return None
    elif scheme.matches(version):
        return None
    word = floating_word(version)
    if word:
        return ("floating", f"`{version}` names a moving target (`{word}`)")
    tried = f" (tried {scheme.engine}'s scheme, {scheme.grammar})" if scheme else f" (tried {GRAMMARS})"
    if _RANGE.search(version):
        return ("range", f"`{version}` is a range or free text, not one exact release{tried}")
    if scheme:
        return ("inexact", f"`{version}` is not a {scheme.engine} release ({scheme.grammar}, e.g. `{scheme.example}`)")
    return ("inexact", f"`{version}` is not an exact release number{tried}")


def commit_problem(commit: str) -> str | None:
    if HEX_COMMIT.match(commit):
        return None
    return f"`{commit}` is not a hexadecimal commit SHA of at least 7 characters"


def image_problem(image: str) -> str | None:
    if IMAGE_DIGEST.search(image):
        return None
    return f"image `{image}` has no @sha256 digest, so the tag can move"


# --------------------------------------------------------------------------- per component


@dataclass(frozen=True)
class PinProblem:
    """One reason a component (or a run's tool) is not pinned.

    kind: unpinned | floating | dirty | range | inexact | image | patch
    field: where inside the component, e.g. ("version",), ("commit",), ("patches", 2); () = the whole.
    """

    kind: str
    field: tuple[str | int, ...]
    message: str
    hint: str


def commit_kind(commit: str) -> str | None:
    """None for a hex SHA; else dirty (a dirty marker), floating (HEAD, main, …) or inexact."""
    if HEX_COMMIT.match(commit):
        return None
    if _DIRTY.search(commit):
        return "dirty"
    if floating_word(commit):
        return "floating"
    return "inexact"


def _version_hint(kind: str, version: str, name: str | None = None) -> str:
    if kind == "dirty":
        clean = re.sub(r"[+.]d\d{8}\b|[-+.]?dirty", "", version, flags=re.IGNORECASE)
        example = f'`version: "{clean}"` if that is what the clean build reports' if clean else EXAMPLE_VERSION
        return (
            f"rebuild from a clean checkout (local changes committed, or listed under `patches:` with "
            f"their sha256) and record that version, e.g. {example}"
        )
    if kind == "floating":
        return f"write the exact release you ran, {EXAMPLE_VERSION}, or add {EXAMPLE_COMMIT} ({_REV_PARSE})"
    exact = _EXACT_AFTER_EQ.match(version.strip())
    if exact and exact_release(exact.group(1)):
        return f'write the release alone: `version: "{exact.group(1)}"`'
    if HEX_COMMIT.match(version.lower()) and not version.isdigit():
        return f'this looks like a commit: write `commit: "{version.lower()}"` instead of `version:`'
    scheme = release_scheme(name)
    if scheme:
        return (
            f"write the {scheme.engine} release you ran as it is published, {scheme.grammar} "
            f"(docs/versions.md): {EXAMPLE_VERSION}; or pin a fork by {EXAMPLE_COMMIT} and `repository:`"
        )
    return (
        f"write the one exact release you ran, {EXAMPLE_VERSION}; pin a fork or local build by "
        f"{EXAMPLE_COMMIT} and `repository:`; free text belongs in `notes`"
    )


def _commit_hint(kind: str, commit: str) -> str:
    if kind == "inexact" and HEX_COMMIT.match(commit.lower()):
        return f'write the SHA in lower case: `commit: "{commit.lower()}"`'
    if kind == "floating":
        return f"a branch or HEAD moves; write the SHA it pointed at: {EXAMPLE_COMMIT} ({_REV_PARSE})"
    if kind == "dirty":
        return (
            "a dirty work tree is not a commit: commit the changes (or list them under `patches:` "
            f"with their sha256) and write {EXAMPLE_COMMIT}"
        )
    return (
        f"write only the hexadecimal SHA, at least 7 characters, full 40 preferred: {EXAMPLE_COMMIT} "
        f"({_REV_PARSE}); patches go under `patches:`, prose in `notes`"
    )


def _commit_message(kind: str, commit: str) -> str:
    if kind == "floating":
        return f"commit `{commit}` names a moving target (`{floating_word(commit)}`), not a SHA"
    if kind == "dirty":
        return f"commit `{commit}` marks a modified (dirty) work tree"
    return f"commit `{commit}` is not a hexadecimal SHA of at least 7 characters"


def _image_repository(image: str) -> str:
    """The image reference without its tag or digest: `lmsysorg/sglang:latest` -> `lmsysorg/sglang`."""
    name = image.split("@", 1)[0]
    last_slash = name.rfind("/")
    colon = name.rfind(":")
    return name[:colon] if colon > last_slash else name


def component_problems(component: Component) -> list[PinProblem]:
    """Every reason `component` is not pinned (empty list: pinned).

    Pinned means: at least one of version, commit, image; a version, if given, is one clean exact
    release — except that a floating word (`main`) is accepted beside a valid commit, which pins
    it; a commit is hex; an image carries @sha256; every patch carries its sha256.
    """
    out: list[PinProblem] = []
    if not (component.version or component.commit or component.image):
        out.append(
            PinProblem(
                "unpinned",
                (),
                f"component `{component.name}` has no version, commit or image",
                'pin it with one of: `version: "<the exact release you ran>"`, `commit: "<40-hex SHA>"`, '
                "or `image: <repository>@sha256:<digest>`",
            )
        )
    commit_ok = bool(component.commit) and commit_kind(component.commit or "") is None
    kind: str | None  # the version's problem kind, then the commit's
    problem: tuple[str, str] | str | None  # the version's (kind, message), then the image's message
    if component.version:
        problem = version_problem(component.version, component.name)
        if problem and not (problem[0] == "floating" and commit_ok):
            kind, message = problem
            out.append(
                PinProblem(
                    kind, ("version",), f"version {message}", _version_hint(kind, component.version, component.name)
                )
            )
    if component.commit:
        kind = commit_kind(component.commit)
        if kind:
            out.append(
                PinProblem(
                    kind, ("commit",), _commit_message(kind, component.commit), _commit_hint(kind, component.commit)
                )
            )
    if component.image:
        problem = image_problem(component.image)
        if problem:
            repo = _image_repository(component.image)
            out.append(
                PinProblem(
                    "image",
                    ("image",),
                    problem,
                    f"pin the image by digest: `image: {repo}@sha256:<digest>` "
                    f"(`docker buildx imagetools inspect {component.image}` prints it)",
                )
            )
    for index, patch in enumerate(component.patches):
        if not patch.sha256:
            out.append(
                PinProblem(
                    "patch",
                    ("patches", index),
                    f"patch `{patch.name}` has no sha256, so its content can change",
                    f"add its hash: `patches: [{{name: {patch.name}, sha256: <64 hex>}}]` (`sha256sum {patch.name}`)",
                )
            )
    return out


def tool_problems(tool: Tool) -> list[PinProblem]:
    """Why a run file's benchmark tool is not pinned: its version must be one clean exact release.

    A commit does not excuse a floating tool version here: SPEC §5 T1 asks for the tool's version.
    """
    out: list[PinProblem] = []
    kind: str | None  # the version's problem kind, then the commit's
    problem = version_problem(tool.version, tool.name)
    if problem:
        kind, message = problem
        hint = (
            f'record the exact release of `{tool.name}` that produced the run: `"version": "<the exact release>"`'
            if kind != "dirty"
            else _version_hint(kind, tool.version)
        )
        out.append(PinProblem(kind, ("tool", "version"), f"tool version {message}", hint))
    if tool.commit:
        kind = commit_kind(tool.commit)
        if kind:
            out.append(
                PinProblem(
                    kind,
                    ("tool", "commit"),
                    f"tool {_commit_message(kind, tool.commit)}",
                    _commit_hint(kind, tool.commit),
                )
            )
    return out


def is_pinned(component: Component) -> bool:
    """Pinned exactly when `orv check` finds no pin problem in the component (see component_problems)."""
    return not component_problems(component)
