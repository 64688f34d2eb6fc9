"""llama.cpp's `llama-bench -o json` / `-o jsonl` output -> run file (one test: a pp or a tg test).

Format read from llama.cpp tools/llama-bench/llama-bench.cpp at build b11312, commit 0c1e57098
(0c1e57098bba43ac29e6e3b677cdceebdd22334f, as vendored by llama-cpp-python 0.3.36):
- `test::get_fields()`: every test object has build_commit, build_number, cpu_info, gpu_info, backends,
  model_filename, model_type, model_size, model_n_params, n_batch, n_ubatch, n_threads, …, n_prompt,
  n_gen, n_depth, test_time (RFC 3339, UTC), avg_ns, stddev_ns, avg_ts, stddev_ts; `get_field_type`
  makes the counts JSON integers and avg_ts/stddev_ts numbers printed by std::to_string (six decimals).
- `json_printer`: a JSON array of those objects, each followed by `samples_ns` (each timed repetition's
  wall time, warm-up run excluded) and `samples_ts` (its rate, printed to six significant digits);
  `jsonl_printer`: the same object on one line per test.
- `test::get_ts`/`avg_ts`/`stdev_ts` and the free `avg`/`stdev`: validator/science/llamabench.py.
- `cmd_params_defaults`: `-p 512 -n 128 -d 0 -r 5`, so a bare run writes two tests, pp512 and tg128.
One run file holds one test: the one the recipe's workload names, or `--record K`. The file states
llama.cpp's build (tool version `b<build_number>` plus commit: the engine pin, validator/stacks/llamacpp.py),
the GGUF (checked against the catalog model: validator/evidence/identity.py) and the GPUs it saw (a CPU-only
run backs only a CPU host's recipe, ORV249); the GPU count, quantisation id, author and the served
configuration come from the recipe or flags.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from validator.adapters.common import (
    Converted,
    JsonRecord,
    Problems,
    RunMetadata,
    Source,
    common_fields,
    json_records,
    merge_mapping,
    require,
    stated,
    tool_block,
)
from validator.models import Component
from validator.registry.layout import HARDWARE_PATH
from validator.science import llamabench as science
from validator.stacks.llamacpp import TOOL, build_tag, pin_problem

FORMAT = "llama-bench-json"
COMMAND = "`llama-bench -m MODEL.gguf -o json` (or -o jsonl)"
_UNCHANGED = "give the output llama-bench wrote, unchanged"
_INTEGERS = ("build_number", "n_prompt", "n_gen", "n_depth", "model_n_params", "avg_ns")
_NUMBERS = ("avg_ts", "stddev_ts")
_TEXTS = ("build_commit", "model_filename", "model_type", "gpu_info", "backends", "test_time")
PRINTED_DECIMALS = 6  # std::to_string(double) is "%f"
RELATIVE = 1e-9  # the recomputed figure, printed as llama-bench prints it, against the file's
_TEST_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")  # strftime("%FT%TZ", gmtime(...))


@dataclass(frozen=True)
class Test:
    """One test object of the output and where it is (an array element, or a line)."""

    data: dict[str, Any]
    record: JsonRecord
    prefix: tuple[int, ...]  # (index,) inside a `-o json` array; () on its own line

    def locate(self, *path: str | int) -> tuple[int, int]:
        return self.record.locate(self.prefix + path)

    def key(self) -> tuple[Any, Any, Any]:  # as written: (n_prompt, n_gen, n_depth), not yet checked
        return (self.data.get("n_prompt"), self.data.get("n_gen"), self.data.get("n_depth"))

    def name(self) -> str:
        p, g, d = self.key()
        label = f"pp{p}" if not g else f"tg{g}" if not p else f"pp{p}+tg{g}"
        return label + (f" @ d{d}" if d else "")


def _tests(source: Source, problems: Problems) -> list[Test]:
    tests: list[Test] = []
    for record in json_records(source, problems):
        if isinstance(record.data, list):
            tests += [Test(item, record, (i,)) for i, item in enumerate(record.data) if isinstance(item, dict)]
            if len(tests) != len(record.data):
                problems.add("ORV104", "every element of llama-bench's JSON array is a test object", _UNCHANGED)
        elif isinstance(record.data, dict):
            tests.append(Test(record.data, record, ()))
        else:
            problems.add(
                "ORV104",
                "llama-bench writes test objects (-o jsonl) or an array of them (-o json)",
                _UNCHANGED,
                record.first_line,
            )
    if not tests and not problems.found:
        problems.add("ORV108", "the file holds no llama-bench test", f"give the output of {COMMAND}")
    problems.raise_if_any()
    return tests


def _pick(tests: list[Test], meta: RunMetadata, problems: Problems) -> Test:
    """The test the run records: --record K, else the one the recipe's workload names, else the only one."""
    held = ", ".join(t.name() for t in tests)
    if meta.record is not None:
        if not 1 <= meta.record <= len(tests):
            problems.add(
                "ORV109",
                f"--record {meta.record} asked for, but the file holds {len(tests)} test(s): {held}",
                f"pass --record between 1 and {len(tests)}",
            )
            problems.raise_if_any()
        return tests[meta.record - 1]
    if meta.llama_bench_test is not None:
        matching = [t for t in tests if t.key() == meta.llama_bench_test]
        p, g, d = meta.llama_bench_test
        wanted = f"n_prompt {p}, n_gen {g}, n_depth {d}"
        if not matching:
            problems.add(
                "ORV247",
                f"the recipe's workload is llama-bench's test with {wanted}; the file holds {held}",
                f"run llama-bench with -p {p} -n {g} -d {d}, or attach the output to a recipe whose "
                "workload is the test it ran",
            )
        elif len(matching) > 1:
            problems.add(
                "ORV109",
                f"the file holds {len(matching)} tests with {wanted} (other models or settings)",
                "pass --record K (counting every test in the file from 1) to choose one",
            )
        problems.raise_if_any()
        return matching[0]
    if len(tests) > 1:
        problems.add(
            "ORV109",
            f"the file holds {len(tests)} llama-bench tests ({held})",
            "pass --recipe with a recipe whose workload names one, or --record K (1 to "
            f"{len(tests)}); each test gets its own run file",
        )
        problems.raise_if_any()
    return tests[0]


