"""Free-text engine versions from the legacy export -> structured, pinned software, or why not.

Seed 004 recorded the engine build as prose ("Morrowmake/vllm-cmp170hx @ 819146023f",
"0.29 nightly (vllm==0.28.1rc1.dev93+cu133 verified)", "HEAD, unpinned upstream"). A recipe needs
components with a pin that validator.stacks.pins accepts: an exact release, a hex commit of at least 7
characters, or an image with an @sha256 digest; patches need a sha256. The grammar understood:

  text      := main (" + " addition)* ("," clause)*
  main      := words and pins, with parenthesised asides
  addition  := "<name> <pin>" (a further component), or "... profile" (a serving profile)

Rejected, with every reason found: nothing recorded; floating words that stand for a moving target
(HEAD, "unpinned", FROM ...:latest); a dirty build (setuptools-scm date suffix, a commit followed
by "+"); an image tag without digest; code changes described without a sha256 (patches,
overlays, monkeypatches, adapters, pull requests, "N commits" on top of a release); and a main
part or addition with no pin at all. A version followed by a qualifier (fork, nightly, series,
lineage, branch, beta) names a base, not the build, and is not a pin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Union

from validator.stacks.pins import version_problem

# Code changes on top of a pin; the legacy export never carries their sha256.
_MODIFICATION = re.compile(r"\b(patch(?:es|ed)?|overlays?|adapters?)\b|monkeypatch\w*|\b\d+ commits\b", re.IGNORECASE)
_PULL_REQUEST = re.compile(r"\bPRs?\b")  # upper case only: applied pull requests
_FLOATING = re.compile(r"\bHEAD\b|\bunpinned\b|:latest\b|\bFROM\s", re.IGNORECASE)
_IMAGE_TAG = re.compile(r"(?<![\w/@.-])([a-z0-9][\w.-]*(?:/[\w.-]+)*):([A-Za-z0-9][\w.-]*)")
_DIRTY_COMMIT = re.compile(r"(?<![\w.+/])[0-9a-f]{7,40}\+(?![0-9A-Za-z])")
_COMMIT = re.compile(r"(?<![\w.+/])([0-9a-f]{7,40})(?![\w+])")
_VERSION = re.compile(r"(?<![\w.+-])(v?\d+(?:\.\d+)+(?:[A-Za-z0-9.+_-]*[A-Za-z0-9])?)")
_REPOSITORY = re.compile(r"(?<![\w.-])([A-Za-z][\w.-]*/[A-Za-z0-9][\w.-]*)")
_NAME_AT = re.compile(r"(?<![\w./-])([A-Za-z][\w.-]*)\s*@\s*[0-9a-f]{7,40}\b")
_IMAGE_DIGEST = re.compile(r"(?<![\w/.-])([a-z0-9][\w./-]*(?::[\w.-]+)?@sha256:[0-9a-f]{64})(?![\w])")
_DATE_DIGITS = re.compile(r"^20\d\d(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$")
_QUALIFIERS = frozenset({"fork", "nightly", "series", "lineage", "branch", "beta", "based"})
# Words that describe how a build was obtained, not what it is called.
_GENERIC = frozenset(
    {
        "fork",
        "git",
        "main",
        "mainline",
        "dev",
        "image",
        "commit",
        "official",
        "upstream",
        "nightly",
        "build",
        "tag",
        "source",
        "branch",
        "at",
        "release",
    }
)
_DESCRIPTOR_CLAUSE = re.compile(
    r"^(sm_?\d+\b.*|.*\bnative\b.*|image [\w.-]+|built image.*|source build)$", re.IGNORECASE
)
_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "twelve": 12,
    "sixteen": 16,
}
_SLOTS = re.compile(r"\b(\d+|" + "|".join(_NUMBER_WORDS) + r")[- ]slots?\b", re.IGNORECASE)


@dataclass(frozen=True)
class PinnedStack:
    """Software components (role -> component mapping) plus what the text said besides pins."""

    software: dict[str, dict[str, Any]]
    slots: int | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unpinned:
    reasons: tuple[str, ...]


StackResult = Union[PinnedStack, Unpinned]  # noqa: UP007 - a runtime alias: typing.Union kept as it was


@dataclass
class _Pins:
    commits: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    versions: list[str] = field(default_factory=list)
    qualified: list[str] = field(default_factory=list)  # versions naming a base, not the build
    repository: str | None = None
    name: str = ""

    @property
    def pinned(self) -> bool:
        return bool(self.commits or self.versions or self.images)


def parse_engine_version(engine: str, text: str | None) -> StackResult:
    """Structured software for `engine` built as `text` describes, or the reasons it is not pinned."""
    if text is None or not text.strip():
        return Unpinned(("no engine version recorded; the export's version field is empty",))
    text = " ".join(text.split())
    reasons = _red_flags(text)
    if reasons:
        return Unpinned(tuple(reasons))
    segments = _split_top(text, " + ")
    main_text, clauses = _split_clauses(segments[0])
    additions = segments[1:] + [c for c in clauses if not _DESCRIPTOR_CLAUSE.match(c)]
    notes = [f"`{c}`: descriptive, recorded in notes" for c in clauses if _DESCRIPTOR_CLAUSE.match(c)]
    engine_name = _engine_name(engine, main_text)
    if engine_name is None:
        return Unpinned((f"engine is `{engine}` and `{text}` names no engine",))
    software: dict[str, dict[str, Any]] = {}
    main = _main_component(engine_name, main_text, notes)
    if isinstance(main, str):
        reasons.append(main)
    else:
        software["engine"] = main[0]
        for role, component in main[1]:
            software[_unique_role(software, role)] = component
    slots: int | None = None
    for addition in additions:
        core, asides = _asides(addition)
        if re.search(r"\bprofile\b", addition, re.IGNORECASE):
            found = _SLOTS.search(addition)
            if found:
                word = found.group(1).lower()
                slots = int(word) if word.isdigit() else _NUMBER_WORDS[word]
            notes.append(f"`{addition}`: a serving profile, not code; recorded as serving settings")
            continue
        pins = _pins(core)
        if not pins.pinned:
            reasons.append(f"`{addition}` is added to the engine but has no version, commit or image digest")
            continue
        role, component = _component(pins, fallback=core)
        software[_unique_role(software, role)] = component
        notes.extend(f"`({a})`: recorded in notes" for a in asides)
    if reasons:
        return Unpinned(tuple(reasons))
    return PinnedStack(software, slots, tuple(notes))


def _red_flags(text: str) -> list[str]:
    reasons = []
    if _FLOATING.search(text):
        reasons.append(f"`{text}` names a moving target (HEAD, unpinned, or an image built FROM a :latest tag)")
    for token in re.findall(r"[\w.+-]+", text):
        problem = version_problem(token) if re.match(r"^v?\d", token) else None
        if problem and problem[0] == "dirty":
            reasons.append(f"`{token}` is a dirty build (setuptools-scm date suffix): its commit does not reproduce it")
    dirty_commit = _DIRTY_COMMIT.search(text)
    if dirty_commit:
        reasons.append(f"`{dirty_commit.group(0)}`: a commit followed by `+` marks uncommitted changes on top of it")
    for ref in _IMAGE_TAG.finditer(text):
        if not text.startswith("@sha256:", ref.end()) and ref.group(2) != "latest":
            reasons.append(f"image `{ref.group(0)}` is a tag without an @sha256 digest, so it can move")
    mods = sorted({m.group(0) for pattern in (_MODIFICATION, _PULL_REQUEST) for m in pattern.finditer(text)})
    if mods:
        reasons.append(
            f"code changes ({', '.join(mods)}) without a sha256: the export records no patch "
            "hashes, so the build cannot be reproduced"
        )
    return reasons


def _split_top(text: str, sep: str) -> list[str]:
    """Split on `sep` outside parentheses."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i].strip())
            start = i + len(sep)
            i = start
            continue
        i += 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _split_clauses(segment: str) -> tuple[str, list[str]]:
    pieces = _split_top(segment, ", ")
    return pieces[0], pieces[1:]


