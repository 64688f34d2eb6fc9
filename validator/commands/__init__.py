"""One module per `orv` subcommand's flow: plain functions the CLI and tests call, each returning an Outcome."""
