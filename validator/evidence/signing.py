"""Measurer signatures: OpenSSH SSHSIG over a run file's bytes, made and verified by `ssh-keygen -Y`.

A run file `runs/ab/<h>.json` may have a signature beside it, `runs/ab/<h>.json.sig`, made with
`ssh-keygen -Y sign -n openrecipes-run@v1` (the mechanism git uses for SSH-signed commits). The
signature covers the run file's exact bytes, so the content address is unchanged and any edit to
either file breaks it. The registry's measurers are listed in `measurers/allowed_signers` (OpenSSH
allowed_signers format, principal = measurer id); a signed run's `measured_by` must be the principal
whose registered key made the signature.

All cryptography is OpenSSH's: this module only runs `ssh-keygen` (offline) and reads the armoured
signature's plain fields (namespace, public key) to word findings precisely.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass

from validator.dates import DATE_PATTERN, moment
from validator.errors import LoadError, Refusal
from validator.files.atomic import write_atomic
from validator.git.sparse import materialize
from validator.hashing import content_address
from validator.load.cache import Remembered, open_store, remembered
from validator.load.documents import decode_utf8, parse_json
from validator.registry.layout import SIGNERS_PATH, classify, run_digest_from_path
from validator.registry.snapshot import Snapshot

NAMESPACE = "openrecipes-run@v1"  # fixed: a signature made for another purpose (git, files) never counts here
SIG_SUFFIX = ".sig"
MAX_SIG_BYTES = 64 * 1024
_TIMEOUT_S = 30

# Verdicts. OK: the signature is valid and made by measured_by's registered key.
OK = "ok"
UNREADABLE = "unreadable"  # not an armoured SSH signature
WRONG_NAMESPACE = "namespace"
INVALID = "invalid"  # does not verify over the run's bytes: signature or run file altered
UNREGISTERED = "unregistered"  # the key is not in allowed_signers (or no longer: replaced, revoked)
WRONG_PRINCIPAL = "principal"  # a registered key, but of another measurer than measured_by
REVOKED = "revoked"  # a valid signature by a key its line marks `revoked:YYYY-MM-DD`: counts as unsigned
NO_TOOL = "no-tool"  # ssh-keygen is not installed


class SigningError(Refusal):
    """Signing could not be done (no ssh-keygen, unreadable key); the message says why."""


@dataclass(frozen=True)
class SignatureInfo:
    """The plain fields of an SSHSIG blob (PROTOCOL.sshsig): who claims to sign, for what purpose."""

    namespace: str
    key_type: str
    key_blob: bytes

    @property
    def fingerprint(self) -> str:
        """OpenSSH's SHA256 fingerprint of the public key, as `ssh-keygen -l` prints it."""
        return "SHA256:" + base64.b64encode(hashlib.sha256(self.key_blob).digest()).decode().rstrip("=")

    @property
    def public_key(self) -> str:
        return f"{self.key_type} {base64.b64encode(self.key_blob).decode()}"


def _strings(blob: bytes, offset: int, count: int) -> tuple[list[bytes], int]:
    out = []
    for _ in range(count):
        if offset + 4 > len(blob):
            raise ValueError("truncated signature")
        (size,) = struct.unpack(">I", blob[offset : offset + 4])
        offset += 4
        if offset + size > len(blob):
            raise ValueError("truncated signature")
        out.append(blob[offset : offset + size])
        offset += size
    return out, offset


def parse_signature(armoured: bytes) -> SignatureInfo:
    """Namespace and public key of an armoured SSH signature; ValueError when it is not one."""
    try:
        text = armoured.decode("ascii").strip()
    except UnicodeDecodeError:
        raise ValueError("not ASCII") from None
    lines = text.splitlines()
    if len(lines) < 3 or lines[0] != "-----BEGIN SSH SIGNATURE-----" or lines[-1] != "-----END SSH SIGNATURE-----":
        raise ValueError("no BEGIN/END SSH SIGNATURE armour")
    try:
        blob = base64.b64decode("".join(lines[1:-1]), validate=True)
    except ValueError:
        raise ValueError("armour is not base64") from None
    if not blob.startswith(b"SSHSIG") or len(blob) < 10:
        raise ValueError("no SSHSIG magic")
    (public_key, namespace), _ = _strings(blob, 10, 2)
    (key_type,), _ = _strings(public_key, 0, 1)
    try:
        return SignatureInfo(namespace.decode("utf-8"), key_type.decode("ascii"), public_key)
    except UnicodeDecodeError:
        raise ValueError("namespace or key type is not text") from None


