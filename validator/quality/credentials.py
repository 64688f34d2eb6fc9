"""Credentials lm-eval copies from --model_args: which keys are secret, dropping them, and finding leftovers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

# Key names that carry a secret (api_key, auth_token, hf_token, secret, password, …), any case.
SECRET_KEY = re.compile(
    r"(?i)(api[_-]?key|token|secret|password|passwd|credential|private[_-]?key|"
    r"authorization|bearer|access[_-]?key|session[_-]?key)"
)
# A value that looks like a real secret rather than a placeholder: 12+ characters, no spaces.
_PLACEHOLDERS = {
    "",
    "none",
    "null",
    "dummy",
    "empty",
    "redacted",
    "<redacted>",
    "xxx",
    "changeme",
    "sk-xxx",
    "token",
    "api_key",
    "eval",
    "fake",
    "test",
    "false",
    "true",
}
_KV_STRING = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*=[^,]*(,[A-Za-z_][A-Za-z0-9_.-]*=[^,]*)*$")
# A bare secret anywhere: OpenAI/Anthropic/HF/GitHub/AWS key shapes.
_SECRET_SHAPES = re.compile(
    r"\b(sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{16,}|hf_[A-Za-z0-9]{20,}|"
    r"gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16})\b"
)


def is_secret_key(key: str) -> bool:
    return bool(SECRET_KEY.search(key)) and key.lower() not in (
        "tokenizer",
        "tokenizer_backend",
        "tokenized_requests",
        "max_tokens",
        "max_gen_toks",
        "add_bos_token",
        "custom_prefix_token_id",
    )


def looks_real(value: Any) -> bool:
    """A value worth rotating: a string of 8+ non-space characters that is not a known placeholder."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    return len(text) >= 8 and " " not in text and text.lower() not in _PLACEHOLDERS


def scrub(value: Any) -> Any:
    """A copy with secret keys dropped from mappings and from "k=v,k=v" strings (lm-eval's model_args)."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if not (isinstance(k, str) and is_secret_key(k))}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, str):
        if _KV_STRING.match(value):
            kept = [p for p in value.split(",") if not is_secret_key(p.split("=", 1)[0])]
            value = ",".join(kept)
        return _SECRET_SHAPES.sub("<redacted>", value)
    return value


def find(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    """(JSON path, key) of every secret-looking value left in a document."""
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) and is_secret_key(k) and looks_real(v):
                yield path + (k,), k
            else:
                yield from find(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from find(v, path + (i,))
    elif isinstance(value, str):
        if _KV_STRING.match(value):
            for part in value.split(","):
                key, _, v = part.partition("=")
                if is_secret_key(key) and looks_real(v):
                    yield path, key
                    return
        m = _SECRET_SHAPES.search(value)
        if m:
            yield path, "a key-shaped string"
