"""Signed measurers end to end, with real keys made by `ssh-keygen` in each test (none committed).

A run file is signed with `orv sign` / `orv add-run --sign-with`; `orv check` verifies each
signature against measurers/allowed_signers with `ssh-keygen -Y verify`; only runs signed by two
registered measurers can make a recipe T3.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.testing.checking import check, found
from tests.testing.factories import registry_repo, store_run, training_recipe, write_recipe
from tests.testing.git import commit_all, git
from tests.testing.signing import codes, keygen, measured, register, sign, tier
from validator.cli import main
from validator.engine.evaluate import Config, run
from validator.evidence import signing
from validator.evidence.tiers import NEEDS_SECOND_SIGNER, NEEDS_SIGNED
from validator.hashing import run_path

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH's ssh-keygen")


@pytest.fixture
def two_labs(registry: Path, tmp_path: Path) -> dict[str, Any]:
    """A recipe with two verified runs by lab-a and lab-b, both keys registered, nothing signed yet."""
    alice, bob = keygen(tmp_path, "lab-a"), keygen(tmp_path, "lab-b")
    register(registry, ("lab-a", alice), ("lab-b", bob))
    recipe = training_recipe("signed", 1480.4)
    a = store_run(registry, measured(recipe, 1480.4, "lab-a", "2026-10-18T10:00:00Z", 1))
    b = store_run(registry, measured(recipe, 1475.0, "lab-b", "2026-10-19T08:30:00Z", 2))
    recipe["runs"] = [a, b]
    return {
        "root": registry,
        "rel": write_recipe(registry, recipe),
        "a": a,
        "b": b,
        "alice": alice,
        "bob": bob,
        "recipe": recipe,
    }


def test_two_registered_measurers_signing_make_t3_and_check_clean(two_labs: dict[str, Any]) -> None:
    root = two_labs["root"]
    sign(root, two_labs["a"], two_labs["alice"])
    sign(root, two_labs["b"], two_labs["bob"])
    assert codes(root) == []
    assert tier(root, two_labs["rel"]).tier == "T3"


def test_unsigned_runs_reach_at_most_t2_whatever_measured_by_says(two_labs: dict[str, Any]) -> None:
    result = tier(two_labs["root"], two_labs["rel"])
    assert result.tier == "T2" and result.reasons == (NEEDS_SIGNED,)


def test_one_signed_run_needs_a_second_signer(two_labs: dict[str, Any]) -> None:
    sign(two_labs["root"], two_labs["a"], two_labs["alice"])
    result = tier(two_labs["root"], two_labs["rel"])
    assert result.tier == "T2" and result.reasons == (NEEDS_SECOND_SIGNER,)


def test_one_measurer_signing_both_runs_is_not_a_reproduction(two_labs: dict[str, Any]) -> None:
    root = two_labs["root"]
    sign(root, two_labs["a"], two_labs["alice"])
    # lab-a cannot sign lab-b's run: orv sign refuses, and a hand-made signature is ORV223
    rel = run_path(two_labs["b"].split(":")[-1])
    assert main(["sign", str(root / rel), "--key", str(two_labs["alice"]), "--root", str(root)]) == 1
    subprocess.run(
        ["ssh-keygen", "-q", "-Y", "sign", "-f", str(two_labs["alice"]), "-n", signing.NAMESPACE, str(root / rel)],
        check=True,
    )
    assert codes(root) == [f"ORV223 {rel}"]
    assert tier(root, two_labs["rel"]).reasons == (NEEDS_SECOND_SIGNER,)


def test_tampered_signature_is_orv220(two_labs: dict[str, Any]) -> None:
    root = two_labs["root"]
    sign(root, two_labs["a"], two_labs["alice"])
    sig = sign(root, two_labs["b"], two_labs["bob"])
    lines = sig.read_text().splitlines()
    body = lines[-2]
    lines[-2] = body[:10] + ("A" if body[10] != "A" else "B") + body[11:]  # a byte of the signature itself
    sig.write_text("\n".join(lines) + "\n")
    assert codes(root) == [f"ORV220 {sig.relative_to(root)}"]
    assert tier(root, two_labs["rel"]).tier == "T2"


def test_tampered_run_bytes_break_the_signature_even_when_renamed(two_labs: dict[str, Any]) -> None:
    root = two_labs["root"]
    sign(root, two_labs["a"], two_labs["alice"])
    sig = sign(root, two_labs["b"], two_labs["bob"])
    old = run_path(two_labs["b"].split(":")[-1])
    # edit the run (a better figure), store it under its new address and move the signature along
    text = (root / old).read_text().replace('"tokens_per_s_per_gpu":1475', '"tokens_per_s_per_gpu":1490')
    assert text != (root / old).read_text()
    (root / old).unlink()
    import json

    from validator.registry.store import store_run_document

    new = store_run_document(str(root), json.loads(text))
    sig.rename(root / (new.path + ".sig"))
    recipe = two_labs["recipe"]
    recipe["runs"] = [two_labs["a"], f"sha256:{new.digest}"]
    write_recipe(root, recipe)
    assert f"ORV220 {new.path}.sig" in codes(root)
    assert tier(root, two_labs["rel"]).tier != "T3"


def test_wrong_namespace_is_orv221(two_labs: dict[str, Any]) -> None:
    root = two_labs["root"]
    sign(root, two_labs["a"], two_labs["alice"])
    rel = run_path(two_labs["b"].split(":")[-1])
    subprocess.run(
        ["ssh-keygen", "-q", "-Y", "sign", "-f", str(two_labs["bob"]), "-n", "git", str(root / rel)], check=True
    )
    assert codes(root) == [f"ORV221 {rel}.sig"]
    assert tier(root, two_labs["rel"]).reasons == (NEEDS_SECOND_SIGNER,)


def test_unregistered_key_is_orv222(two_labs: dict[str, Any], tmp_path: Path) -> None:
    root = two_labs["root"]
    sign(root, two_labs["a"], two_labs["alice"])
    mallory = keygen(tmp_path, "mallory")
    sig = sign(root, two_labs["b"], mallory)  # signing works; the key is just not registered
    assert codes(root) == [f"ORV222 {sig.relative_to(root)}"]
    assert tier(root, two_labs["rel"]).reasons == (NEEDS_SECOND_SIGNER,)


def test_replaced_or_revoked_key_no_longer_verifies_old_signatures(two_labs: dict[str, Any], tmp_path: Path) -> None:
    root = two_labs["root"]
    sign(root, two_labs["a"], two_labs["alice"])
    sig = sign(root, two_labs["b"], two_labs["bob"])
    register(root, ("lab-a", two_labs["alice"]), ("lab-b", keygen(tmp_path, "lab-b-new")))  # replaced
    assert codes(root) == [f"ORV222 {sig.relative_to(root)}"]
    register(root, ("lab-a", two_labs["alice"]))  # revoked
    assert codes(root) == [f"ORV222 {sig.relative_to(root)}"]
    assert tier(root, two_labs["rel"]).tier == "T2"


def test_signature_without_its_run_is_orv224(two_labs: dict[str, Any]) -> None:
    root = two_labs["root"]
    sig = sign(root, two_labs["a"], two_labs["alice"])
    stray = root / "runs" / "00" / ("00" + "1" * 62 + ".json.sig")
    stray.parent.mkdir(parents=True)
    shutil.copy(sig, stray)
    assert codes(root) == [f"ORV224 {stray.relative_to(root)}"]


def test_a_sig_file_has_a_place_in_the_layout_but_a_stray_one_does_not(two_labs: dict[str, Any]) -> None:
    root = two_labs["root"]
    sig = sign(root, two_labs["a"], two_labs["alice"])
    shutil.copy(sig, root / "runs" / "notes.sig")
    assert codes(root) == ["ORV107 runs/notes.sig"]


def test_malformed_measurers_file_is_orv225(registry: Path) -> None:
    (registry / "measurers").mkdir()
    (registry / "measurers" / "allowed_signers").write_text("# ok\nlab-a not-a-key\n*.example ssh-ed25519 AAAA\n")
    assert codes(registry) == ["ORV225 measurers/allowed_signers"] * 2


def test_add_run_sign_with_stores_and_signs(
    two_labs: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_labs["root"]
    import json

    doc = measured(two_labs["recipe"], 1478.0, "lab-b", "2026-10-20T09:00:00Z", 3)
    source = tmp_path / "run.json"
    source.write_text(json.dumps(doc))
    assert main(["add-run", str(source), "--root", str(root), "--sign-with", str(two_labs["bob"])]) == 0
    out, err = capsys.readouterr()
    digest = out.strip().split(":")[1]
    assert (root / (run_path(digest) + ".sig")).is_file()
    assert "verified: signature by registered measurer `lab-b`" in err


def test_add_run_from_lm_eval_sign_with_signs_the_quality_run_too(
    two_labs: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """A quality run is a run like any other: --sign-with signs what add-run stored (issue 52)."""
    from tests.testing.paths import FIXTURES

    root = two_labs["root"]
    args = ["add-run", "--root", str(root), "--from", "lm-eval", str(FIXTURES / "lmeval" / "reference")]
    args += ["--reference-for", "qwen3.8-27b", "--quant", "bf16", "--measured-by", "lab-b"]
    assert main([*args, "--sign-with", str(two_labs["bob"])]) == 0
    out, err = capsys.readouterr()
    digest = out.strip().split(":")[1]
    assert (root / (run_path(digest) + ".sig")).is_file()
    assert "verified: signature by registered measurer `lab-b`" in err


def test_signatures_are_verified_by_ssh_keygen_not_by_parsing(two_labs: dict[str, Any]) -> None:
    """A well-formed SSHSIG blob with our namespace and a registered key but a forged signature fails."""
    root = two_labs["root"]
    sig = sign(root, two_labs["a"], two_labs["alice"])
    data = (root / run_path(two_labs["a"].split(":")[-1])).read_bytes()
    verdict = signing.verify(
        sig.read_bytes(), data + b" ", (root / "measurers" / "allowed_signers").read_bytes(), "lab-a"
    )
    assert verdict.status == signing.INVALID
    assert signing.verify(sig.read_bytes(), data, (root / "measurers" / "allowed_signers").read_bytes(), "lab-a").ok


# --------------------------------------------------------------------------- pull-request rules


@pytest.mark.git
def test_pr_changing_measurers_needs_a_waiver_and_a_key_change_is_its_own_finding(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    git(repo, "checkout", "-q", "main")
    alice = keygen(tmp_path, "lab-a")
    register(repo, ("lab-a", alice))
    commit_all(repo, "register lab-a")
    git(repo, "checkout", "-q", "-b", "add-bob")
    bob = keygen(tmp_path, "lab-b")
    register(repo, ("lab-a", alice), ("lab-b", bob))
    commit_all(repo, "register lab-b")
    assert found(check(repo)) == ["ORV607 measurers/allowed_signers:1"]
    assert found(check(repo, waive=("ORV607",))) == []

    git(repo, "checkout", "-q", "-b", "swap-alice")
    register(repo, ("lab-a", keygen(tmp_path, "lab-a-new")), ("lab-b", bob))
    commit_all(repo, "replace lab-a's key")
    result = check(repo, base="add-bob", waive=("ORV607",))
    assert found(result) == ["ORV608 measurers/allowed_signers:1"]
    assert "replaced" in result.result.diagnostics[0].message


@pytest.mark.git
def test_pr_changing_a_signature_on_the_base_is_orv601(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    git(repo, "checkout", "-q", "main")
    alice = keygen(tmp_path, "lab-a")
    register(repo, ("lab-a", alice))
    run_rel = next(p for p in git(repo, "ls-files", "runs").splitlines())
    subprocess.run(
        ["ssh-keygen", "-q", "-Y", "sign", "-f", str(alice), "-n", signing.NAMESPACE, str(repo / run_rel)], check=True
    )
    commit_all(repo, "signed")
    git(repo, "checkout", "-q", "-b", "resign")
    (repo / (run_rel + ".sig")).unlink()
    subprocess.run(
        [
            "ssh-keygen",
            "-q",
            "-Y",
            "sign",
            "-f",
            str(keygen(tmp_path, "other")),
            "-n",
            signing.NAMESPACE,
            str(repo / run_rel),
        ],
        check=True,
    )
    commit_all(repo, "re-signed")
    assert "ORV601 " + run_rel + ".sig:1" in found(check(repo, base="main"))


def test_orv_explain_tiers_says_what_t3_needs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "tiers"]) == 0
    text = capsys.readouterr().out
    assert "measurers/allowed_signers" in text and "Unsigned runs therefore reach at most T2" in text


SIGNERS = ("unsigned", "lab-a", "lab-b", "mallory")  # mallory's key is valid but not registered


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("keys")
    return {who: keygen(folder, who) for who in SIGNERS[1:]}


@pytest.mark.parametrize("first", SIGNERS)
@pytest.mark.parametrize("second", SIGNERS)
def test_no_path_to_t3_without_two_registered_keys(
    first: str, second: str, keys: dict[str, Path], tmp_path: Path
) -> None:
    from tests.conftest import make_registry

    root = make_registry(tmp_path / "registry")
    register(root, ("lab-a", keys["lab-a"]), ("lab-b", keys["lab-b"]))
    recipe = training_recipe("every-combination", 1480.4)
    digests = []
    for i, who in enumerate((first, second)):
        name = "lab-c" if who == "unsigned" else who
        digests.append(store_run(root, measured(recipe, 1480.4, name, f"2026-10-1{8 + i}T10:00:00Z", i + 1)))
    recipe["runs"] = digests
    rel = write_recipe(root, recipe)
    for digest, who in zip(digests, (first, second)):
        if who != "unsigned":
            sign(root, digest, keys[who])
    assert (tier(root, rel).tier == "T3") == ({first, second} == {"lab-a", "lab-b"})


def test_verdicts_are_remembered_in_the_git_folder_between_checks(
    two_labs: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = two_labs["root"]
    sign(root, two_labs["a"], two_labs["alice"])
    sign(root, two_labs["b"], two_labs["bob"])
    for args in (
        ("init", "-q"),
        ("add", "-A"),
        ("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "registry"),
    ):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    assert run(Config(root=str(root), skip_boards=True, cache=True)).diagnostics == ()
    signing._MEMO.clear()

    def no_ssh_keygen(*_: Any, **__: Any) -> Any:
        raise AssertionError("ssh-keygen ran again for an unchanged signature")

    monkeypatch.setattr(signing, "_run", no_ssh_keygen)
    assert run(Config(root=str(root), skip_boards=True, cache=True)).diagnostics == ()
    assert tier(root, two_labs["rel"]).tier == "T3"


def test_without_ssh_keygen_a_signature_is_unverified_not_trusted(
    two_labs: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = two_labs["root"]
    sig = sign(root, two_labs["a"], two_labs["alice"])
    sign(root, two_labs["b"], two_labs["bob"])
    signing._MEMO.clear()
    monkeypatch.setattr(signing, "ssh_keygen", lambda: None)
    found = [d for d in run(Config(root=str(root), skip_boards=True)).diagnostics]
    assert [(d.code, d.path) for d in found if d.path.endswith(".sig")][0] == ("ORV220", str(sig.relative_to(root)))
    assert "ssh-keygen is not installed" in found[0].message
    assert tier(root, two_labs["rel"]).tier == "T2"


# --------------------------------------------------------------------------- accountable measurers (issue #51)


def _rows_of(node: Any, recipe_id: str) -> list[dict[str, Any]]:
    """Every board row (a mapping with `recipe` and `tier`) of the recipe, anywhere in a boards file."""
    if isinstance(node, dict):
        here = [node] if node.get("recipe") == recipe_id and "tier" in node else []
        return here + [row for value in node.values() for row in _rows_of(value, recipe_id)]
    if isinstance(node, list):
        return [row for value in node for row in _rows_of(value, recipe_id)]
    return []


def _board_tiers(root: Path, recipe_id: str) -> set[str]:
    import json

    assert main(["boards", "--root", str(root)]) == 0
    tiers: set[str] = set()
    for path in (root / "boards").rglob("*.json"):
        tiers |= {row["tier"] for row in _rows_of(json.loads(path.read_text(encoding="utf-8")), recipe_id)}
    return tiers


def _mark(root: Path, principal: str, mark: str) -> None:
    """Append a comment mark (`revoked:<date>`, `github:<user>`) to the principal's key line."""
    path = root / "measurers" / "allowed_signers"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text(
        "\n".join(f"{line} {mark}" if line.startswith(principal + " ") else line for line in lines) + "\n",
        encoding="utf-8",
    )


