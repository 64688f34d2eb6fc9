"""Custom Click parameter types: the registry root every command works on."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click


class RegistryRoot(click.Path):
    """--root: an existing folder, given or found."""

    def __init__(self) -> None:
        super().__init__(file_okay=False, exists=True)


def root_option(help: str, start_from: str | None = None, find: bool = True) -> Callable[..., Any]:
    """--root, resolved once for the command: the given folder made absolute, else the registry found from the
    command's `start_from` argument (the first of several) or the current folder. With find=False the value is
    passed on as given (None when not given)."""

    def resolve(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if not find:
            return value
        if value:
            return os.path.abspath(value)
        from validator.registry.layout import find_root  # when a command runs: `orv --help` stays light

        start = ctx.params.get(start_from) if start_from else None  # Click has processed given arguments first
        if isinstance(start, tuple):
            start = start[0] if start else None
        return find_root(start or ".")

    return click.option("--root", type=RegistryRoot(), default=None, callback=resolve, help=help)