# --------------------------------------------------------------------------- allowed_signers


@dataclass(frozen=True)
class SignerLine:
    line: int
    principals: tuple[str, ...]
    options: str
    key: str  # "<type> <base64>", what identifies the key
    # from the line's comment (OpenSSH ignores it): `github:<user>` the account whose published
    # signing keys hold this key, `verified:<date>` when `orv measurers verify` found it there,
    # `revoked:<date>` a key no longer trusted (its runs count as unsigned)
    account: str | None = None
    verified: str | None = None
    revoked: str | None = None
    misspelled: tuple[str, ...] = ()  # comment fields meant as marks, not as orv reads them (ORV225)


MARKS = ("github", "verified", "revoked")


def _marks(comment: list[str]) -> dict[str, str]:
    marks: dict[str, str] = {}
    for field in comment:
        name, sep, value = field.partition(":")
        if sep and name in MARKS and value:
            marks.setdefault(name, value)
    return marks


def misspelled_marks(comment: list[str]) -> list[str]:
    """The comment's fields that look meant as a mark but are not `<mark>:<value>` as orv reads it
    (`revoked: 2026-12-01`, `Revoked:…`, `REVOKED`, `revoked=…`, `revoked:` with no date), and marks whose
    date is not a real date: said (ORV225) rather than silently left a comment."""
    wrong = []
    for i, field in enumerate(comment):
        name, sep, value = field.partition(":")
        lowered = name.lower().split("=", 1)[0]
        if lowered not in MARKS:
            continue
        if not (sep and name in MARKS and value) or (name != "github" and not _is_day(value)):
            wrong.append(field if value or i + 1 >= len(comment) else f"{field} {comment[i + 1]}")
    return wrong


def _is_day(text: str) -> bool:
    """A `YYYY-MM-DD` the calendar has (validator/dates.py, the one rule for dates)."""
    return re.fullmatch(DATE_PATTERN, text) is not None and moment(text) is not None


def means_revoked(comment: list[str]) -> bool:
    """Does the comment say, in any spelling, that the key is revoked? A misspelled revocation still
    revokes (and ORV225 asks for the right spelling): the safe reading of a maintainer's intent."""
    return any(field.lower().startswith("revoked") for field in comment)


def is_measurer_id(principal: str) -> bool:
    """One exact measurer id: allowed_signers principals may be lists (`a,b`) or wildcard patterns
    (`lab-*`), and a measurer is one id, so such a line registers no one."""
    return bool(principal) and not any(ch in principal for ch in ',*?!"') and len(principal) <= 100


_KEY_TYPES = ("ssh-", "ecdsa-", "sk-ssh-", "sk-ecdsa-")


def _fields(text: str) -> list[str]:
    """Whitespace-separated fields; a double-quoted run (options="a b") stays one field."""
    fields, current, quoted = [], "", False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch.isspace() and not quoted:
            if current:
                fields.append(current)
            current = ""
        else:
            current += ch
    if current:
        fields.append(current)
    return fields


def parse_signers(text: str) -> tuple[list[SignerLine], list[tuple[int, str]]]:
    """(entries, problems as (line, message)) of an allowed_signers file (sshd(8) ALLOWED SIGNERS)."""
    entries: list[SignerLine] = []
    problems: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = _fields(line)
        at = 2 if len(fields) > 2 and not fields[1].startswith(_KEY_TYPES) else 1
        if len(fields) < at + 2 or not fields[at].startswith(_KEY_TYPES):
            problems.append((number, "expected `<principal> [options] <key type> <base64 key> [comment]`"))
            continue
        try:
            base64.b64decode(fields[at + 1], validate=True)
        except ValueError:
            problems.append((number, "the key is not base64"))
            continue
        principals = tuple(p for p in fields[0].strip('"').split(",") if p)
        comment = fields[at + 2 :]
        marks = _marks(comment)
        revoked = marks.get("revoked") or ("(misspelled)" if means_revoked(comment) else None)
        entries.append(
            SignerLine(
                number,
                principals,
                fields[1] if at == 2 else "",
                f"{fields[at]} {fields[at + 1]}",
                marks.get("github"),
                marks.get("verified"),
                revoked,
                tuple(misspelled_marks(comment)),
            )
        )
    return entries, problems