def _fields(test: Test, problems: Problems) -> dict[str, Any]:
    """The fields the run needs, typed as llama-bench writes them; a finding for each that is not."""
    out: dict[str, Any] = {}
    for key in _INTEGERS + _NUMBERS + _TEXTS + ("samples_ns", "samples_ts"):
        if key not in test.data:
            problems.add("ORV108", f"`{key}` is missing from test {test.name()}", _UNCHANGED, *test.locate())
            continue
        value = test.data[key]
        if key in _INTEGERS:
            ok = (
                isinstance(value, int)
                and not isinstance(value, bool)
                and value >= (1 if key == "model_n_params" else 0)
            )
        elif key in _NUMBERS:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        elif key in _TEXTS:
            ok = isinstance(value, str)
        elif key == "samples_ns":
            ok = (
                isinstance(value, list)
                and bool(value)
                and all(isinstance(v, int) and not isinstance(v, bool) and 0 < v <= 2**53 - 1 for v in value)
            )
        else:
            ok = isinstance(value, list) and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value
            )
        if not ok:
            problems.add(
                "ORV104",
                f"`{key}` of test {test.name()} holds {value!r:.80}, not what llama-bench writes",
                _UNCHANGED,
                *test.locate(key),
            )
            continue
        out[key] = value
    problems.raise_if_any()
    return out


def _printed(value: float) -> float:
    return float(f"{value:.{PRINTED_DECIMALS}f}")


def check_summary(test: Test, f: dict[str, Any], problems: Problems) -> None:
    """llama-bench's own avg_ts, stddev_ts, avg_ns and samples_ts must follow from samples_ns."""
    ns, n_tokens = f["samples_ns"], f["n_prompt"] + f["n_gen"]
    rates = science.rates(ns, n_tokens)
    mean, spread = science.avg(rates), science.stdev(rates)
    altered = "the file was edited, truncated or mixes two runs; " + _UNCHANGED
    for key, figure in (("avg_ts", mean), ("stddev_ts", spread)):
        if not math.isclose(_printed(figure), f[key], rel_tol=RELATIVE, abs_tol=10**-PRINTED_DECIMALS / 2):
            problems.add(
                "ORV109",
                f"test {test.name()}: the file's own `{key}` is {f[key]!r} but its samples_ns "
                f"give {figure:.{PRINTED_DECIMALS}f}",
                altered,
                *test.locate(key),
            )
    if f["avg_ns"] != science.avg_ns(ns):
        problems.add(
            "ORV109",
            f"test {test.name()}: the file's own `avg_ns` is {f['avg_ns']} but its samples_ns "
            f"give {science.avg_ns(ns)}",
            altered,
            *test.locate("avg_ns"),
        )
    printed_ts = f["samples_ts"]
    if len(printed_ts) != len(ns) or any(
        not math.isclose(float(f"{r:.6g}"), p, rel_tol=RELATIVE) for r, p in zip(rates, printed_ts)
    ):
        problems.add(
            "ORV109",
            f"test {test.name()}: `samples_ts` does not follow from `samples_ns` ({n_tokens} tokens per repetition)",
            altered,
            *test.locate("samples_ts"),
        )