def _asides(segment: str) -> tuple[str, list[str]]:
    asides = re.findall(r"\(([^()]*)\)", segment)
    core = re.sub(r"\s*\([^()]*\)", "", segment).strip()
    return core, asides


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _pins(text: str) -> _Pins:
    pins = _Pins(images=_IMAGE_DIGEST.findall(text))
    text = _IMAGE_DIGEST.sub(" ", text)
    for m in _COMMIT.finditer(text):
        token = m.group(1)
        if not re.search(r"\d", token) or _DATE_DIGITS.match(token):
            continue
        pins.commits.append(token)
    for m in _VERSION.finditer(text):
        token = m.group(1)
        if version_problem(token) is not None:
            continue
        following = text[m.end() :].split()
        if following and following[0].lower().strip(",") in _QUALIFIERS:
            pins.qualified.append(f"{token} {following[0]}")
        else:
            pins.versions.append(token)
    repo = _REPOSITORY.search(text)
    named = _NAME_AT.search(text)
    if repo:
        pins.repository = repo.group(1)
    elif named and _norm(named.group(1)) not in _GENERIC:
        pins.repository = named.group(1)
    words = re.split(r"\s+", _strip_pins(text))
    pins.name = " ".join(w for w in words if w and _norm(w) not in _GENERIC and not re.fullmatch(r"[@=]+", w))
    return pins


