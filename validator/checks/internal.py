"""ORV900: a check that crashed — always orv's bug, never the contributor's."""

from validator.checks.base import declare
from validator.diagnostics import Severity

declare("ORV900", Severity.ERROR, "internal error", """
    A check raised an exception instead of reporting a finding, or the schema and the typed models
    disagreed. This is a bug in orv, not in your files; the check fails closed (the run is not
    green) so that nothing unchecked is merged. Please report the message.
    """, scope="load")
