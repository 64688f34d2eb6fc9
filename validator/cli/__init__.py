"""The `orv` command line (Click only): app.py declares and dispatches, error_handler.py ends every command."""

from validator.cli.app import cli, main

__all__ = ["cli", "main"]
