"""Every git call orv makes, one module per concept: the diff, plumbing, partial clones, history, sparse checkouts."""
