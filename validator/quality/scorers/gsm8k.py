"""gsm8k: the strict-match and flexible-extract filters and exact_match, as lm-eval 0.4.13 defines them.

Source: lm_eval/tasks/gsm8k/gsm8k.yaml (filter_list, metric_list) in lm_eval 0.4.13; the filter
semantics are lm_eval/filters/extraction.py `RegexFilter.apply` (findall, group_select, first
non-empty group of a tuple, strip, fallback "[invalid]") followed by `take_first`, and the metric
is lm_eval/api/metrics.py `exact_match_hf_evaluate` (regexes_to_ignore removed from both sides in
order, then ignore_case lowercases; ignore_punctuation is false for gsm8k).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

FALLBACK = "[invalid]"

# The pinned YAML's definitions, word for word.
FILTERS: dict[str, tuple[str, int]] = {  # name -> (regex_pattern, group_select)
    "strict-match": (r"#### (\-?[0-9\.\,]+)", 0),
    "flexible-extract": (r"(-?[$0-9.,]{2,})|(-?[0-9]+)", -1),
}
REGEXES_TO_IGNORE = (",", "\\$", "(?s).*#### ", "\\.$")
IGNORE_CASE = True
IGNORE_PUNCTUATION = False


@dataclass(frozen=True)
class Gsm8kScorer:
    task: str = "gsm8k"
    metric: str = "exact_match"
    filters: tuple[str, ...] = tuple(FILTERS)
    _compiled: dict[str, re.Pattern[str]] = field(
        default_factory=lambda: {name: re.compile(p) for name, (p, _) in FILTERS.items()}
    )
    _ignore: tuple[re.Pattern[str], ...] = tuple(re.compile(r) for r in REGEXES_TO_IGNORE)

    def extract(self, filter_name: str, response: str) -> str:
        """RegexFilter then take_first, on one response."""
        matches = self._compiled[filter_name].findall(response if isinstance(response, str) else "")
        if not matches:
            return FALLBACK
        match = matches[FILTERS[filter_name][1]]
        if isinstance(match, tuple):
            groups = [m for m in match if m]
            match = groups[0] if groups else FALLBACK
        return match.strip()

    def _normalise(self, text: str) -> str:
        for pattern in self._ignore:
            text = pattern.sub("", text)
        return text.lower() if IGNORE_CASE else text

    def value(self, extracted: str, target: str) -> float:
        return 1.0 if self._normalise(extracted) == self._normalise(target) else 0.0

    def config_differences(self, config: Mapping[str, Any]) -> list[str]:
        """Where a run's task config departs from the definition this scorer implements."""
        out = []
        filters = {
            f["name"]: f.get("filter")
            for f in _list(config.get("filter_list"))
            if isinstance(f, dict) and isinstance(f.get("name"), str)
        }
        for name, (pattern, group) in FILTERS.items():
            steps = filters.get(name)
            if not isinstance(steps, list) or not steps or not isinstance(steps[0], dict):
                out.append(f"filter {name} is missing")
                continue
            regex = steps[0]
            if (
                regex.get("function") != "regex"
                or regex.get("regex_pattern") != pattern
                or regex.get("group_select", 0) != group
                or [s.get("function") if isinstance(s, dict) else s for s in steps[1:]] != ["take_first"]
            ):
                out.append(f"filter {name} differs from gsm8k.yaml's")
        metrics = [m for m in _list(config.get("metric_list")) if isinstance(m, dict)]
        em = next((m for m in metrics if m.get("metric") == "exact_match"), None)
        if em is None:
            out.append("metric exact_match is missing")
        elif (
            _list(em.get("regexes_to_ignore")) != list(REGEXES_TO_IGNORE)
            or bool(em.get("ignore_case")) != IGNORE_CASE
            or bool(em.get("ignore_punctuation")) != IGNORE_PUNCTUATION
            or bool(em.get("ignore_numbers", False))
        ):
            out.append("exact_match normalisation differs from gsm8k.yaml's")
        if config.get("repeats", 1) != 1:
            out.append("repeats is not 1")
        return out


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


SCORER = Gsm8kScorer()