def trusted_signers(signers: bytes) -> bytes:
    """The allowed_signers text ssh-keygen is given: only lines naming exactly one measurer.

    OpenSSH lets one line list several principals (`lab-b,lab-c KEY`), so one key could sign as two
    measurers and make a single lab look like two (ORV610 refuses such a line; here it registers no
    one); a wildcard pattern (`lab-*`, `*`) would let one key sign as any measurer (ORV225): the same. Comments and blank lines are kept, so line numbers stay those of the file.
    """
    text = signers.decode("utf-8", "replace")
    kept = []
    for raw in text.splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            fields = _fields(line)
            if not is_measurer_id(fields[0].strip('"')):  # a list or a pattern: ORV610 / ORV225 refuse it
                kept.append("# (refused: not one measurer id)")
                continue
        kept.append(raw)
    return ("\n".join(kept) + "\n").encode("utf-8")


def revoked_keys(signers: bytes) -> dict[str, str]:
    """{"<type> <base64>": revocation date} of the lines marked `revoked:<date>`."""
    entries, _ = parse_signers(signers.decode("utf-8", "replace"))
    return {entry.key: entry.revoked for entry in entries if entry.revoked}


def keys_by_principal(entries: list[SignerLine]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for entry in entries:
        for principal in entry.principals:
            out.setdefault(principal, set()).add(entry.key)
    return out


# --------------------------------------------------------------------------- ssh-keygen


def ssh_keygen() -> str | None:
    return shutil.which("ssh-keygen")


def _run(args: list[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(args, input=data, capture_output=True, timeout=_TIMEOUT_S, check=False)


def signature_of(data: bytes, key: str) -> bytes:
    """An armoured SSHSIG over data in our namespace, made by `ssh-keygen -Y sign` with the private key
    file `key` (or its .pub when the private half is in ssh-agent)."""
    tool = ssh_keygen()
    if tool is None:
        raise SigningError("ssh-keygen (OpenSSH; tested with 9.2) is not installed")
    if not os.path.isfile(key):
        raise SigningError(f"{key}: no such key file")
    try:
        done = _run([tool, "-q", "-Y", "sign", "-f", key, "-n", NAMESPACE], data)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SigningError(f"ssh-keygen failed: {exc}") from None
    if done.returncode != 0 or b"BEGIN SSH SIGNATURE" not in done.stdout:
        raise SigningError("ssh-keygen -Y sign failed: " + done.stderr.decode("utf-8", "replace").strip())
    return done.stdout


@dataclass(frozen=True)
class Verdict:
    status: str
    principal: str | None = None  # who the registered key belongs to, when found
    detail: str = ""  # what went wrong, for the finding's message
    fingerprint: str = ""

    @property
    def ok(self) -> bool:
        return self.status == OK


_MEMO: dict[tuple[str, ...], Verdict] = {}


def _memo_key(armoured: bytes, data: bytes, signers: bytes, measured_by: str) -> tuple[str, ...]:
    return tuple(hashlib.sha256(x).hexdigest() for x in (armoured, data, signers)) + (measured_by,)


def verify(armoured: bytes, data: bytes, signers: bytes, measured_by: str) -> Verdict:
    """Does `armoured` sign `data` in our namespace with the key `signers` registers for measured_by?
    A line naming several measurers registers no one (trusted_signers); a valid signature by a key
    marked revoked is REVOKED, which counts as unsigned."""
    verdict = _verify_trusted(armoured, data, trusted_signers(signers), measured_by)
    if verdict.ok:
        try:
            revoked = revoked_keys(signers).get(parse_signature(armoured).public_key)
        except ValueError:
            revoked = None
        if revoked is not None:
            return Verdict(REVOKED, verdict.principal, revoked, verdict.fingerprint)
    return verdict


def _verify_trusted(armoured: bytes, data: bytes, signers: bytes, measured_by: str) -> Verdict:
    key = _memo_key(armoured, data, signers, measured_by)
    hit = _MEMO.get(key)
    if hit is None:
        try:
            hit = _verify(armoured, data, signers, measured_by)
        except (OSError, subprocess.TimeoutExpired) as exc:  # ssh-keygen could not run: not the files' fault
            return Verdict(NO_TOOL, detail=str(exc))
        _MEMO[key] = hit
    return hit


def _verify(armoured: bytes, data: bytes, signers: bytes, measured_by: str) -> Verdict:
    try:
        info = parse_signature(armoured)
    except ValueError as exc:
        return Verdict(UNREADABLE, detail=str(exc))
    if info.namespace != NAMESPACE:
        return Verdict(WRONG_NAMESPACE, detail=info.namespace, fingerprint=info.fingerprint)
    tool = ssh_keygen()
    if tool is None:
        return Verdict(NO_TOOL, fingerprint=info.fingerprint)
    with tempfile.TemporaryDirectory(prefix="orv-sig-") as tmp:
        sig_path, signers_path = os.path.join(tmp, "run.sig"), os.path.join(tmp, "allowed_signers")
        for path, content in ((sig_path, armoured), (signers_path, signers)):
            with open(path, "wb") as fh:
                fh.write(content)
        # The common case first: one call settles a valid signature.
        done = _run(
            [tool, "-Y", "verify", "-f", signers_path, "-I", measured_by, "-n", NAMESPACE, "-s", sig_path], data
        )
        if done.returncode == 0:
            return Verdict(OK, measured_by, fingerprint=info.fingerprint)
        # Then why not: the signature itself (embedded key, no registry), then whose key it is.
        alone = _run([tool, "-Y", "check-novalidate", "-n", NAMESPACE, "-s", sig_path], data)
        if alone.returncode != 0:
            return Verdict(
                INVALID, detail=alone.stderr.decode("utf-8", "replace").strip(), fingerprint=info.fingerprint
            )
        found = _run([tool, "-Y", "find-principals", "-f", signers_path, "-s", sig_path], b"")
        principals = found.stdout.decode("utf-8", "replace").split() if found.returncode == 0 else []
        if not principals:
            return Verdict(UNREGISTERED, fingerprint=info.fingerprint)
        if measured_by not in principals:
            return Verdict(WRONG_PRINCIPAL, ",".join(principals), fingerprint=info.fingerprint)
        # A registered key of measured_by, yet verify refused: its options (namespaces=,
        # valid-before=) exclude this use.
        return Verdict(UNREGISTERED, measured_by, done.stderr.decode("utf-8", "replace").strip(), info.fingerprint)


# --------------------------------------------------------------------------- signing a stored run


def sign_run(root: str, path: str, key: str) -> tuple[str, Verdict]:
    """Sign a stored run file with `key` and write <run>.json.sig beside it (atomically).

    Refused (SigningError) when the file is not a run file at its content address, or when the key
    is registered for a measurer other than the run's `measured_by` (the signature would be
    rejected, ORV223). An unregistered key still signs: its registration may be pending (ORV222).
    """
    rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    if classify(rel) != "run":
        raise SigningError(
            f"{path}: not a run file in the registry (runs/<first two hex>/<sha256>.json); "
            "store it first with `orv add-run`"
        )
    materialize(root, [rel, rel + SIG_SUFFIX, SIGNERS_PATH])  # a sparse checkout: shown, and the new .sig kept
    with open(os.path.join(root, rel), "rb") as fh:
        data = fh.read()
    if content_address(data) != run_digest_from_path(rel):
        raise SigningError(f"{rel}: its bytes do not match its name; restore the stored file before signing")
    try:
        document = parse_json(data, decode_utf8(data))
    except LoadError as exc:
        raise SigningError(f"{rel}: {exc.message}") from None
    measured_by = document.get("measured_by") if isinstance(document, dict) else None
    if not isinstance(measured_by, str):
        raise SigningError(f"{rel}: the run file has no `measured_by`")
    armoured = signature_of(data, key)
    signers = read_limited(os.path.join(root, SIGNERS_PATH), 1024 * 1024) or b""
    verdict = verify(armoured, data, signers, measured_by)
    if verdict.status == WRONG_PRINCIPAL:
        raise SigningError(
            f"{rel}: this key is registered for `{verdict.principal}`, but the run says "
            f"measured_by `{measured_by}`; store the run with --measured-by {verdict.principal}"
        )
    if verdict.status not in (OK, UNREGISTERED, NO_TOOL):
        raise SigningError(f"{rel}: the new signature does not verify ({verdict.status} {verdict.detail})")
    write_atomic(os.path.join(root, rel + SIG_SUFFIX), armoured)
    return rel + SIG_SUFFIX, verdict


# --------------------------------------------------------------------------- the registry's signatures


@dataclass(frozen=True)
class RunSignature:
    path: str  # runs/ab/<h>.json.sig
    run_path: str
    digest: str
    verdict: Verdict | None  # None when there is no run file to verify against


def read_limited(path: str, limit: int) -> bytes | None:
    try:
        if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) > limit:
            return None
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def signatures(snapshot: Snapshot) -> Mapping[str, RunSignature]:
    """Every signature file of the snapshot, by run digest, verified once per snapshot.

    Checks (ORV220-ORV224) and tiers ask the same question; both read this answer.
    """
    return snapshot.memo("signatures", lambda: _verify_all(snapshot))


def _verify_all(snapshot: Snapshot) -> Mapping[str, RunSignature]:
    signers = (
        read_limited(os.path.join(snapshot.root, SIGNERS_PATH), 1024 * 1024) if SIGNERS_PATH in snapshot.files else None
    )
    out: dict[str, RunSignature] = {}
    used: dict[tuple[str, ...], Verdict] = {}
    # classify only what ends like a signature: its patterns cost ~2 µs a file, twice over 20,000 files
    signature_files = [rel for rel in snapshot.files if rel.endswith(SIG_SUFFIX) and classify(rel) == "run-signature"]
    stored = _remembered(snapshot.root, signers or b"") if signature_files else None
    for rel in signature_files:
        digest = run_digest_from_path(rel) or ""
        run_rel = rel[: -len(SIG_SUFFIX)]
        run = snapshot.runs.get(digest)
        if run is None:
            out[digest] = RunSignature(rel, run_rel, digest, None)
            continue
        # a quality run says who measured it as a throughput run does (its facts keep measured_by)
        measured_by = (
            run.meta.measured_by
            if run.meta is not None
            else (run.quality.measured_by if run.quality is not None else None)
        )
        if measured_by is None:
            continue  # an unreadable run file has its own finding; nothing to verify against
        armoured = read_limited(os.path.join(snapshot.root, rel), MAX_SIG_BYTES)
        data = read_limited(os.path.join(snapshot.root, run_rel), 1 << 31)
        if armoured is None or data is None:
            verdict = Verdict(UNREADABLE, detail="the file cannot be read")
        else:
            verdict = verify(armoured, data, signers or b"", measured_by)
            if verdict.status != NO_TOOL:  # NO_TOOL is this machine's state, not the files'
                used[_memo_key(armoured, data, trusted_signers(signers or b""), measured_by)] = verdict
        out[digest] = RunSignature(rel, run_rel, digest, verdict)
    if stored is not None and used != stored.value:
        stored.save(used)  # this registry's verdicts only, so the file never outgrows it
    return out


def _remembered(root: str, signers: bytes) -> Remembered | None:
    """Verdicts of earlier checks from .git/orv (each `ssh-keygen` call costs ~25 ms), loaded into the
    memo; None when there is no store yet, or when allowed_signers has time-limited keys (a verdict
    then depends on the day, not only on the bytes)."""
    if b"valid-before" in signers.lower() or b"valid-after" in signers.lower():
        return None
    store = open_store(root)
    if store.folder is None or not store.folder.is_dir():
        return None  # `orv check --no-cache` on a fresh clone: nothing to reuse, nothing written
    found = remembered(store, "signatures")
    if isinstance(found.value, dict):
        for key, verdict in found.value.items():
            if isinstance(key, tuple) and isinstance(verdict, Verdict):
                _MEMO.setdefault(key, verdict)
    return found


def signer(snapshot: Snapshot, digest: str) -> str | None:
    """The registered measurer whose valid signature the run carries, else None (unsigned or invalid)."""
    found = signatures(snapshot).get(digest)
    return found.verdict.principal if found is not None and found.verdict is not None and found.verdict.ok else None
