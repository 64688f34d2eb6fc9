"""Allow `python -m validator` as a synonym for the `orv` command."""

from validator.cli import main

raise SystemExit(main())
