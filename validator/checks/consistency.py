"""ORV212-ORV216: a run's own fields checked against each other (validator/science/consistency.py).

ORV212-ORV214 read the stored run file, so `orv check` (whole and `--base`) catches a file edited by
hand; `orv add-run` refuses the same run before storing it. ORV215-ORV216 compare fields a tool's
output states more than once and the run file does not keep (totals, per-request redundant fields):
they are refused at `orv add-run`, where the tool's output is read.
"""

from __future__ import annotations

from collections.abc import Iterator

from validator.checks.base import Finding, check, declare
from validator.diagnostics import Severity
from validator.registry.snapshot import Catalog, RunFile
from validator.science.consistency import Inconsistency, inconsistencies

E = Severity.ERROR


def _found(run: RunFile) -> list[Inconsistency]:
    data = run.doc.data
    return inconsistencies(data, run.columns) if isinstance(data, dict) else []


def _findings(run: RunFile, code: str) -> Iterator[Finding]:
    # one pass over the samples' columns the loader decoded, for ORV212, ORV213 and ORV214 together
    for item in run.memo("inconsistencies", lambda: _found(run)):
        if item.code == code:
            yield Finding(run.path, item.message, item.hint, at=item.at)


@check("ORV212", E, "run's duration disagrees with its requests' own times", scope="run-file")
def duration_matches_span(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    An inference run's `duration_s` (every throughput is divided by it) must agree with the span
    its own requests measured, first start to last end (`start_ms` + `e2e_ms`): the tool's clock
    encloses every request it timed, so `duration_s` is never shorter than the span (1 ms allowed
    for rounding), and it encloses little else (start-up, failed requests left out of the
    samples), so it is at most 1.25 × the span + 5 s. Without start times, `duration_s` is at least
    the longest request (ORV511 holds it to Σ e2e ÷ `serving.concurrency`). A shorter `duration` inflates
    every throughput; a far longer one is usually milliseconds given as seconds. Give the tool's
    output unchanged (`orv add-run --from TOOL FILE`).
    """
    yield from _findings(run, "ORV212")


@check("ORV213", E, "run's stated concurrency disagrees with its requests in flight", scope="run-file")
def concurrency_matches_timestamps(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    An inference run's `serving.concurrency` (the tool's `max_concurrency`) must be what its own
    start and end times show: with at least `concurrency` requests, all of it in flight at the
    busiest instant (at an unlimited request rate the tool starts its first `concurrency` requests
    together) and — with at least 2 × `concurrency` requests — at least half of it on average from
    the first request's start to the last's (while requests wait, a freed slot is refilled at once;
    the tail after the last start, one long request, does not count). Requests run one after another are a concurrency-1
    measurement whatever the file says. More requests in flight than stated is ORV243 (the run
    against its recipe's concurrency). Measure with `--max-concurrency N` and an unlimited request
    rate, and state N.
    """
    yield from _findings(run, "ORV213")


@check("ORV214", E, "a request ends before its first token", scope="run-file")
def e2e_covers_ttft(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    Each request's `e2e_ms` (start to last token) must be at least its `ttft_ms` (start to first
    token), and larger when it produced more than one token. A request ending before its first
    token (an `e2e_ms` of 0, say) makes its decode time negative and every mean built on it wrong.
    `orv add-run` refuses such a request from any tool or run document rather than clamping it;
    give the latencies the tool measured, and leave out a request it did not time.
    """
    yield from _findings(run, "ORV214")


declare(
    "ORV215",
    E,
    "a tool's own totals disagree with its per-request arrays",
    """
    A serving benchmark's output states its totals and counts beside its per-request arrays (vLLM
    and SGLang: `completed`, `total_input_tokens`, `total_output_tokens`; AIPerf: `request_count`,
    the `sum` of `input_sequence_length` and `output_sequence_length`; trtllm-bench: its request
    count and token totals). `orv add-run` recomputes each from the arrays (over the completed
    requests, as the tool counts them) and refuses the output when one differs: the arrays were
    edited (a prompt length rewritten) or the file mixes two runs. Give the file the tool wrote.
    """,
    scope="load",
)

declare(
    "ORV216",
    E,
    "a request's fields disagree with each other",
    """
    A tool states some per-request facts twice: vLLM's and SGLang's `latencies` against `ttfts` +
    Σ `itls` (the last token comes after the first token and every gap after it); AIPerf's
    `output_sequence_length` against `output_token_count` and `usage_completion_tokens`, its
    `input_sequence_length` against `usage_prompt_tokens`, and its `inter_token_latency` against
    (`request_latency` − `time_to_first_token`) ÷ (`output_sequence_length` − 1). `orv add-run`
    refuses a request whose fields disagree beyond the tool's own precision: one of them was
    edited (output tokens inflated, warm-up records relabelled). Give the file the tool wrote.
    """,
    scope="load",
)
