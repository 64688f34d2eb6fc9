"""`orv measurers verify` and `orv measurers audit NAME`: who stands behind a measurer's key, and
what rests on it.

verify (a maintainer runs it; network): each line of measurers/allowed_signers that names its
GitHub account (`github:<user>` in the line's comment) is checked against the signing keys
GitHub publishes for that account (REST API `GET /users/<user>/ssh_signing_keys`); a key found
there gets `verified:<date>` on its line, so the gate itself never needs the network. The fetch
is a parameter (tests pass a local server's address or a function).

audit: every recipe one of whose runs that measurer signed (with a current or a revoked key), with
its tier — what a revocation of that measurer's key would move.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import urllib.request
from collections.abc import Callable

from validator.commands.outcome import Outcome
from validator.engine.evaluate import analyse
from validator.errors import ExitCode, Refusal
from validator.evidence import signing
from validator.evidence.tiers import derive
from validator.files.atomic import write_atomic
from validator.registry.layout import SIGNERS_PATH

GITHUB_API = "https://api.github.com"
_TIMEOUT_S = 20
_MAX_BYTES = 1 << 20

Fetch = Callable[[str], bytes]


def fetch_url(url: str) -> bytes:
    """GET `url` as GitHub's REST API asks to be called; the body, at most 1 MiB."""
    request = urllib.request.Request(
        url, headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    )
    with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response:  # noqa: S310 (https by default)
        body: bytes = response.read(_MAX_BYTES + 1)
    if len(body) > _MAX_BYTES:
        raise ValueError("the answer is over 1 MiB")
    return body


def published_keys(user: str, api: str = GITHUB_API, fetch: Fetch = fetch_url) -> set[str]:
    """The `<type> <base64>` signing keys GitHub publishes for `user`."""
    answer = json.loads(fetch(f"{api.rstrip('/')}/users/{user}/ssh_signing_keys"))
    if not isinstance(answer, list):
        raise ValueError("GitHub's answer is not a list of keys")
    keys = set()
    for item in answer:
        text = item.get("key") if isinstance(item, dict) else None
        if isinstance(text, str) and len(text.split()) >= 2:
            keys.add(" ".join(text.split()[:2]))
    return keys


def _with_mark(line: str, name: str, value: str) -> str:
    """The line with its `name:` mark set to value (replaced in place, or appended to the comment);
    every other character of the line as the maintainer wrote it."""
    mark = re.compile(rf"(?<=\s){re.escape(name)}:\S+")
    if mark.search(line):
        return mark.sub(f"{name}:{value}", line, count=1)
    return f"{line.rstrip()} {name}:{value}"


def verify(root: str, today: datetime.date, api: str = GITHUB_API, fetch: Fetch = fetch_url) -> Outcome:
    outcome = Outcome()
    path = os.path.join(root, SIGNERS_PATH)
    raw = signing.read_limited(path, 1024 * 1024)
    if raw is None:
        raise Refusal(f"{SIGNERS_PATH}: cannot be read", "run from the registry root, with the measurers file present")
    text = raw.decode("utf-8", "replace")
    entries, _ = signing.parse_signers(text)
    lines = text.splitlines()
    failed = False
    for entry in entries:
        who = ",".join(entry.principals)
        if entry.account is None:
            outcome.note(f"line {entry.line} (`{who}`): names no GitHub account (add `github:<user>` after the key)")
            failed = True
            continue
        try:
            keys = published_keys(entry.account, api, fetch)
        except (OSError, ValueError) as exc:
            outcome.note(f"line {entry.line} (`{who}`): GitHub account `{entry.account}` could not be read: {exc}")
            failed = True
            continue
        if entry.key not in keys:
            outcome.note(
                f"line {entry.line} (`{who}`): the key is not among the signing keys GitHub publishes for "
                f"`{entry.account}` — do not waive ORV607/ORV608 for it"
            )
            failed = True
            continue
        lines[entry.line - 1] = _with_mark(lines[entry.line - 1], "verified", today.isoformat())
        outcome.out(f"{who}\t{entry.account}\tverified {today.isoformat()}")
    new = "\n".join(lines) + "\n"
    if new != text:
        with outcome.said_before():
            write_atomic(path, new.encode("utf-8"))
    if failed:
        outcome.exit_code = ExitCode.FINDINGS
    return outcome


def audit(root: str, name: str) -> Outcome:
    outcome = Outcome()
    analysis = analyse(root)
    tiers = derive(analysis.snapshot, analysis.diagnostics)
    found = signing.signatures(analysis.snapshot)
    listed = 0
    for entry, recipe in analysis.snapshot.valid_recipes():
        signed = [
            (digest, sig.verdict.status)
            for digest in recipe.run_digests
            if (sig := found.get(digest)) is not None
            and sig.verdict is not None
            and sig.verdict.principal == name
            and sig.verdict.status in (signing.OK, signing.REVOKED)
        ]
        if not signed:
            continue
        listed += 1
        result = tiers[entry.path]
        runs = ", ".join(f"{d[:12]}{' (revoked key)' if s == signing.REVOKED else ''}" for d, s in signed)
        outcome.out(f"{entry.path}\t{result.tier}\t{runs}")
    outcome.note(f"{listed} recipe(s) rest on runs signed by `{name}`")
    return outcome
