"""One scorer per lm-eval task, by task name: adding a task is one module here and its golden case.

A scorer re-scores one document from the model's response and the target, exactly as the task's
pinned lm-eval YAML defines it, and says whether a run's task config is the one it scores.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from validator.quality.scorers import gsm8k


class Scorer(Protocol):
    @property
    def task(self) -> str: ...  # read-only: the scorers are frozen dataclasses

    @property
    def metric(self) -> str: ...

    @property
    def filters(self) -> tuple[str, ...]: ...

    def extract(self, filter_name: str, response: str) -> str: ...

    def value(self, extracted: str, target: str) -> float: ...

    def config_differences(self, config: Mapping[str, Any]) -> list[str]: ...


SCORERS: dict[str, Scorer] = {gsm8k.SCORER.task: gsm8k.SCORER}


def scorer_for(task: str) -> Scorer | None:
    return SCORERS.get(task)
