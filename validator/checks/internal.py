"""ORV9xx: orv itself — a check that crashed (ORV900), a shard's partial result the merge refuses (ORV901)."""

from validator.checks.base import declare
from validator.diagnostics import Severity

declare(
    "ORV900",
    Severity.ERROR,
    "internal error",
    """
    A check raised an exception instead of reporting a finding, or the schema and the typed models
    disagreed. This is a bug in orv, not in your files; the check fails closed (the run is not
    green) so that nothing unchecked is merged. Please report the message.
    """,
    scope="load",
)

declare(
    "ORV901",
    Severity.ERROR,
    "partial result refused by merge-results",
    """
    `orv merge-results` reads each shard's partial result (`orv check --shard K/N --partial-out
    FILE`) as plain JSON data and refuses one that is not exactly what a shard writes: not JSON, a
    field schema/partial.schema.json does not declare or a value of the wrong type, an entry that
    does not fit the types orv declares for it, or a finding about a file the partial does not hold.
    Nothing in a partial names a type, runs code or carries a count: the merge counts the findings
    itself. The merge stops with exit status 2 and reports nothing else, since a shard's results are
    missing. Run that shard again with the same orv on the same commit; never merge a partial that
    did not come from the same workflow run (docs/scaling.md, "What a partial can still do").

    The same holds for a judged file (`orv merge-results PARTIALS --judge K/N`, read with `--judged`):
    not JSON, or not the shape schema/judged.schema.json declares, it is refused the same way; judge
    that part again from the same workflow run's partials.
    """,
    scope="load",
)
