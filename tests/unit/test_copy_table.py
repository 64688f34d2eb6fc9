"""Issue #51's forgery table, each row a pull request through the gate as action.yml runs it.

main holds lab-a's signed inference run (40 requests of one fixed-length workload, latencies with a
real run's noise) behind a recipe; lab-b offers a forgery of it, signed with lab-b's own registered
key. Each forgery must fail with ORV304 on the file the pull request adds, naming lab-a's run, and
the recipe must not reach T3. Its honest twin — lab-b's own measurement of the same workload —
passes and reaches T3.
"""

from __future__ import annotations

import copy
import json
import math
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.testing.corpus import _merged
from tests.testing.factories import inference_recipe, store_run, write_recipe
from tests.testing.git import commit_all
from tests.testing.quality import pasted_hashes, reworded
from tests.testing.registry import INFERENCE_RECIPE_TEXT, TOOLS
from tests.testing.signing import keygen, register, sign, tier
from tests.unit.test_copies import LMEVAL, QUALITY_RECIPE, _quality_pr, gate, on_main, open_pr
from validator.cli import main
from validator.engine.evaluate import Config, run
from validator.hashing import run_path
from validator.science.throughput import inference_facts

Samples = list[dict[str, Any]]
REQUESTS = 40


def measure(seed: int, count: int = REQUESTS) -> Samples:
    """One honest run: TTFT log-normal (sigma 25%), time per output token +-3% per request, its
    means set to 100 ms and 25 ms (so every run meets the recipe's claims, which ORV207 holds to 1%)."""
    rng = random.Random(seed)
    ttfts = [math.exp(rng.gauss(0.0, 0.25)) for _ in range(count)]
    tpots = [1 + rng.gauss(0.0, 0.03) for _ in range(count)]
    ttft_scale, tpot_scale = 100.0 * count / sum(ttfts), 25.0 * count / sum(tpots)
    return [
        {
            "prompt_tokens": 1000,
            "output_tokens": 101,
            "ttft_ms": t * ttft_scale,
            "e2e_ms": t * ttft_scale + 100 * p * tpot_scale,
        }
        for t, p in zip(ttfts, tpots)
    ]


def recipe_for(rid: str, samples: Samples) -> dict[str, Any]:
    headline = inference_facts(samples, None).headline
    doc = inference_recipe(
        rid, decode=headline["decode_tok_s"], prefill=headline["prefill_tok_s"], ttft=headline["ttft_ms"]
    )
    doc["quant"] = "bf16"  # the model's published precision: T3 then rests on the runs alone
    return doc


def run_doc(recipe: dict[str, Any], samples: Samples, who: str, when: str) -> dict[str, Any]:
    from tests.testing.factories import inference_run

    doc = inference_run(recipe, measured_by=who)
    doc["quant"] = recipe["quant"]
    doc["samples"] = samples
    doc["summary"] = {"decode_tok_s": recipe["claimed"]["decode_tok_s"]}
    doc["measured_at"] = when
    return doc


def _moved(samples: Samples, seed: int, replace: bool) -> Samples:
    rng = random.Random(seed)
    pairs = [(s["ttft_ms"], s["e2e_ms"] - s["ttft_ms"]) for s in samples]
    chosen = [rng.choice(pairs) for _ in pairs] if replace else rng.sample(pairs, len(pairs))
    return [{**s, "ttft_ms": t, "e2e_ms": t + d} for s, (t, d) in zip(samples, chosen)]


def _jitter(samples: Samples, width: float, seed: int, columns: tuple[str, ...] = ("ttft_ms", "e2e_ms")) -> Samples:
    rng = random.Random(seed)
    return [{**s, **{c: s[c] * (1 + rng.uniform(-width, width)) for c in columns}} for s in samples]


def _partial(samples: Samples, seed: int) -> Samples:
    rng = random.Random(seed)
    edited = set(rng.sample(range(len(samples)), 13))
    return [
        {**s, "ttft_ms": s["ttft_ms"] * (1 + rng.choice((-0.02, 0.02)))} if i in edited else s
        for i, s in enumerate(samples)
    ]


def _reordered(samples: Samples, seed: int) -> Samples:
    out = _jitter(samples, 1e-6, seed)
    random.Random(seed).shuffle(out)
    return out


def _dropped(samples: Samples, seed: int) -> Samples:
    """Three requests dropped, 1e-4 jitter: a fixed-length workload's requests then pair only in
    order with gaps (docs/metrics.md says how many drops that survives)."""
    gone = set(random.Random(seed).sample(range(len(samples)), 3))
    return _jitter([s for i, s in enumerate(samples) if i not in gone], 1e-4, seed)


def _neighbour_average(samples: Samples) -> Samples:
    """Each request's TTFT and decode time the mean of its own and the next request's (issue #51's
    review): 4% from the original per request where an honest pair is ~25% apart, the means equal."""
    n = len(samples)
    ttft = [s["ttft_ms"] for s in samples]
    decode = [s["e2e_ms"] - s["ttft_ms"] for s in samples]
    out = []
    for i, s in enumerate(samples):
        t = round((ttft[i] + ttft[(i + 1) % n]) / 2, 3)
        out.append({**s, "ttft_ms": t, "e2e_ms": round(t + (decode[i] + decode[(i + 1) % n]) / 2, 3)})
    return out