def _measured_at(test_time: str) -> str | None:
    """llama-bench's UTC test time as it wrote it; None (the recipe's date stands) for anything else."""
    return test_time if _TEST_TIME.match(test_time) else None


def _engine(meta: RunMetadata) -> Component | None:
    raw = (meta.software or {}).get("engine")
    try:
        return Component.model_validate(raw) if isinstance(raw, dict) else None
    except ValueError:
        return None


def convert(source: Source, meta: RunMetadata) -> Converted:
    problems = Problems(source)
    test = _pick(_tests(source, problems), meta, problems)
    f = _fields(test, problems)
    notes: list[str] = []
    n_prompt, n_gen = f["n_prompt"], f["n_gen"]
    if n_prompt and n_gen:
        problems.add(
            "ORV109",
            f"test {test.name()} is a -pg test (prompt and generation timed together): the "
            "registry records a pp test (prefill) or a tg test (decode), not their mix",
            "run llama-bench with -p N -n 0 for prefill or -p 0 -n N for decode",
            *test.locate("n_gen"),
        )
    elif not (n_prompt or n_gen):
        problems.add("ORV109", f"test {test.name()} times no tokens", _UNCHANGED, *test.locate("n_prompt"))
    if f["build_number"] == 0 or f["build_commit"] in ("", "unknown"):
        problems.add(
            "ORV405",
            f"llama-bench does not know its build (build_number {f['build_number']}, "
            f"build_commit {f['build_commit']!r}): the run pins no llama.cpp",
            "build llama.cpp from a git checkout of a release tag (cmake reads the build number and "
            "commit from git), then measure again",
            *test.locate("build_number"),
        )
    problems.raise_if_any()
    tag, commit = build_tag(f["build_number"]), f["build_commit"]
    if meta.tool_version not in (None, tag) and meta.origin.get("tool_version") == "flag":
        notes.append(f"llama-bench states its build {tag}; --tool-version {meta.tool_version} is ignored")
    meta = meta.with_values(TOOL, tool_version=tag, tool_commit=commit)
    why = pin_problem(_engine(meta), tag, commit) if meta.software else None
    if why:
        problems.add(
            "ORV248",
            why,
            "attach the output to the recipe of the llama.cpp build that ran, or pin the "
            f"recipe's engine to it: `engine: {{name: llama.cpp, version: {tag}, commit: "
            f"{commit}}}`",
            *test.locate("build_number"),
        )
    check_summary(test, f, problems)
    meta = stated(meta, "measured_at", _measured_at(f["test_time"]), TOOL, notes)
    # one sequence at a time: llama-bench's pp and tg tests decode a single stream (the workload fixes it)
    meta = merge_mapping(meta, "serving", {"concurrency": 1}, TOOL, notes)
    require(
        meta,
        ("model", "gpu", "gpus", "software", "quant", "serving", "measured_at", "measured_by"),
        problems,
        "the llama-bench output",
    )
    problems.raise_if_any()
    if not f["gpu_info"].strip():  # ORV249 (add-run's identity gate) refuses it on a GPU's recipe
        notes.append(
            f"llama-bench names no GPU (backends: {f['backends'] or 'none'}): a CPU-only run backs only a "
            f"CPU host's recipe ({HARDWARE_PATH} `device: cpu`); `{meta.gpu}` is taken from the "
            f"{meta.origin.get('gpu', 'metadata')}"
        )
    test_kind = "pp" if n_prompt else "tg"
    doc = common_fields("inference", meta)
    doc.pop("checkpoint", None)  # the GGUF is stated in `synthetic` and checked there (ORV226)
    doc.update(
        {
            "tool": tool_block(TOOL, FORMAT, meta),
            "quant": meta.quant,
            "serving": dict(meta.serving or {}),
            "summary": {science.HEADLINE_OF[test_kind]: f["avg_ts"]},  # llama-bench's own (check_summary agrees)
            "synthetic": {
                "tool": TOOL,
                "test": test_kind,
                "n_prompt": n_prompt,
                "n_gen": n_gen,
                "n_depth": f["n_depth"],
                "model_filename": f["model_filename"],
                "model_type": f["model_type"][:200],
                "model_n_params": f["model_n_params"],
                "gpu_info": f["gpu_info"][:1000],
                "backends": f["backends"][:200],
            },
            "samples": [
                {
                    "prompt_tokens": n_prompt,
                    "output_tokens": n_gen,
                    "ttft_ms": science.ns_to_ms(t) if test_kind == "pp" else 0.0,
                    "e2e_ms": science.ns_to_ms(t),
                }
                for t in f["samples_ns"]
            ],
        }
    )
    notes.append(
        f"llama-bench test {test.name()}, {len(f['samples_ns'])} repetitions, llama.cpp {tag} "
        f"({commit}), model {f['model_type']!r}"
    )
    return Converted(doc, tuple(notes))
