"""The boards: tiers -> the boards document, split into files per model, and how a pull request moves them."""
