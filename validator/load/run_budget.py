"""How large a run file of each kind may be (ORV211; docs/limits.md, "Run-file budgets").

Run files are append-only: every clone and every fresh runner carries each one forever, so a run file
holds what recomputation reads and no more, and each kind has a ceiling well above what an honest run
of that kind measures (bench/run_sizes.py makes them through the real adapters):

| kind | measured | budget |
|---|---|---|
| training | 10,000 Megatron-LM iterations: 637,112 bytes (64 a step) | 4 MiB: ~65,000 steps |
| inference | one sweep point of 1,000 requests: 112,750 bytes (113 a request) | 2 MiB: ~18,600 requests |
| quality | gsm8k, 1,319 documents, realistic responses: 1,396,384 bytes (1,059 each) | 8 MiB: ~7,900 documents |

The figure is the size of the canonical bytes (RFC 8785), the bytes whose SHA-256 names the file.
ORV111's 16 MiB is the limit of any file orv reads; these are tighter, per kind.
"""

from __future__ import annotations

MIB = 1024 * 1024
RUN_FILE_BUDGET = {"training": 4 * MIB, "inference": 2 * MIB, "quality": 8 * MIB}

# What to do instead, per kind: a smaller measurement that still backs the claim.
_HINT = {
    "training": (
        "a run file keeps one sample per step: store a window of the run that backs the claim (cut the log "
        "to those iterations before `orv add-run`), or split a long run into several run files"
    ),
    "inference": (
        "store one run file per sweep point (one `vllm bench serve` result each), with the requests that "
        "point needs (docs/protocols.md)"
    ),
    "quality": (
        "store one run file per task: run lm-eval with one task per --output_path, then `orv add-run --from "
        "lm-eval` each folder"
    ),
}


def over_budget(kind: object, size: int) -> tuple[str, str] | None:
    """(message, hint) when a run file of `kind` with `size` canonical bytes is over its kind's budget."""
    known = kind if isinstance(kind, str) and kind in RUN_FILE_BUDGET else None
    # a kind orv does not know (a schema error of its own) gets the smallest budget, never none
    budget = RUN_FILE_BUDGET[known] if known else min(RUN_FILE_BUDGET.values())
    if size <= budget:
        return None
    what = f"{known} run file" if known else "run file of no known kind"
    hint = _HINT[known] if known else "a run file states its kind: training, inference or quality"
    return (
        f"the {what} is {size:,} bytes, over the {budget // MIB} MiB ({budget:,} bytes) budget of a {what}",
        hint + ' (docs/limits.md, "Run-file budgets")',
    )
