"""ORV220-ORV225: measurer signatures beside run files, verified against measurers/allowed_signers."""

from __future__ import annotations

import os
from collections.abc import Iterator

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.evidence import signing
from validator.registry.layout import SIGNERS_PATH
from validator.registry.snapshot import Snapshot

E, W = Severity.ERROR, Severity.WARNING

_SIGN_HINT = (
    f"re-sign the unchanged run file with `orv sign RUN --key ~/.ssh/id_ed25519` (namespace "
    f"{signing.NAMESPACE}); never edit a run file or its .sig by hand"
)


def _verdicts(snapshot: Snapshot, *statuses: str) -> Iterator[tuple[signing.RunSignature, signing.Verdict]]:
    for _digest, sig in sorted(signing.signatures(snapshot).items()):
        if sig.verdict is not None and sig.verdict.status in statuses:
            yield sig, sig.verdict


@check("ORV220", E, "signature does not verify", related_by="r")
def signature_verifies(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A run file's signature (`runs/ab/<sha256>.json.sig`) is not a valid OpenSSH signature of the
    run file's bytes: the signature or the run file was altered after signing, the .sig file is not
    an armoured SSH signature at all, or `ssh-keygen` (OpenSSH; tested with 9.2), which orv uses to
    verify, is not installed. A signature that does not verify vouches for nothing.

    Sign the run file exactly as stored: `orv sign runs/ab/<sha256>.json --key ~/.ssh/id_ed25519`
    (or `orv add-run … --sign-with KEY`), and commit the .sig it writes unchanged.
    """
    for sig, verdict in _verdicts(snapshot, signing.INVALID, signing.UNREADABLE, signing.NO_TOOL):
        if verdict.status == signing.NO_TOOL:
            yield Finding(
                sig.path,
                "cannot verify this signature: ssh-keygen is not installed or failed to run"
                + (f" ({verdict.detail})" if verdict.detail else ""),
                "install OpenSSH's client tools, e.g. `apt-get install openssh-client`",
                line=1,
                col=1,
            )
        elif verdict.status == signing.UNREADABLE:
            yield Finding(sig.path, f"not an armoured SSH signature ({verdict.detail})", _SIGN_HINT, line=1, col=1)
        else:
            yield Finding(
                sig.path,
                f"the signature does not verify over `{sig.run_path}`'s bytes "
                f"(key {verdict.fingerprint}): the run file or the signature was altered",
                _SIGN_HINT,
                line=1,
                col=1,
            )


@check("ORV221", E, "signature made for another namespace", related_by="r")
def signature_namespace(snapshot: Snapshot) -> Iterator[Finding]:
    """
    The signature was made with `ssh-keygen -Y sign -n <namespace>` for a namespace other than
    `openrecipes-run@v1`. A namespace says what a signature is for; one made for git commits or
    files (`git`, `file`) must not be replayable as a measurer's statement about a run.

    Sign with `orv sign RUN --key KEY`, which uses the registry's namespace.
    """
    for sig, verdict in _verdicts(snapshot, signing.WRONG_NAMESPACE):
        yield Finding(
            sig.path, f"signed for namespace `{verdict.detail}`, not `{signing.NAMESPACE}`", _SIGN_HINT, line=1, col=1
        )


@check("ORV222", E, "signing key not registered", related_by="r")
def signing_key_registered(snapshot: Snapshot) -> Iterator[Finding]:
    """
    The signature is valid, but its key is not listed in `measurers/allowed_signers` for any
    measurer — never registered, or removed or replaced since (a revoked key), or its entry's
    options (`namespaces=`, `valid-before=`) exclude this use. Anyone can make a valid signature;
    only a registered key says which measurer made it.

    Register the key first (a maintainer-reviewed change to measurers/allowed_signers, see the
    file's header), or sign with the key already registered for your measurer id.
    """
    for sig, verdict in _verdicts(snapshot, signing.UNREGISTERED):
        if verdict.principal:
            message = (
                f"key {verdict.fingerprint} is registered for `{verdict.principal}` but its entry's "
                f"options refuse this signature ({verdict.detail or 'namespace or validity'})"
            )
        else:
            message = f"key {verdict.fingerprint} is not registered in {SIGNERS_PATH} (never, or no longer)"
        yield Finding(
            sig.path,
            message,
            f"sign with the key registered for your measurer id in {SIGNERS_PATH}, or have a "
            "maintainer register this key",
            line=1,
            col=1,
        )


@check("ORV223", E, "measured_by is not the signer", related_by="r")
def measured_by_is_signer(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A signed run's `measured_by` names a different measurer than the one whose registered key made
    the signature. `measured_by` of a signed run is the signing principal (SPEC §5), so one
    measurer cannot sign a run as another's reproduction.

    Store the run with `--measured-by <your measurer id>` (the principal of your key in
    measurers/allowed_signers) and sign that file.
    """
    for sig, verdict in _verdicts(snapshot, signing.WRONG_PRINCIPAL):
        run = snapshot.runs[sig.digest]
        claimed = run.meta.measured_by if run.meta is not None else run.quality.measured_by if run.quality else None
        yield Finding(
            run.path,
            f"`measured_by` is `{claimed}` but the signature is by registered measurer `{verdict.principal}`",
            f"store the run with `--measured-by {verdict.principal.split(',')[0] if verdict.principal else ''}` "
            "and sign the new file",
            at=("measured_by",),
        )


@check("ORV224", E, "signature without its run file", related_by="r")
def signature_has_run(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A `runs/ab/<sha256>.json.sig` file with no run file `runs/ab/<sha256>.json` beside it. A
    signature only ever accompanies the run file it signs.

    Commit the run file with it, or remove the stray signature.
    """
    for _digest, sig in sorted(signing.signatures(snapshot).items()):
        if sig.verdict is None:
            yield Finding(
                sig.path,
                f"signature of `{sig.run_path}`, which is not in the registry",
                "commit the run file it signs beside it, or remove the .sig file",
                line=1,
                col=1,
            )


@check("ORV225", E, "measurers file malformed", per_file=True)
def signers_file_wellformed(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A line of `measurers/allowed_signers` that is not `<principal> [options] <key type> <base64 key>`
    (OpenSSH's ALLOWED SIGNERS format), or a principal that is not a measurer id (a wildcard pattern
    such a line registers no one), or one key registered for two measurers (its signatures could be
    claimed by either), or a comment field meant as a mark but not spelled as orv reads it
    (`revoked: 2026-12-01`, `Revoked:…`, `REVOKED`, a date that is no date): a misspelled revocation
    still revokes the key, and the finding asks for `revoked:YYYY-MM-DD`.

    Write one line per key: the measurer id, then the public key exactly as `ssh-keygen` prints it
    (e.g. the line GitHub publishes at https://github.com/<user>.keys).
    """
    if SIGNERS_PATH not in snapshot.files:
        return
    raw = signing.read_limited(os.path.join(snapshot.root, SIGNERS_PATH), 1024 * 1024)
    if raw is None:
        yield Finding(
            SIGNERS_PATH,
            "the measurers file cannot be read (a link, too large, or unreadable)",
            "commit it as a regular text file",
            line=1,
            col=1,
        )
        return
    entries, problems = signing.parse_signers(raw.decode("utf-8", "replace"))
    for line, message in problems:
        yield Finding(SIGNERS_PATH, message, "write `<measurer-id> ssh-ed25519 AAAA…`", line=line, col=1)
    owners: dict[str, str] = {}
    for entry in entries:
        for principal in entry.principals:
            if not _measurer_id(principal):
                yield Finding(
                    SIGNERS_PATH,
                    f"principal `{principal}` is not a measurer id (no wildcards)",
                    "use the measurer id runs name in `measured_by`, e.g. `acme-lab`",
                    line=entry.line,
                    col=1,
                )
        for field in entry.misspelled:
            yield Finding(
                SIGNERS_PATH,
                f"`{field}` is not a mark orv reads"
                + (" (the key is treated as revoked all the same)" if field.lower().startswith("revoked") else ""),
                "write marks as one field each, lowercase, no space after the colon: `revoked:YYYY-MM-DD`, "
                "`verified:YYYY-MM-DD`, `github:<user>` (docs/maintainers.md)",
                line=entry.line,
                col=1,
            )
        owner = ",".join(entry.principals)
        if entry.key in owners and owners[entry.key] != owner:
            yield Finding(
                SIGNERS_PATH,
                f"the same key is registered for `{owners[entry.key]}` and `{owner}`",
                "register each key for one measurer only",
                line=entry.line,
                col=1,
            )
        owners.setdefault(entry.key, owner)


@check("ORV610", E, "one allowed_signers line names several measurers", per_file=True)
def one_measurer_per_key_line(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A line of `measurers/allowed_signers` lists several principals (`lab-b,lab-c ssh-ed25519 …`).
    OpenSSH accepts that, but then one key signs as every measurer listed, and one lab's runs
    would count as two measurers' — exactly what T3's second signer is meant to rule out. orv
    registers no one from such a line (its signatures are unregistered, ORV222).

    Write one line per measurer and key: `<measurer-id> ssh-ed25519 AAAA… github:<user>`.
    """
    if SIGNERS_PATH not in snapshot.files:
        return
    raw = signing.read_limited(os.path.join(snapshot.root, SIGNERS_PATH), 1024 * 1024)
    if raw is None:
        return  # ORV225 says so
    entries, _ = signing.parse_signers(raw.decode("utf-8", "replace"))
    for entry in entries:
        if len(entry.principals) > 1:
            yield Finding(
                SIGNERS_PATH,
                f"one key is registered for {len(entry.principals)} measurers ({', '.join(entry.principals)})",
                "register the key for one measurer only; each measurer signs with a key of its own",
                line=entry.line,
                col=1,
            )


@check("ORV611", W, "run signed by a revoked key counts as unsigned", related_by="r")
def revoked_signatures(snapshot: Snapshot) -> Iterator[Finding]:
    """
    The signature verifies, but `measurers/allowed_signers` marks its key `revoked:<date>` (a
    compromised or retired key). Nothing it signed can say who measured the run any more, so the
    run counts as unsigned everywhere — in the gate's tiers and on the boards — and the recipes
    whose T3 rested on it drop (`orv measurers audit MEASURER` lists them).

    The measurer re-measures, or re-signs runs they can vouch for with their current key.
    """
    for sig, verdict in _verdicts(snapshot, signing.REVOKED):
        yield Finding(
            sig.path,
            f"signed by `{verdict.principal}` with key {verdict.fingerprint}, revoked {verdict.detail}: "
            "the run counts as unsigned",
            "re-sign the run with the measurer's current key, or re-measure it",
            line=1,
            col=1,
        )


def _measurer_id(principal: str) -> bool:
    return signing.is_measurer_id(principal)