def test_a_revoked_keys_runs_stop_counting_in_the_gate_and_on_the_next_boards(
    two_labs: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    root, rel = two_labs["root"], two_labs["rel"]
    sign(root, two_labs["a"], two_labs["alice"])
    sign(root, two_labs["b"], two_labs["bob"])
    assert tier(root, rel).tier == "T3"
    assert _board_tiers(root, "signed") == {"T3"}
    _mark(root, "lab-b", "revoked:2026-12-01")
    result = run(Config(root=str(root), skip_boards=True))
    revoked = [d for d in result.diagnostics if d.code == "ORV611"]
    assert [d.path for d in revoked] == [run_path(two_labs["b"].split(":")[1]) + ".sig"]
    assert "revoked 2026-12-01" in revoked[0].message and "lab-b" in revoked[0].message
    assert codes(root) == []  # a warning: the run stays, unsigned
    assert tier(root, rel).tier == "T2" and tier(root, rel).reasons == (NEEDS_SECOND_SIGNER,)
    assert _board_tiers(root, "signed") == {"T2"}
    # lab-a's key, not revoked, still signs: one signer left (NEEDS_SECOND_SIGNER, not NEEDS_SIGNED)


def test_one_key_listed_for_two_measurers_signs_as_neither(
    registry: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue #51: `lab-b,lab-c KEY` let one key sign as two measurers and reach T3 alone."""
    key = keygen(tmp_path, "lab-bc")
    public = Path(str(key) + ".pub").read_text(encoding="utf-8").split()[:2]
    (registry / "measurers").mkdir(exist_ok=True)
    (registry / "measurers" / "allowed_signers").write_text(f"lab-b,lab-c {' '.join(public)}\n", encoding="utf-8")
    recipe = training_recipe("one-lab", 1480.4)
    b = store_run(registry, measured(recipe, 1480.4, "lab-b", "2026-10-18T10:00:00Z", 1))
    c = store_run(registry, measured(recipe, 1475.0, "lab-c", "2026-10-19T08:30:00Z", 2))
    recipe["runs"] = [b, c]
    rel = write_recipe(registry, recipe)
    sign(registry, b, key)
    sign(registry, c, key)
    found_codes = codes(registry)
    assert "ORV610 measurers/allowed_signers" in found_codes
    assert f"ORV222 {run_path(b.split(':')[1])}.sig" in found_codes
    assert tier(registry, rel).tier == "T2"


def test_the_same_key_on_two_lines_of_one_measurer_each_still_signs(
    registry: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The honest twin: one principal per line, two labs, two keys: T3 and no finding."""
    alice, bob = keygen(tmp_path, "lab-a"), keygen(tmp_path, "lab-b")
    register(registry, ("lab-a", alice), ("lab-b", bob))
    _mark(registry, "lab-a", "github:alice-lab verified:2026-12-01")
    recipe = training_recipe("two-labs", 1480.4)
    a = store_run(registry, measured(recipe, 1480.4, "lab-a", "2026-10-18T10:00:00Z", 1))
    b = store_run(registry, measured(recipe, 1475.0, "lab-b", "2026-10-19T08:30:00Z", 2))
    recipe["runs"] = [a, b]
    rel = write_recipe(registry, recipe)
    sign(registry, a, alice)
    sign(registry, b, bob)
    assert codes(registry) == []
    assert tier(registry, rel).tier == "T3"


@pytest.mark.git
def test_a_key_added_to_an_existing_measurer_is_orv608(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    git(repo, "checkout", "-q", "main")
    alice = keygen(tmp_path, "lab-a")
    register(repo, ("lab-a", alice))
    commit_all(repo, "register lab-a")
    git(repo, "checkout", "-q", "-b", "second-key")
    register(repo, ("lab-a", alice), ("lab-a", keygen(tmp_path, "lab-a-laptop")))
    commit_all(repo, "a second key for lab-a")
    result = check(repo, waive=("ORV607",))
    assert found(result) == ["ORV608 measurers/allowed_signers:1"]
    assert "gains a key" in result.result.diagnostics[0].message
    assert found(check(repo, waive=("ORV607", "ORV608"))) == []


def _github(keys_by_user: dict[str, list[str]]) -> tuple[str, Callable[[], None]]:
    """A local stand-in for GitHub's REST API (`GET /users/<user>/ssh_signing_keys`): (its URL, stop)."""
    import http.server
    import json
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            parts = self.path.strip("/").split("/")
            if len(parts) == 3 and parts[0] == "users" and parts[2] == "ssh_signing_keys" and parts[1] in keys_by_user:
                body = json.dumps([{"id": i, "key": k, "title": "t"} for i, k in enumerate(keys_by_user[parts[1]])])
                self.send_response(200)
            else:
                body = json.dumps({"message": "Not Found"})
                self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return f"http://127.0.0.1:{server.server_address[1]}", stop


def test_measurers_verify_marks_keys_github_publishes_and_refuses_the_rest(
    registry: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import re

    alice, bob, other = keygen(tmp_path, "lab-a"), keygen(tmp_path, "lab-b"), keygen(tmp_path, "someone")

    def public(key: Path) -> str:
        return " ".join(Path(str(key) + ".pub").read_text(encoding="utf-8").split()[:2])

    register(registry, ("lab-a", alice), ("lab-b", bob))
    _mark(registry, "lab-a", "github:alice-lab")
    _mark(registry, "lab-b", "github:bob-lab")
    url, stop = _github({"alice-lab": [public(alice) + " laptop"], "bob-lab": [public(other)]})
    try:
        capsys.readouterr()
        code = main(["measurers", "verify", "--root", str(registry), "--api-url", url])
    finally:
        stop()
    out, err = capsys.readouterr()
    assert code == 1  # lab-b's key is not among bob-lab's published keys
    text = (registry / "measurers" / "allowed_signers").read_text(encoding="utf-8")
    lab_a = next(line for line in text.splitlines() if line.startswith("lab-a "))
    lab_b = next(line for line in text.splitlines() if line.startswith("lab-b "))
    assert re.search(r" github:alice-lab verified:\d{4}-\d\d-\d\d$", lab_a), lab_a
    assert "verified:" not in lab_b and "not among the signing keys GitHub publishes for `bob-lab`" in err
    assert out.startswith("lab-a\talice-lab\tverified ")
    # the gate reads the marks offline; a verified line changes no verdict
    assert codes(registry) == []


def test_measurers_verify_takes_the_fetch_as_a_parameter(registry: Path, tmp_path: Path) -> None:
    import datetime

    from validator.commands.measurers import verify

    alice = keygen(tmp_path, "lab-a")
    register(registry, ("lab-a", alice))
    _mark(registry, "lab-a", "github:alice-lab")
    key = " ".join(Path(str(alice) + ".pub").read_text(encoding="utf-8").split()[:2])
    asked: list[str] = []

    def fetch(url: str) -> bytes:
        asked.append(url)
        return ('[{"id": 1, "key": "' + key + '"}]').encode()

    day = datetime.date(2026, 1, 2)
    assert verify(str(registry), day, "https://api.example", fetch).exit_code == 0
    assert asked == ["https://api.example/users/alice-lab/ssh_signing_keys"]
    assert "github:alice-lab verified:2026-01-02" in (registry / "measurers" / "allowed_signers").read_text()
    # run again a day later: the mark is replaced, not repeated
    verify(str(registry), datetime.date(2026, 1, 3), "https://api.example", fetch)
    text = (registry / "measurers" / "allowed_signers").read_text()
    assert text.count("verified:") == 1 and "verified:2026-01-03" in text


def test_measurers_audit_lists_the_recipes_resting_on_a_measurer(
    two_labs: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_labs["root"]
    sign(root, two_labs["a"], two_labs["alice"])
    sign(root, two_labs["b"], two_labs["bob"])
    capsys.readouterr()
    assert main(["measurers", "audit", "lab-b", "--root", str(root)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [f"{two_labs['rel']}\tT3\t{two_labs['b'].split(':')[1][:12]}"]
    assert "1 recipe(s) rest on runs signed by `lab-b`" in err
    _mark(root, "lab-b", "revoked:2026-12-01")
    assert main(["measurers", "audit", "lab-b", "--root", str(root)]) == 0
    out, _ = capsys.readouterr()
    assert out.splitlines() == [f"{two_labs['rel']}\tT2\t{two_labs['b'].split(':')[1][:12]} (revoked key)"]
    assert main(["measurers", "audit", "nobody", "--root", str(root)]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "0 recipe(s)" in err


@pytest.mark.git
def test_a_registration_pull_request_listing_two_measurers_on_one_line_is_refused_beyond_orv607(
    tmp_path: Path,
) -> None:
    """Issue #51: such a line showed only ORV607, which maintainers waive after checking the key's owner."""
    repo = registry_repo(tmp_path)
    git(repo, "checkout", "-q", "main")
    alice = keygen(tmp_path, "lab-a")
    register(repo, ("lab-a", alice))
    commit_all(repo, "register lab-a")
    git(repo, "checkout", "-q", "-b", "add-two")
    key = keygen(tmp_path, "lab-bc")
    public = " ".join(Path(str(key) + ".pub").read_text(encoding="utf-8").split()[:2])
    path = repo / "measurers" / "allowed_signers"
    path.write_text(path.read_text(encoding="utf-8") + f"lab-b,lab-c {public}\n", encoding="utf-8")
    commit_all(repo, "register lab-b and lab-c with one key")
    waived = found(check(repo, waive=("ORV607",)))
    assert len(waived) == 1 and waived[0].startswith("ORV610 measurers/allowed_signers:"), waived
