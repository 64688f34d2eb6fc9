"""`orv check --profile`'s table: where one check's time went, per pipeline stage and per check, as text for stderr."""

from __future__ import annotations

from validator.checks.collect import Timings


def render(timings: Timings, total: float) -> str:
    """Seconds and share of `total` (the whole command) per stage, in the order they ran (a stage
    named "a > b" is inside stage "a"), then per check (code, module.function), slowest first."""
    lines = [f"orv check --profile: {total:.3f} s in all, counted in one process (no loader pool)", "stages:"]
    lines += [_row(name, seconds, total) for name, seconds in timings.stages.items()]
    lines.append("checks (slowest first; a run-file check's time is inside stage 'load > run-file checks'):")
    ranked = sorted(timings.checks.items(), key=lambda item: (-item[1], item[0]))
    lines += [_row(name, seconds, total) for name, seconds in ranked]  # every check that ran: a profile is asked for
    checks_total = sum(timings.checks.values())
    lines.append(_row("every check together", checks_total, total))
    return "\n".join(lines) + "\n"


def _row(name: str, seconds: float, total: float) -> str:
    share = 100 * seconds / total if total > 0 else 0.0
    return f"  {seconds:9.3f} s {share:5.1f}%  {name}"
