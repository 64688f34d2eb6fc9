"""`orv wanted`: where a contribution counts, from the registry as it is now (the boards' `wanted` lists)."""

from __future__ import annotations

from validator.commands.outcome import Outcome, ProgressLine
from validator.engine.evaluate import analyse
from validator.git.sparse import WHOLE_CHECKOUT, refuse_sparse
from validator.report import wanted as wanted_lists


def wanted(
    root: str, kind: str | None, fmt: str, progress: ProgressLine, scope: wanted_lists.Scope | None = None
) -> Outcome:
    refuse_sparse(
        root,
        "`orv wanted`",
        "Its lists are also the `wanted` object of main's published boards "
        f"(docs/boards.md); or first: {WHOLE_CHECKOUT}.",
    )
    with progress("orv wanted: loading") as show:
        document = wanted_lists.document_for(analyse(root, progress=show))
    return Outcome(report=wanted_lists.render(document, kind, fmt, scope or wanted_lists.Scope()))
