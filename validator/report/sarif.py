"""SARIF 2.1.0 for code-scanning upload: one rule per registered check, one result per finding."""

from __future__ import annotations

import json
from urllib.parse import quote

from validator import __version__
from validator.checks import all_checks
from validator.diagnostics import Result, Severity

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTICE: "note"}


def render(result: Result) -> str:
    checks = all_checks()
    used = sorted({d.code for d in result.diagnostics})
    rules = [
        {
            "id": code,
            "name": checks[code].title if code in checks else code,
            "shortDescription": {"text": checks[code].title if code in checks else code},
            "fullDescription": {"text": checks[code].doc if code in checks else ""},
            "defaultConfiguration": {"level": _LEVEL[checks[code].severity] if code in checks else "error"},
        }
        for code in used
    ]
    index = {code: i for i, code in enumerate(used)}
    results = [
        {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": _LEVEL[d.severity],
            "message": {"text": d.message + (f" Hint: {d.hint}" if d.hint else "")},
            "locations": [
                {
                    "physicalLocation": {
                        # a URI reference (RFC 3986), as SARIF 2.1.0 §3.10 asks: spaces, non-ASCII and controls percent-encoded
                        "artifactLocation": {"uri": quote(d.path, safe="/"), "uriBaseId": "%SRCROOT%"},
                        "region": {"startLine": d.line, "startColumn": d.col},
                    }
                }
            ],
        }
        for d in result.diagnostics
    ]
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "orv",
                        "version": __version__,
                        "informationUri": "https://github.com/openrecipes/openrecipes",
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