def _strip_pins(text: str) -> str:
    text = _IMAGE_DIGEST.sub(" ", text)
    text = _REPOSITORY.sub(" ", text)
    text = re.sub(r"(?<![\w./-])[A-Za-z][\w.-]*\s*@", " ", text)
    text = _COMMIT.sub(" ", text)
    text = _VERSION.sub(" ", text)
    text = re.sub(r"[@=]+|-+$", " ", text)
    return " ".join(w.strip("-") for w in text.split())


def _engine_name(engine: str, main_text: str) -> str | None:
    if engine and engine.lower() != "other":
        return engine.lower()
    core, _ = _asides(main_text)
    name = _pins(core).name
    return _slug(name) if name else None


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9._+-]+", "-", name.lower()).strip("-")


def _main_component(
    engine: str, main_text: str, notes: list[str]
) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]] | str:
    """The engine component from the main part (falling back to its asides) and any further pinned
    components its asides name (`(torch 2.13.0+cu130)`), or why the engine is unpinned."""
    core, asides = _asides(main_text)
    pins = _pins(core)
    source = core
    if not pins.pinned:
        for aside in asides:
            candidate = _pins(aside)
            if candidate.pinned:
                pins, source = candidate, aside
                if not candidate.repository:
                    candidate.repository = _pins(core).repository
                break
    if not pins.pinned:
        qualified = pins.qualified or [q for a in asides for q in _pins(a).qualified]
        why = f"; `{qualified[0]}` names a base, not this build" if qualified else ""
        return f"`{main_text}` gives no exact release, commit or image digest for {engine}{why}"
    if len(pins.commits) > 1:
        return f"`{source}` names several commits ({', '.join(pins.commits)}); which one is the build is unclear"
    for aside in asides:
        if not pins.repository and _REPOSITORY.fullmatch(aside.strip()):
            pins.repository, source = aside.strip(), aside if source == core else source
            asides = [a for a in asides if a != aside]
    component: dict[str, Any] = {"name": _component_name(engine, pins.name)}
    _set_pin(component, pins)
    if (pins.commits or pins.images) and pins.versions:
        notes.append(f"`{pins.versions[0]}` recorded in notes: the commit or digest is the pin")
    if pins.repository and _norm(pins.repository) != _norm(component["name"]):
        component["repository"] = pins.repository
    for q in dict.fromkeys(pins.qualified + _pins(core).qualified):
        notes.append(f"`{q}`: the base this build derives from, not a pin")
    extras = []
    for aside in asides:
        if aside == source:
            continue
        extra = _aside_component(aside, engine)
        if extra is None:
            notes.append(f"`({aside})`: recorded in notes")
        else:
            extras.append(extra)
    return component, extras


def _component_name(engine: str, leading: str) -> str:
    """The engine's own name unless the text names a different product first (`radiance 0.9.3`)."""
    first = leading.split()[0] if leading.split() else ""
    if not _norm(first) or _norm(first).startswith(_norm(engine)) or _norm(first) in _GENERIC:
        return engine
    candidate = _slug(first)
    return candidate if re.match(r"^[a-z0-9][a-z0-9._/+-]*$", candidate) else engine


def _aside_component(aside: str, engine: str) -> tuple[str, dict[str, Any]] | None:
    """`(torch 2.13.0+cu130)` style asides: one name word and one pin."""
    m = re.fullmatch(r"([A-Za-z][\w.-]*) (\S+)", aside.strip())
    if not m or _norm(m.group(1)) in _GENERIC or _norm(m.group(1)) == _norm(engine):
        return None
    pins = _pins(m.group(2))
    if not pins.pinned:
        return None
    return _component(pins, fallback=m.group(1), name=m.group(1))


def _component(pins: _Pins, fallback: str, name: str | None = None) -> tuple[str, dict[str, Any]]:
    label = name or pins.name or (pins.repository.rsplit("/", 1)[-1] if pins.repository else fallback)
    component_name = _slug(label.split()[0] if label.split() else fallback)
    component: dict[str, Any] = {"name": component_name}
    _set_pin(component, pins)
    if pins.repository:
        component["repository"] = pins.repository
    role = re.sub(r"[^a-z0-9_]", "_", component_name).strip("_") or "component"
    if not role[0].isalpha():
        role = f"c_{role}"
    return role, component


def _set_pin(component: dict[str, Any], pins: _Pins) -> None:
    """One pin per component, the strongest the text gives: digest, then commit, then release."""
    if pins.images:
        component["image"] = pins.images[0]
    elif pins.commits:
        component["commit"] = pins.commits[0]
    else:
        component["version"] = pins.versions[0]


def _unique_role(software: dict[str, Any], role: str) -> str:
    candidate, n = role, 2
    while candidate in software:
        candidate, n = f"{role}_{n}", n + 1
    return candidate
