"""Machine-readable findings: a stable JSON object for scripts and the site."""

from __future__ import annotations

import json

from validator.diagnostics import Result


def render(result: Result) -> str:
    document = {
        "summary": {"files": result.files_checked, "errors": result.errors, "warnings": result.warnings},
        "findings": [d.to_dict() for d in result.diagnostics],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
