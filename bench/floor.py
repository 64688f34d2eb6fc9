"""The floor: only read, hash and parse every registry file with the fastest parsers available.

YAML through libyaml's C loader (PyYAML CSafeLoader), JSON through orjson, SHA-256 via hashlib.
No validation at all: whatever orv does beyond this is the cost of its checks.
"""

from __future__ import annotations

import hashlib
import os
import sys

import orjson
import yaml


def main(root: str) -> int:
    count = 0
    for folder in ("catalog", "recipes", "runs"):
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in names:
                with open(os.path.join(dirpath, name), "rb") as fh:
                    raw = fh.read()
                hashlib.sha256(raw).hexdigest()
                if name.endswith(".json"):
                    orjson.loads(raw)
                else:
                    yaml.load(raw, Loader=yaml.CSafeLoader)  # noqa: S506 - C SafeLoader
                count += 1
    print(count)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
