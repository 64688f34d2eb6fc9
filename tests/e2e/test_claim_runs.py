"""Which run a recipe's claims and workload are proved against (issues #49 item 3, #51 item 3), each change
built as a pull request and checked as action.yml runs the gate (`orv check --base main`).

Sweeps are proved per point: each run at its own point's concurrency (prompts, requests in flight); the
headline claim needs a run at the headline's concurrency or stays a claim (T0), and a frontier never lists
one run twice. Claims come from one run: the claim is held to its primary run within 1% (ORV207), a
reproduction to the primary within T3's 5%, shown as disagreeing beyond it (ORV245), never an error.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tests.testing.checking import check, found
from tests.testing.factories import inference_recipe, inference_run, registry_repo, store_run, write_recipe
from tests.testing.git import commit_all, git
from tests.testing.signing import keygen, register, sign, tier
from validator.boards.build import GitStamp
from validator.boards.regenerate import fresh_document
from validator.cli import main
from validator.engine.evaluate import analyse

pytestmark = pytest.mark.git


def requests(
    n: int,
    concurrency: int,
    seed: int,
    *,
    decode: float = 40.0,
    ttft: float = 100.0,
    prompt: int = 1000,
    output: int = 101,
    ttft_mean: float | None = None,
) -> tuple[list[dict[str, Any]], float]:
    """`n` requests served `concurrency` at a time (each wave starts when the slowest of the last ends), with
    a real measurement's noise (TTFT ±10%, each request's decode ±3%); `ttft_mean` scales the TTFTs to that
    exact mean. Returns them and the run's span in s. The figures recomputed from them (independently of
    orv) are `figures`: mean TTFT and the per-stream decode rate from the mean time per output token."""
    rng = random.Random(seed)
    draws = [(ttft * rng.uniform(0.9, 1.1), decode * rng.uniform(0.97, 1.03)) for _ in range(n)]
    scale = ttft_mean * n / sum(t for t, _ in draws) if ttft_mean else 1.0
    samples, wave_start, wave_end = [], 0.0, 0.0
    for i, (first_ms, rate) in enumerate(draws):
        if i % concurrency == 0:
            wave_start = wave_end + 5.0
        first = round(first_ms * scale, 3)
        e2e = round(first + (output - 1) * 1000.0 / rate, 3)
        samples.append(
            {"prompt_tokens": prompt, "output_tokens": output, "ttft_ms": first, "e2e_ms": e2e, "start_ms": wave_start}
        )
        wave_end = max(wave_end, wave_start + e2e)
    return samples, round(wave_end / 1000.0 + 0.01, 3)


def figures(samples: list[dict[str, Any]]) -> dict[str, float]:
    """The headline figures as docs/metrics.md defines them: mean TTFT, per-stream decode from the mean TPOT."""
    tpot = sum((s["e2e_ms"] - s["ttft_ms"]) / (s["output_tokens"] - 1) for s in samples) / len(samples)
    return {
        "decode_tok_s": round(1000.0 / tpot, 2),
        "ttft_ms": round(sum(s["ttft_ms"] for s in samples) / len(samples), 2),
    }


def run_at(
    repo: Path, recipe: dict[str, Any], samples: list[dict[str, Any]], span: float, concurrency: int, **meta: Any
) -> str:
    run = inference_run(
        recipe, samples=False, duration_s=span, serving={**recipe["serving"], "concurrency": concurrency}, **meta
    )
    run["samples"], run["summary"] = samples, {"decode_tok_s": figures(samples)["decode_tok_s"]}  # the tool's own
    return store_run(repo, run)


def swept(rid: str, headline: int, points: list[int], workload: str = "chat-1000-100") -> dict[str, Any]:
    recipe = inference_recipe(rid, prefill=None, ttft=None, quant="bf16", workload=workload)
    recipe["serving"] = {"context_len": 8192, "concurrency": headline}
    recipe["sweep"] = {"concurrency": points, "claimed": []}
    return recipe


def measure_sweep(
    repo: Path, recipe: dict[str, Any], sizes: dict[int, int], **lengths: int
) -> dict[int, tuple[str, dict[str, float]]]:
    """One run per point (`sizes`: concurrency -> requests), each claim its run's figures; writes the recipe."""
    out, runs = {}, []
    for c, n in sizes.items():
        samples, span = requests(n, c, seed=c, **lengths)
        digest = run_at(repo, recipe, samples, span, c)
        claim = {"decode_tok_s": figures(samples)["decode_tok_s"]}
        if c == recipe["serving"]["concurrency"]:
            recipe["claimed"] = claim
        else:
            recipe["sweep"]["claimed"].append({"concurrency": c, **claim})
        runs.append(digest)
        out[c] = (digest, figures(samples))
    recipe["runs"] = runs
    write_recipe(repo, recipe)
    return out


