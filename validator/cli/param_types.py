"""Custom Click parameter types: the registry root every command works on."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click


class RegistryRoot(click.Path):
    """--root: an existing folder, given or found."""

    def __init__(self) -> None:
        super().__init__(file_okay=False, exists=True)


@dataclass(frozen=True)
class Root:
    """The registry a command works on: --root as given, else found from `start` when the command asks
    (`path()`), after its options have been checked, so a bad combination of options is said first."""

    given: str | None
    start: str

    def path(self) -> str:
        if self.given:
            return os.path.abspath(self.given)
        from validator.registry.layout import find_root  # when a command runs: `orv --help` stays light

        return find_root(self.start)


def root_option(help: str, start_from: str | None = None) -> Callable[..., Any]:
    """--root as a Root: the given folder, else the registry found from the command's `start_from` argument
    (the first of several) or the current folder."""

    def as_root(ctx: click.Context, param: click.Parameter, value: str | None) -> Root:
        start = ctx.params.get(start_from) if start_from else None  # Click has processed given arguments first
        if isinstance(start, tuple):
            start = start[0] if start else None
        return Root(value, start or ".")

    return click.option("--root", type=RegistryRoot(), default=None, callback=as_root, help=help)
