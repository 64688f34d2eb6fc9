"""The registry as data: where things live, the snapshot model, relation keys, and the writes into it."""