def gate(repo: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The pull request committed and checked as the Action checks it: the exit code and the annotations."""
    commit_all(repo, "the pull request")
    capsys.readouterr()
    code = main(["check", "--root", str(repo), "--base", "main", "--format", "github"])
    return code, capsys.readouterr().out


def rel(recipe: dict[str, Any]) -> str:
    return f"recipes/inference/{recipe['model']}/{recipe['id']}.yaml"


# --------------------------------------------------------------------------- sweeps, proved per point


def test_a_sweep_point_with_too_few_requests_for_its_own_concurrency_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`sweep.concurrency: [1, 64]` on a workload of 10 prompts per concurrency: the c64 run's 10
    requests prove c1's 10, never c64's 640."""
    repo = registry_repo(tmp_path)
    recipe = swept("glm-sweep-c1-c64", 1, [1, 64], workload="isl1k-osl1k")
    runs = measure_sweep(repo, recipe, {1: 10, 64: 10}, prompt=1000, output=1000)
    code, out = gate(repo, capsys)
    assert code == 1
    findings = [d for d in check(repo).result.diagnostics if d.severity.value == "error"]
    assert [d.code for d in findings] == ["ORV242"]
    assert runs[64][0][7:19] in findings[0].message
    assert "needs at least 640 (10 × concurrency 64)" in findings[0].message
    assert "::error" in out and "640" in out


@pytest.mark.parametrize(
    ("headline", "points", "sizes"), [(1, [1, 8], {1: 10, 8: 80}), (16, [1, 16], {16: 160, 1: 10})]
)
def test_an_honest_sweep_spanning_its_headline_passes_at_t2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], headline: int, points: list[int], sizes: dict[int, int]
) -> None:
    """A real c8 point (8 requests in flight) under a c1 headline is not ORV243, and a real c1 point (10
    requests) under a c16 headline is not ORV242: each point is proved at its own concurrency."""
    repo = registry_repo(tmp_path)
    recipe = swept(f"glm-sweep-honest-c{headline}", headline, points, workload="isl1k-osl1k")
    runs = measure_sweep(repo, recipe, sizes, prompt=1000, output=1000)
    code, out = gate(repo, capsys)
    assert (code, found(check(repo))) == (0, []), out
    assert tier(repo, rel(recipe)).tier == "T2"
    document = fresh_document(analyse(str(repo)), GitStamp())
    (row,) = [r for r in document["boards"]["measured"] if r["recipe"] == recipe["id"]]
    assert (row["concurrency"], row["run_sha"]) == (headline, runs[headline][0].split(":")[1])
    (group,) = [g for g in document["frontiers"] if g["workload"] == "isl1k-osl1k"]
    mine = [p for p in group["points"] if p["recipe"] == recipe["id"]]
    assert sorted((p["concurrency"], p["run_sha"]) for p in mine) == sorted(
        (c, digest.split(":")[1]) for c, (digest, _) in runs.items()
    )
    for p in mine:
        assert p["interactivity"] == pytest.approx(runs[p["concurrency"]][1]["decode_tok_s"], rel=1e-3)


def test_a_point_with_more_requests_in_flight_than_its_own_concurrency_is_still_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The forgery twin of the honest c8 point: a run labelled c8 whose start times show 16 in flight."""
    repo = registry_repo(tmp_path)
    recipe = swept("glm-sweep-c1-c8-forged", 1, [1, 8], workload="isl1k-osl1k")
    measure_sweep(repo, recipe, {1: 10}, prompt=1000, output=1000)
    samples, span = requests(80, 16, seed=8, prompt=1000, output=1000)
    recipe["runs"].append(run_at(repo, recipe, samples, span, 8))
    recipe["sweep"]["claimed"].append({"concurrency": 8, "decode_tok_s": figures(samples)["decode_tok_s"]})
    write_recipe(repo, recipe)
    code, _ = gate(repo, capsys)
    errors = {d.code: d for d in check(repo).result.diagnostics if d.severity.value == "error"}
    assert code == 1 and set(errors) <= {"ORV243", "ORV511"}  # ORV511: 16 streams' output over 8 × one's rate
    assert "up to 16 requests in flight" in errors["ORV243"].message and "concurrency 8" in errors["ORV243"].message


def test_a_sweep_without_a_run_at_its_headline_stays_a_claim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sweep over [1, 16] claiming 120 tok/s at its c1 headline, whose only run measured c16: the headline
    claim is compared with nothing, so the recipe is a claim (T0) with the reason; its row shows the claim
    at concurrency 1, never the c16 run's figures; no frontier lists that run (let alone twice)."""
    repo = registry_repo(tmp_path)
    recipe = swept("glm-sweep-headline-unmeasured", 1, [1, 16])
    runs = measure_sweep(repo, recipe, {16: 40})
    recipe["claimed"] = {"decode_tok_s": 120.0}
    write_recipe(repo, recipe)
    code, out = gate(repo, capsys)
    assert code == 0 and "::warning" in out and "ORV521" in out  # a warning: a claim is allowed
    assert found(check(repo)) == [f"ORV521 {rel(recipe)}:{_line(repo, rel(recipe), 'concurrency: 1')}"]
    result = tier(repo, rel(recipe))
    assert result.tier == "T0" and "no run at the headline concurrency 1" in result.reasons[0]
    document = fresh_document(analyse(str(repo)), GitStamp())
    assert not [r for r in document["boards"]["measured"] if r["recipe"] == recipe["id"]]
    (row,) = [r for r in document["boards"]["claimed"] if r["recipe"] == recipe["id"]]
    assert (row["concurrency"], row["claimed_tok_s"], row["tier"]) == (1, 120.0, "T0")
    assert runs[16][0].split(":")[1] not in str(row)
    listed = [p["run_sha"] for g in document["frontiers"] for p in g["points"] + g["apart"]]
    assert runs[16][0].split(":")[1] not in listed and len(listed) == len(set(listed))