def _halves_swapped(samples: Samples) -> Samples:
    """Every TTFT x1.01, every decode time x1.005 and the decode times of the two halves swapped
    (issue #51's review: the sorted TTFTs 1% from the original, an honest pair's ~2%)."""
    half = len(samples) // 2
    decode = [s["e2e_ms"] - s["ttft_ms"] for s in samples]
    decode = decode[half:] + decode[:half]
    return [
        {**s, "ttft_ms": round(s["ttft_ms"] * 1.01, 3), "e2e_ms": round(s["ttft_ms"] * 1.01 + d * 1.005, 3)}
        for s, d in zip(samples, decode)
    ]


def _merged_thinned(samples: Samples, other: Samples, seed: int) -> Samples:
    """The corpus's combination (issue #51): two of lab-a's runs, each jittered 1e-4, interleaved, a third of
    the requests dropped and the rest shuffled. Nothing aligns by key (one token count), a third of the
    original is gone and half of what is left is the other run: its requests keep their (TTFT, e2e) pairs."""
    rng = random.Random(seed)
    merged = _merged(_jitter(samples, 1e-4, seed), _jitter(other, 1e-4, seed + 1))
    gone = set(rng.sample(range(len(merged)), len(merged) // 3))
    kept = [s for i, s in enumerate(merged) if i not in gone]
    rng.shuffle(kept)
    return kept


FORGERIES: dict[str, Callable[[Samples, Samples], Samples]] = {
    "permute": lambda a, _: _moved(a, 1, replace=False),
    "bootstrap": lambda a, _: _moved(a, 2, replace=True),
    "partial edit": lambda a, _: _partial(a, 3),
    "TTFT only": lambda a, _: _jitter(a, 3e-3, 4, ("ttft_ms",)),
    "plain jitter": lambda a, _: _jitter(a, 3e-3, 5),
    "merge": lambda a, b: [s for pair in zip(a, b) for s in pair],
    "fixed-length reorder": lambda a, _: _reordered(a, 6),
    "drop + jitter": lambda a, _: _dropped(a, 7),
    "neighbour average": lambda a, _: _neighbour_average(a),
    "TTFT x1.01, decode halves swapped": lambda a, _: _halves_swapped(a),
    # (seed 11: one of the 11 of 60 such copies the rules missed before matched_jointly; all 60 now, below)
    "jitter + drop + reorder + merge": lambda a, b: _merged_thinned(a, b, 11),
}


def _pr(
    tmp_path: Path, forge: Callable[[Samples, Samples], Samples] | None, new_recipe: bool = False
) -> tuple[Path, str, str, str]:
    """(repo, the recipe the offered run backs, lab-a's run path, the offered run's path)."""
    repo = on_main(tmp_path)
    alice, bob = keygen(tmp_path, "lab-a"), keygen(tmp_path, "lab-b")
    register(repo, ("lab-a", alice), ("lab-b", bob))
    first, other = measure(1), measure(2)
    recipe = recipe_for("reproduced", first)
    a1 = store_run(repo, run_doc(recipe, first, "lab-a", "2026-10-18T10:00:00Z"))
    recipe["runs"] = [a1]
    rel = write_recipe(repo, recipe)
    sign(repo, a1, alice)
    # lab-a's second signed run, of another recipe of the same workload
    sibling = recipe_for("sibling", other)
    sibling["serving"]["concurrency"] = 2
    a2 = store_run(repo, run_doc(sibling, other, "lab-a", "2026-10-18T12:00:00Z"))
    sibling["runs"] = [a2]
    write_recipe(repo, sibling)
    sign(repo, a2, alice)
    open_pr(repo)
    offered = forge(first, other) if forge is not None else measure(3)
    if new_recipe:  # a copy backing a recipe of its own
        target = recipe_for("newcomer", offered)
        target["serving"]["concurrency"] = 4
        b = store_run(repo, run_doc(target, offered, "lab-b", "2026-10-19T11:00:00Z"))
        target["runs"] = [b]
        rel = write_recipe(repo, target)
    else:
        b = store_run(repo, run_doc(recipe, offered, "lab-b", "2026-10-19T11:00:00Z"))
        recipe["runs"] = [a1, b]
        write_recipe(repo, recipe)
    sign(repo, b, bob)
    commit_all(repo, "a reproduction")
    return repo, rel, run_path(a1.split(":")[1]), run_path(b.split(":")[1])


@pytest.mark.git
@pytest.mark.parametrize("forge", FORGERIES.values(), ids=FORGERIES.keys())
def test_each_forgery_of_the_table_fails_the_gate_naming_both_runs(
    forge: Callable[[Samples, Samples], Samples], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, rel, original, added = _pr(tmp_path, forge)
    code, errors, _ = gate(repo, capsys)
    assert code == 1 and ("ORV304", added) in errors, errors
    message = next(d.message for d in run(Config(root=str(repo), skip_boards=True)).diagnostics if d.code == "ORV304")
    assert original in message  # names the run it copies
    assert tier(repo, rel).tier != "T3"


@pytest.mark.git
def test_a_drop_and_jitter_copy_backing_a_new_recipe_fails_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, _, original, added = _pr(tmp_path, FORGERIES["drop + jitter"], new_recipe=True)
    code, errors, _ = gate(repo, capsys)
    assert code == 1 and ("ORV304", added) in errors, errors
    found = [d for d in run(Config(root=str(repo), skip_boards=True)).diagnostics if d.code == "ORV304"]
    assert [d.path for d in found] == [added] and original in found[0].message


@pytest.mark.git
def test_a_merge_of_two_runs_is_reported_once_for_each(tmp_path: Path) -> None:
    # one finding a pair (a finding decided by its pair alone is what lets pull-request mode stop at one hop)
    repo, _, original, added = _pr(tmp_path, FORGERIES["merge"])
    found = [d for d in run(Config(root=str(repo), skip_boards=True)).diagnostics if d.code == "ORV304"]
    assert [d.path for d in found] == [added, added], found
    named = [d.message.split("`")[1] for d in found]
    assert original in named and len(set(named)) == 2 and all(n.startswith("runs/") for n in named), named


def test_pull_request_mode_judges_only_the_pairs_holding_a_changed_run(tmp_path: Path) -> None:
    # three files of one measurement: every pair is a finding; with the change's files named (pairs_with), only
    # the pairs holding one are judged: the pair of two unchanged runs is the same on both sides of a change
    from dataclasses import replace

    from validator.checks.independence import runs_are_separate_measurements
    from validator.engine.evaluate import analyse

    repo = on_main(tmp_path)
    samples = measure(1)
    recipe = recipe_for("one", samples)
    refs = [
        store_run(repo, run_doc(recipe, samples, who, f"2026-10-1{day}T10:00:00Z"))
        for day, who in ((1, "lab-a"), (2, "lab-b"), (3, "lab-c"))
    ]
    recipe["runs"] = refs
    write_recipe(repo, recipe)
    snapshot = analyse(str(repo)).snapshot
    pairs = {(f.path, f.message.split("`")[1]) for f in runs_are_separate_measurements(snapshot)}
    assert len(pairs) == 3, pairs
    changed = run_path(refs[1].split(":")[1])
    focused = {
        (f.path, f.message.split("`")[1])
        for f in runs_are_separate_measurements(replace(snapshot, pairs_with=frozenset({changed})))
    }
    assert focused == {pair for pair in pairs if changed in pair} and len(focused) == 2, focused


@pytest.mark.git
def test_the_honest_twin_passes_and_reaches_t3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, rel, _, _ = _pr(tmp_path, None)
    code, errors, outputs = gate(repo, capsys)
    assert (code, errors, outputs["errors"]) == (0, [], "0")
    assert tier(repo, rel).tier == "T3"


def _prefix_cache_pr(tmp_path: Path, copied: bool) -> tuple[Path, str, str]:
    """(repo, the recipe, the offered run's path): lab-a's run of 16 requests on a quiet machine, four in five of
    them hitting the prefix cache (tests/testing/corpus.py), and lab-b's run of the same requests: its own
    re-run, or lab-a's copied with +-0.1% jitter on every timing."""
    from tests.testing.corpus import Workload, _map
    from tests.testing.corpus import measure as corpus_measure

    workload = Workload("inference", 16, 509, cached=0.8)  # a pair the noise read off the cache refused
    first = corpus_measure(workload, 0)
    offered = _map("inference", first, 1.0, 0.0, 1e-3, 9) if copied else corpus_measure(workload, 1)
    repo = on_main(tmp_path)
    with (repo / "catalog" / "workloads.yaml").open("a") as workloads:  # the corpus's lengths: 100-2,000 / 50-500
        workloads.write(
            "  cached-2000-500:\n    name: Test prefix-cache dataset\n    label: cached\n    kind: inference\n"
            "    dataset: {name: random}\n    input_len: 2000\n    output_len: 500\n    range_ratio: 0.05\n"
            "    ignore_eos: true\n    min_prompts: 8\n"
        )
    alice, bob = keygen(tmp_path, "lab-a"), keygen(tmp_path, "lab-b")
    register(repo, ("lab-a", alice), ("lab-b", bob))
    recipe = recipe_for("cached", first)
    recipe["workload"] = "cached-2000-500"
    a = store_run(repo, run_doc(recipe, first, "lab-a", "2026-10-18T10:00:00Z"))
    recipe["runs"] = [a]
    write_recipe(repo, recipe)
    sign(repo, a, alice)
    open_pr(repo)
    doc = run_doc(recipe, offered, "lab-b", "2026-10-19T11:00:00Z")
    doc["summary"] = {"decode_tok_s": inference_facts(offered, None).headline["decode_tok_s"]}  # its own (ORV208)
    b = store_run(repo, doc)
    recipe["runs"] = [a, b]
    rel = write_recipe(repo, recipe)
    sign(repo, b, bob)
    commit_all(repo, "a reproduction")
    return repo, rel, run_path(b.split(":")[1])


@pytest.mark.git
@pytest.mark.parametrize("copied", [False, True], ids=["honest re-run", "copy with 0.1% jitter"])
def test_a_quiet_rerun_on_a_dataset_that_mostly_hits_the_prefix_cache_reaches_t3_and_its_copy_does_not(
    copied: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 51's honest row through the gate: 16 requests, 80% of them cached, so 2 uncached, too few to read
    a noise from; the run's TTFT then counts as at most twice its decode's noise (independence.QUIET_RATIO), and
    lab-b's own re-run reaches T3 (it was ORV304: its noise read off the cache). Forgery twin: lab-a's run
    copied with +-0.1% jitter on every timing fails with ORV304 on the file the pull request adds."""
    repo, rel, added = _prefix_cache_pr(tmp_path, copied)
    code, errors, outputs = gate(repo, capsys)
    if copied:
        assert code == 1 and ("ORV304", added) in errors, errors
        assert tier(repo, rel).tier != "T3"
    else:
        assert (code, errors, outputs["errors"]) == (0, [], "0")
        assert tier(repo, rel).tier == "T3"


def test_every_row_is_a_copy_below_the_honest_floor_and_the_twin_is_not() -> None:
    """The same rows on the fingerprints alone (fast): each forgery is one measurement with lab-a's run."""
    from validator.science.independence import buckets, same_measurement, sample_fingerprint

    first, other = measure(1), measure(2)
    original = sample_fingerprint("inference", first)
    for name, forge in FORGERIES.items():
        fake = sample_fingerprint("inference", forge(copy.deepcopy(first), other))
        assert set(buckets(original)) & set(buckets(fake)), name
        assert same_measurement(original, fake), name
    twin = sample_fingerprint("inference", measure(3))
    assert same_measurement(original, twin) is None


def test_every_merge_thinned_and_reordered_is_one_measurement_with_either_run() -> None:
    """The combination row with 60 seeds (which third is dropped, how the rest is shuffled): every one is a
    copy of lab-a's first run and of its second (49 of 60 before the fastest requests were matched in every
    timing at once), and lab-b's honest runs are neither."""
    from validator.science.independence import same_measurement, sample_fingerprint

    first, other = measure(1), measure(2)
    originals = [sample_fingerprint("inference", run) for run in (first, other)]
    for seed in range(60):
        fake = sample_fingerprint("inference", _merged_thinned(first, other, seed))
        assert all(same_measurement(original, fake) for original in originals), seed
    for seed in range(3, 13):
        twin = sample_fingerprint("inference", measure(seed))
        assert not any(same_measurement(original, twin) for original in originals), seed


# --------------------------------------------------------------------------- quality runs (ORV239, status)


def _lines(folder: Path) -> tuple[Path, list[dict[str, Any]]]:
    path = next(folder.glob("samples_*.jsonl"))
    return path, [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_lines(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def _trailing_spaces(source: Path, dest: Path, documents: int = 5) -> Path:
    """lm-eval output copied with a trailing space on the responses of `documents` documents (on every
    filter's line of each, as lm-eval logs one response per document)."""
    shutil.copytree(source, dest)
    path, lines = _lines(dest)
    for line in lines:
        if line["doc_id"] < documents:
            line["resps"] = [[line["resps"][0][0] + " "]]
    _write_lines(path, lines)
    return dest


@pytest.mark.git
def test_a_reference_copy_with_trailing_spaces_fails_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue #51: 5 of 200 responses with a trailing space read 97.5% identical, under the 98% rule;
    compared as the scorer reads them (whitespace normalised) they are the reference's, all 200."""
    folder = _trailing_spaces(LMEVAL / "reference", tmp_path / "spaced")
    repo, added, reference = _quality_pr(tmp_path, capsys, folder)
    code, errors, _ = gate(repo, capsys)
    assert code == 1 and ("ORV239", added) in errors, errors
    message = next(d.message for d in run(Config(root=str(repo), skip_boards=True)).diagnostics if d.code == "ORV239")
    assert reference in message and "200 of 200" in message
    assert tier(repo, QUALITY_RECIPE).quality.status != "verified"


@pytest.mark.git
def test_its_honest_twin_with_a_few_real_edits_in_its_own_words_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    own = reworded(LMEVAL / "q995", tmp_path / "own")
    repo, _, _ = _quality_pr(tmp_path, capsys, _trailing_spaces(own, tmp_path / "own-spaced"))
    code, errors, _ = gate(repo, capsys)
    assert [c for c, _ in errors if c == "ORV239"] == []
    assert tier(repo, QUALITY_RECIPE).quality.status == "verified"


def _orv(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """`orv ARGS` that must succeed; the digest it printed."""
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out.strip().split(":", 1)[1]


INT4_RECIPE = QUALITY_RECIPE.replace("fp8", "int4")


def _two_quants_pr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], offered: Callable[[Path], Path]
) -> tuple[Path, str, str]:
    """main holds the bf16 reference and an int4 recipe whose quality run (its own words) lab-a signed;
    the pull request adds the fp8 recipe with two signed performance runs (lab-a's vLLM run, lab-b's
    SGLang run of the same server: T3 but for quality) and offers `offered(int4's lm-eval output)` as
    its quality run, signed by lab-b. (repo, the offered run's path, the int4 run's path)"""
    repo = on_main(tmp_path)
    alice, bob = keygen(tmp_path, "lab-a"), keygen(tmp_path, "lab-b")
    register(repo, ("lab-a", alice), ("lab-b", bob))
    root = ["--root", str(repo)]
    reference = [str(LMEVAL / "reference"), "--reference-for", "qwen3.8-27b", "--quant", "bf16"]
    _orv(capsys, "add-run", *root, "--from", "lm-eval", *reference, "--measured-by", "lab-a")
    int4_output = reworded(LMEVAL / "q97", tmp_path / "int4")
    int4 = repo / INT4_RECIPE
    int4.parent.mkdir(parents=True, exist_ok=True)
    int4_text = INFERENCE_RECIPE_TEXT.replace("fp8", "int4")
    int4.write_text(int4_text, encoding="utf-8")
    lab_a, lab_b = (
        ["--measured-by", "lab-a", "--sign-with", str(alice)],
        ["--measured-by", "lab-b", "--sign-with", str(bob)],
    )
    int4_run = _orv(capsys, "add-run", *root, "--from", "lm-eval", str(int4_output), "--recipe", str(int4), *lab_a)
    int4.write_text(int4_text.replace("runs: []", f'runs: ["sha256:{int4_run}"]'), encoding="utf-8")
    open_pr(repo)
    recipe = repo / QUALITY_RECIPE
    recipe.write_text(INFERENCE_RECIPE_TEXT, encoding="utf-8")
    on = ["--recipe", str(recipe)]
    vllm = _orv(capsys, "add-run", *root, "--from", "vllm", str(TOOLS / "vllm" / "serve-detailed.json"), *on, *lab_a)
    sglang = _orv(
        capsys, "add-run", *root, "--from", "sglang", str(TOOLS / "sglang" / "bench_serving.jsonl"), "--record", "2",
        "--tool-version", "0.5.4", *on, *lab_b,
    )  # fmt: skip
    quality = _orv(capsys, "add-run", *root, "--from", "lm-eval", str(offered(int4_output)), *on, *lab_b)
    refs = json.dumps([f"sha256:{d}" for d in (vllm, sglang, quality)])
    recipe.write_text(INFERENCE_RECIPE_TEXT.replace("runs: []", f"runs: {refs}"), encoding="utf-8")
    commit_all(repo, "an fp8 recipe, its runs and its quality run")
    return repo, run_path(quality), run_path(int4_run)


@pytest.mark.git
def test_another_quants_run_copied_with_trailing_spaces_fails_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue #51: the trailing-space trick on the int4 recipe's signed quality run, offered (signed by
    lab-b) as the fp8 recipe's: ORV239 on the offered run naming the int4 run, quality not verified, no T3."""
    repo, added, int4 = _two_quants_pr(tmp_path, capsys, lambda out: _trailing_spaces(out, tmp_path / "copied"))
    code, errors, _ = gate(repo, capsys)
    assert code == 1 and ("ORV239", added) in errors, errors
    assert all(path != int4 for _, path in errors)
    found = [d for d in run(Config(root=str(repo), skip_boards=True)).diagnostics if d.code == "ORV239"]
    assert [d.path for d in found] == [added] and int4 in found[0].message
    result = tier(repo, QUALITY_RECIPE)
    assert result.quality.status != "verified" and result.tier != "T3", result


@pytest.mark.git
def test_its_honest_twin_an_fp8_run_of_its_own_reaches_t3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same pull request with the fp8 configuration's own lm-eval run (its own words, its own
    mistakes; trailing spaces too): no finding, quality verified, T3."""
    own = reworded(LMEVAL / "q995", tmp_path / "own")
    repo, _, _ = _two_quants_pr(tmp_path, capsys, lambda _: _trailing_spaces(own, tmp_path / "own-spaced"))
    code, errors, outputs = gate(repo, capsys)
    assert (code, errors, outputs["errors"]) == (0, [], "0")
    result = tier(repo, QUALITY_RECIPE)
    assert result.quality.status == "verified" and result.tier == "T3", result


def test_another_quants_run_copied_with_trailing_spaces_repeats_it() -> None:
    """The same rows on the quality facts alone (fast): normalised, the copy's responses are int4's."""
    from validator.quality import lmeval
    from validator.quality import status as quality_status
    from validator.quality.verify import check as verify_check

    def facts(folder: Path) -> Any:
        doc = lmeval.to_document(
            lmeval.read_output(str(folder)), {"model": "qwen3.8-27b", "quant": "int4", "measured_by": "lab-a"}
        )
        return verify_check(doc)[1].tasks["gsm8k"]

    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        int4 = reworded(LMEVAL / "q97", Path(scratch) / "int4")
        copied = _trailing_spaces(int4, Path(scratch) / "copied")
        own = reworded(LMEVAL / "q995", Path(scratch) / "own")
        assert quality_status.repeats(facts(copied), facts(int4))
        assert not quality_status.repeats(facts(own), facts(int4))


BY_LAB_B = (INFERENCE_RECIPE_TEXT, "--measured-by", "lab-b")


@pytest.mark.git
def test_a_three_shot_run_with_the_references_hashes_pasted_in_fails_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hashes say the reference's 5-shot prompts, the run says `n_shot: 3`: ORV246 on the offered run
    naming the reference, and the status says why the scores do not compare."""
    folder = pasted_hashes(reworded(LMEVAL / "fewshot3", tmp_path / "three"), LMEVAL / "reference")
    repo, added, reference = _quality_pr(tmp_path, capsys, folder, *BY_LAB_B, signed=True)
    code, errors, _ = gate(repo, capsys)
    assert code == 1 and ("ORV246", added) in errors, errors
    assert all(path != reference for _, path in errors)
    found = [d for d in run(Config(root=str(repo), skip_boards=True)).diagnostics if d.code == "ORV246"]
    assert [d.path for d in found] == [added] and reference in found[0].message
    assert "n_shot 3" in found[0].message and "n_shot 5" in found[0].message
    quality = tier(repo, QUALITY_RECIPE).quality
    assert quality.status != "verified" and "few-shot count (3)" in quality.why, quality
    assert "ORV246" in quality.why


@pytest.mark.git
def test_its_honest_twin_a_genuine_three_shot_run_passes_the_gate_and_says_why_it_does_not_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real 3-shot run states n_shot: 3 with its own prompt hashes: no finding, and `partial` (its
    scores do not compare with the 5-shot reference's), never a copy."""
    genuine = reworded(LMEVAL / "fewshot3", tmp_path / "three")
    repo, _, _ = _quality_pr(tmp_path, capsys, genuine, *BY_LAB_B, signed=True)
    code, errors, outputs = gate(repo, capsys)
    assert (code, errors, outputs["errors"]) == (0, [], "0")
    quality = tier(repo, QUALITY_RECIPE).quality
    assert quality.status == "partial" and "few-shot count (3)" in quality.why and "ORV246" not in quality.why


# --------------------------------------------------------------------------- honest rows and llama-bench


def _stable_cluster_run(recipe: dict[str, Any], who: str, when: str, seed: int) -> dict[str, Any]:
    """A training run on a stable cluster: step time = base x a data-dependent part both runs share
    (sigma 1%, the same seed) x per-step noise of its own (sigma 0.05%), printed at Megatron's 0.1 ms."""
    from tests.testing.factories import training_run

    doc = training_run(recipe, 1480.4, measured_by=who, steps=200)
    data, noise = random.Random(42), random.Random(seed)
    shape = [1 + data.gauss(0.0, 0.01) for _ in doc["samples"]]
    raw = [s["time_s"] * d * (1 + noise.gauss(0.0, 0.0005)) for s, d in zip(doc["samples"], shape)]
    mean = sum(raw[2:]) / len(raw[2:])
    target = doc["samples"][5]["time_s"]  # the steady step time the claim implies
    for sample, seconds in zip(doc["samples"], raw):
        sample["time_s"] = round(seconds * target / mean, 4)
    doc["measured_at"] = when
    return doc


def _smoothed(doc: dict[str, Any]) -> dict[str, Any]:
    """A training run's step times each the mean of its own and the next step's (issue #51's review:
    ~0.8% per step from the original where an honest pair is ~1.4% apart), at Megatron's 0.1 ms."""
    out = copy.deepcopy(doc)
    times = [s["time_s"] for s in doc["samples"]]
    for i, sample in enumerate(out["samples"]):
        sample["time_s"] = round((times[i] + times[(i + 1) % len(times)]) / 2, 4)
    return out


@pytest.mark.git
@pytest.mark.parametrize("smoothed", [False, True], ids=["honest twin", "neighbour average"])
def test_a_stable_cluster_re_measurement_reaches_t3_and_its_smoothed_copy_does_not(
    smoothed: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue #51's honest training row: per-step noise 0.05%, a data-dependent part both runs share;
    lab-b's neighbour average of lab-a's run instead is ORV304 naming both runs."""
    from tests.testing.factories import training_recipe

    repo = on_main(tmp_path)
    alice, bob = keygen(tmp_path, "lab-a"), keygen(tmp_path, "lab-b")
    register(repo, ("lab-a", alice), ("lab-b", bob))
    recipe = training_recipe("stable", 1480.4)
    first = store_run(repo, _stable_cluster_run(recipe, "lab-a", "2026-10-18T10:00:00Z", 1))
    recipe["runs"] = [first]
    rel = write_recipe(repo, recipe)
    sign(repo, first, alice)
    open_pr(repo)
    offered = _stable_cluster_run(recipe, "lab-b", "2026-10-19T11:00:00Z", 2)
    if smoothed:
        offered = _smoothed(_stable_cluster_run(recipe, "lab-b", "2026-10-19T11:00:00Z", 1))
    second = store_run(repo, offered)
    recipe["runs"] = [first, second]
    write_recipe(repo, recipe)
    sign(repo, second, bob)
    commit_all(repo, "a re-measurement on a stable cluster")
    code, errors, outputs = gate(repo, capsys)
    if not smoothed:
        assert (code, errors, outputs["errors"]) == (0, [], "0")
        assert tier(repo, rel).tier == "T3"
        return
    added = run_path(second.split(":")[1])
    assert code == 1 and ("ORV304", added) in errors, errors
    message = next(d.message for d in run(Config(root=str(repo), skip_boards=True)).diagnostics if d.code == "ORV304")
    assert run_path(first.split(":")[1]) in message
    assert tier(repo, rel).tier != "T3"


@pytest.mark.parametrize("repetitions", [10, 8])
def test_llama_bench_tg128_copies_with_1e5_jitter_are_one_measurement(repetitions: int) -> None:
    """Issue #51: `-r 10` and `-r 8` runs store ttft_ms = 0.0; the copy test skips that constant column
    rather than give up, and the repetitions' own spread sets "too close". The honest twin (another
    run, its own 0.3% repetition noise) is not a copy."""
    from validator.science.independence import buckets, same_measurement, sample_fingerprint

    def run_of(seed: int) -> Samples:
        rng = random.Random(seed)
        return [
            {
                "prompt_tokens": 0,
                "output_tokens": 128,
                "ttft_ms": 0.0,
                "e2e_ms": round(3200 * (1 + rng.gauss(0, 0.003)), 6),
            }
            for _ in range(repetitions)
        ]

    original = run_of(1)
    forged = [
        {**s, "e2e_ms": s["e2e_ms"] * (1 + random.Random(i).uniform(-1e-5, 1e-5))} for i, s in enumerate(original)
    ]
    a, b = sample_fingerprint("inference", original), sample_fingerprint("inference", forged)
    assert set(buckets(a)) & set(buckets(b)) and same_measurement(a, b)
    twin = sample_fingerprint("inference", run_of(2))
    assert same_measurement(a, twin) is None


def _llama_bench_output(samples_ns: list[int], when: str) -> list[dict[str, Any]]:
    """llama-bench's tg128 test object (the fixture's, b11312 on the tiny GGUF) for these repetitions,
    every derived figure recomputed with llama-bench's own formulas, as a forger's copy would be."""
    from tests.testing.llamabench import BOTH_JSON, bench_tests
    from validator.science import llamabench as science

    test = dict(bench_tests(BOTH_JSON)[1])
    rates = science.rates(samples_ns, test["n_prompt"] + test["n_gen"])
    test.update(
        samples_ns=samples_ns,
        samples_ts=[float(f"{r:.6g}") for r in rates],
        avg_ns=science.avg_ns(samples_ns),
        avg_ts=round(science.avg(rates), 6),
        stddev_ts=round(science.stdev(rates), 6),
        test_time=when,
    )
    return [test]


def _repetitions(seed: int, count: int) -> list[int]:
    """One honest tg128 run in nanoseconds, by docs/metrics.md's llama-bench noise model: a per-run
    level (sigma 1%) and per-repetition noise (sigma 0.3%) around 100 ms."""
    rng = random.Random(seed)
    level = 1 + rng.gauss(0.0, 0.01)
    return [round(100_000_000 * level * (1 + rng.gauss(0.0, 0.003))) for _ in range(count)]


def _llama_bench_pr(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    repetitions: int,
    copied: bool,
    seeds: tuple[int, int] = (1, 2),
    reordered: bool = False,
) -> tuple[Path, str, str, str]:
    """main holds a tg128 recipe (the tiny GGUF at f32 on a CPU host) and lab-a's signed `-r N` run,
    stored by add-run; the pull request adds lab-b's signed run: its own measurement (by add-run), or
    (`copied`) lab-a's repetitions with +-1e-5 jitter (`reordered` too), recomputed and stored by hand,
    since add-run refuses it. (repo, recipe, lab-a's run path, lab-b's run path)"""
    from tests.testing.llamabench import BUILD, CPU_HOST, add_llama_catalog
    from validator.adapters import Source, convert, metadata, recomputed
    from validator.registry.recipe_edits import record_run_in_recipe
    from validator.registry.store import store_run_document

    repo = add_llama_catalog(on_main(tmp_path))
    alice, bob = keygen(tmp_path, "lab-a"), keygen(tmp_path, "lab-b")
    register(repo, ("lab-a", alice), ("lab-b", bob))
    capsys.readouterr()
    new = ["new", "inference", "--root", str(repo), "--model", "tinyllama-test", "--gpu", CPU_HOST, "--engine",
           f"llama.cpp@{BUILD}", "--quant", "f32", "--workload", "llama-bench-tg128", "--author", "lab-a",
           "--measured", "2026-12-05", "--no-interactive"]  # fmt: skip
    assert main(new) == 0
    rel = capsys.readouterr().out.strip()
    recipe = str(repo / rel)
    first_ns = _repetitions(seeds[0], repetitions)
    first_out = tmp_path / "lab-a.json"
    first_out.write_text(json.dumps(_llama_bench_output(first_ns, "2026-12-05T07:00:00Z")), encoding="utf-8")
    add = ["add-run", "--root", str(repo), "--recipe", recipe, "--write-recipe"]
    first = _orv(capsys, *add, str(first_out), "--measured-by", "lab-a", "--sign-with", str(alice))
    open_pr(repo)
    if copied:
        rng = random.Random(9)
        second_ns = [round(t * (1 + rng.uniform(-1e-5, 1e-5))) for t in first_ns]
        if reordered:
            rng.shuffle(second_ns)
    else:
        second_ns = _repetitions(seeds[1], repetitions)
    second_out = tmp_path / "lab-b.json"
    second_out.write_text(json.dumps(_llama_bench_output(second_ns, "2026-12-06T09:00:00Z")), encoding="utf-8")
    by_lab_b = ["--measured-by", "lab-b", "--sign-with", str(bob)]
    if copied:
        capsys.readouterr()
        assert main([*add, str(second_out), *by_lab_b]) == 1  # add-run judges the copy before storing it
        assert "ORV304" in capsys.readouterr().err
        meta = metadata("llama-bench", str(repo), recipe, {"measured_by": "lab-b"})
        doc = convert("llama-bench", Source(second_out.name, second_out.read_bytes()), meta).document
        second = store_run_document(str(repo), doc).digest
        record_run_in_recipe(recipe, f"sha256:{second}", recomputed(doc, meta).claim())
        sign(repo, second, bob)
    else:
        second = _orv(capsys, *add, str(second_out), *by_lab_b)
    commit_all(repo, "a reproduction")
    return repo, rel, run_path(first), run_path(second)


@pytest.mark.git
@pytest.mark.parametrize("reordered", [False, True], ids=["in order", "reordered"])
@pytest.mark.parametrize("repetitions", [10, 8])
def test_a_llama_bench_copy_with_1e5_jitter_fails_the_gate(
    repetitions: int, reordered: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue #51's llama-bench row through the gate: lab-a's tg128 `-r 10` / `-r 8` run (ttft_ms = 0.0 on
    every repetition), copied by lab-b with +-1e-5 jitter (and its repetitions reordered) and every
    figure recomputed: ORV304 on the copy naming lab-a's run, and no T3."""
    repo, rel, original, added = _llama_bench_pr(tmp_path, capsys, repetitions, copied=True, reordered=reordered)
    stored = json.loads((repo / added).read_text(encoding="utf-8"))
    assert len(stored["samples"]) == repetitions and {s["ttft_ms"] for s in stored["samples"]} == {0.0}
    code, errors, _ = gate(repo, capsys)
    assert code == 1 and ("ORV304", added) in errors, errors
    assert all(path != original for _, path in errors)
    found = [d for d in run(Config(root=str(repo), skip_boards=True)).diagnostics if d.code == "ORV304"]
    assert [d.path for d in found] == [added] and original in found[0].message
    assert tier(repo, rel).tier != "T3"


@pytest.mark.git
@pytest.mark.parametrize("repetitions", [10, 8])
def test_its_honest_twin_an_independent_llama_bench_run_reaches_t3(
    repetitions: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """lab-b's own tg128 run of the same recipe (its own level and repetition noise, llama-bench's
    documented spread), stored by add-run: the gate passes and the recipe reaches T3."""
    repo, rel, _, _ = _llama_bench_pr(tmp_path, capsys, repetitions, copied=False)
    code, errors, outputs = gate(repo, capsys)
    assert (code, errors, outputs["errors"]) == (0, [], "0")
    result = tier(repo, rel)
    assert result.tier == "T3", result.reasons


@pytest.mark.git
@pytest.mark.parametrize("pasted_first", [False, True], ids=["pasted run added later", "pasted run on main"])
def test_without_a_reference_the_later_of_two_runs_sharing_prompts_at_two_counts_is_blamed(
    pasted_first: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The model names no quality reference: two recipes' quality runs with one set of prompt hashes
    (one 5-shot, one stating 3-shot) cannot both be what they say; the gate blames the run the pull
    request adds, whichever it is, naming the other."""
    repo = on_main(tmp_path)
    models = repo / "catalog" / "models.yaml"
    assert "quality_reference" not in models.read_text(encoding="utf-8")
    five = reworded(LMEVAL / "q97", tmp_path / "five")
    three = pasted_hashes(reworded(LMEVAL / "fewshot3", tmp_path / "three"), LMEVAL / "q97")
    first, second = (three, five) if pasted_first else (five, three)

    def offer(quant: str, folder: Path) -> str:
        rel = QUALITY_RECIPE.replace("fp8", quant)
        recipe = repo / rel
        recipe.parent.mkdir(parents=True, exist_ok=True)
        text = INFERENCE_RECIPE_TEXT.replace("fp8", quant)
        recipe.write_text(text, encoding="utf-8")
        digest = _orv(capsys, "add-run", "--root", str(repo), "--from", "lm-eval", str(folder), "--recipe", str(recipe))
        recipe.write_text(text.replace("runs: []", f'runs: ["sha256:{digest}"]'), encoding="utf-8")
        return run_path(digest)

    on_base = offer("int4", first)
    open_pr(repo)
    added = offer("int8", second)
    commit_all(repo, "another quant's quality run")
    code, errors, _ = gate(repo, capsys)
    assert code == 1 and [(c, p) for c, p in errors if c == "ORV246"] == [("ORV246", added)], errors
    found = [d for d in run(Config(root=str(repo), skip_boards=True)).diagnostics if d.code == "ORV246"]
    assert [d.path for d in found] == [added] and on_base in found[0].message


def test_few_shot_counts_of_any_stated_form_compare_without_error() -> None:
    """A task config may state num_fewshot as anything (it is the tool's free-form config): the counts
    are compared as JSON, never hashed as they are."""
    from validator.quality.status import describe_shots, few_shot_counts, shots_conflict
    from validator.quality.verify import TaskFacts

    def facts(n_shot: Any, settings: str) -> TaskFacts:
        return TaskFacts("gsm8k", None, "h", 1, 1, True, True, n_shot=n_shot, settings=settings)

    assert few_shot_counts(facts(5, json.dumps({"num_fewshot": 5}))) == (5, 5)
    assert few_shot_counts(facts(3, json.dumps({"num_fewshot": [5, {"x": 1}]}))) == (3, [5, {"x": 1}])
    assert few_shot_counts(facts(3, "not json")) == (3, None)
    assert few_shot_counts(facts(3, "")) == (3, None)
    assert describe_shots((3, [5])) == "n_shot 3 (num_fewshot [5])" and describe_shots((5, 5)) == "n_shot 5"
    # what both state is compared; an older lm-eval's missing `n-shot` contradicts nothing
    assert shots_conflict((3, 3), (5, 5)) and shots_conflict((5, 3), (5, 5)) and shots_conflict((5, [5]), (5, 5))
    assert not shots_conflict((None, 5), (5, 5)) and not shots_conflict((None, None), (3, 3))


@pytest.mark.git
@pytest.mark.parametrize(("repetitions", "seeds"), [(10, (1, 84)), (8, (3, 258))], ids=["-r 10", "-r 8"])
def test_honest_llama_bench_pairs_the_sample_by_sample_rule_takes_for_copies_reach_t3(
    repetitions: int, seeds: tuple[int, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two independent tg128 runs from the same noise model as the honest twin above, found by searching
    seeds for pairs the old rule 6 flagged (24 of 20,000 honest pairs at -r 10, 73 of 20,000 at -r 8: on 8-10
    repetitions an affine fit of two chance-correlated noise vectors got under 0.3 of the column's median
    deviation); each must pass the gate and reach T3 as every honest pair must. Since the residuals must also be
    beyond chance for the runs' own noise and sample count (independence._below_noise), they do."""
    repo, rel, _, _ = _llama_bench_pr(tmp_path, capsys, repetitions, copied=False, seeds=seeds)
    code, errors, outputs = gate(repo, capsys)
    assert (code, errors, outputs["errors"]) == (0, [], "0")
    assert tier(repo, rel).tier == "T3"
