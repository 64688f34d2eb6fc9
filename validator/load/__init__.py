"""Bytes on disk -> typed documents and per-file results: parsing, schemas, the loader pool and its cache."""