def _line(repo: Path, path: str, needle: str) -> int:
    lines = (repo / path).read_text(encoding="utf-8").splitlines()
    return next(i for i, text in enumerate(lines, 1) if needle in text)


# --------------------------------------------------------------------------- claims from one run


def _reproduced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ttft_off: float, primary_off: float = 0.0
) -> tuple[Path, dict[str, Any], str, str, int, str]:
    """lab-a's signed primary run (the claim its figures, `primary_off` away) and lab-b's signed, independent
    vLLM reproduction whose mean TTFT is exactly `ttft_off` from the claim's primary. The primary is on main
    and the reproduction the pull request, or, when the primary is off its claim, both in the pull request
    (a finding already on main is not the pull request's)."""
    repo = registry_repo(tmp_path)
    git(repo, "checkout", "-q", "main")
    keys = {who: keygen(tmp_path, who) for who in ("lab-a", "lab-b")}
    register(repo, *keys.items())
    commit_all(repo, "two registered measurers")
    recipe = inference_recipe("glm-bf16-c1-reproduced", prefill=None, quant="bf16")
    samples_a, span_a = requests(40, 1, seed=1)
    claim = figures(samples_a)
    recipe["claimed"] = {k: round(v * (1 + primary_off), 2) for k, v in claim.items()}
    primary = run_at(repo, recipe, samples_a, span_a, 1, measured_by="lab-a", measured_at="2026-10-18T10:00:00Z")
    sign(repo, primary, keys["lab-a"])
    recipe["runs"] = [primary]
    write_recipe(repo, recipe)
    if not primary_off:
        commit_all(repo, "a recipe and its primary run")
    git(repo, "checkout", "-q", "-B", "pr")
    samples_b, span_b = requests(40, 1, seed=2, ttft_mean=claim["ttft_ms"] * (1 + ttft_off))
    reproduction = run_at(repo, recipe, samples_b, span_b, 1, measured_by="lab-b", measured_at="2026-10-25T10:00:00Z")
    sign(repo, reproduction, keys["lab-b"])
    recipe["runs"] = [primary, reproduction]
    write_recipe(repo, recipe)
    code, out = gate(repo, capsys)
    assert figures(samples_b)["ttft_ms"] == pytest.approx(claim["ttft_ms"] * (1 + ttft_off), abs=0.01)
    return repo, recipe, primary.split(":")[1], reproduction.split(":")[1], code, out


def test_a_reproduction_3_8_percent_off_the_claim_is_no_error_and_reaches_t3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, recipe, primary, reproduction, code, out = _reproduced(tmp_path, capsys, ttft_off=0.038)
    assert code == 0 and "::error" not in out and "::warning" not in out
    assert found(check(repo)) == []
    result = tier(repo, rel(recipe))
    assert result.tier == "T3", result.reasons
    assert set(result.verified_runs) == {primary, reproduction}
    # the row shows the claim's run, not the newer reproduction 3.8% away: a reproduction never moves a rank
    (row,) = [
        r for r in fresh_document(analyse(str(repo)), GitStamp())["boards"]["measured"] if r["recipe"] == recipe["id"]
    ]
    assert (row["tier"], row["run_sha"], row["ttft_ms"]) == ("T3", primary, recipe["claimed"]["ttft_ms"])


def test_a_reproduction_7_percent_off_is_shown_disagreeing_and_is_not_t3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, recipe, primary, reproduction, code, out = _reproduced(tmp_path, capsys, ttft_off=0.07)
    assert code == 0 and "::error" not in out
    (finding,) = check(repo).result.diagnostics
    assert (finding.code, finding.severity.value) == ("ORV245", "warning")
    assert primary[:12] in finding.message and reproduction[:12] in finding.message and "ttft_ms" in finding.message
    assert "within 5%" in finding.message
    result = tier(repo, rel(recipe))
    assert result.tier == "T2" and result.verified_runs == (primary,)
    assert f"reproduction sha256:{reproduction[:12]}… disagrees with the primary run" in result.reasons[0]
    assert "ttft_ms" in result.reasons[0] and "within 5%" in result.reasons[0]


def test_the_primary_run_1_5_percent_off_its_claim_is_still_orv207(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The claim answers to its primary run at 1%, whatever a later run says."""
    repo, recipe, primary, _, code, out = _reproduced(tmp_path, capsys, ttft_off=0.0, primary_off=0.015)
    assert code == 1 and "::error" in out
    errors = [d for d in check(repo).result.diagnostics if d.severity.value == "error"]
    assert {d.code for d in errors} == {"ORV207"}
    assert all(primary[:12] in d.message for d in errors)
    assert tier(repo, rel(recipe)).tier == "T1"
