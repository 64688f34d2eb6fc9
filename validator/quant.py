"""Bits per weight implied by a quantisation name, chosen low so a bandwidth bound built on it is never too tight.

ORV512 divides HBM bandwidth by the bytes of active weights a decode step must read. Fewer bits
per weight means fewer bytes and a higher (more permissive) bound, so wherever a name is vague we
take the *lowest* width it could mean: the check may then miss a borderline claim but never
rejects a possible one. The table (also printed by `orv explain ORV512`):

| in the quant name                                  | bits/weight taken                        |
|----------------------------------------------------|------------------------------------------|
| `<a>-<b>bpw`, `<a>bpw` (exl2/exl3 style: 3-05bpw)  | a.b (the stated average: 3.05)           |
| `<lo>-<hi>bit`, `<n>bit`                           | lo, n                                    |
| `fp32` / `bf16`, `fp16`, `f16`                     | 32 / 16                                  |
| `fp<n>`, `nvfp<n>`, `mxfp<n>` (fp8, nvfp4, mxfp6)  | n (block scales left out)                |
| `int<n>`, `w<n>`, `w<n>a<m>` (int4, w4a16, w8a8)   | n (group scales left out)                |
| `q<n>`, `iq<n>`, `tq<n>` (GGUF q4-k, q8-0, iq2-xxs) | n (super-block scales left out)          |
| `nf4`                                              | 4                                        |
| only `awq`                                         | 3 (AWQ's lowest published width)         |
| only `gptq` / `autoround`, `auto-round`            | 2 (the lowest width these tools emit)    |
| only `exl2` / `exl3`                               | 2 / 1 (the formats' lowest averages)     |
| nothing recognised (`official`, `exlr8-k2-k3-k4`)  | unknown: the bound is not checked        |

A name that mentions several widths (`exl3-2-9bpw-routed-experts-fp8-core-hybrid`,
`w4a16-fp8-kv`) gets the smallest, since some weights may be stored at it; a width that really
describes the KV cache or activations only makes the bound looser, never wrong. Widths of
activations (`a16` in `w4a16`) are ignored: decode reads weights.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

_BPW = re.compile(r"(?:^|[-_.])(\d+)(?:[-_.](\d+))?bpw(?=$|[-_.])")
_BIT = re.compile(r"(?:^|[-_.])(\d+)(?:-\d+)?bits?(?=$|[-_.])")
_TOKEN_WIDTHS: tuple[tuple[re.Pattern[str], int | None], ...] = (
    (re.compile(r"fp32|f32"), 32),
    (re.compile(r"bf16|fp16|f16"), 16),
    (re.compile(r"(?:nv|mx)?fp(\d+)"), None),
    (re.compile(r"int(\d+)"), None),
    (re.compile(r"w(\d+)(?:a\d+)?"), None),
    (re.compile(r"(?:i|p?t)?q(\d+)"), None),
    (re.compile(r"nf4"), 4),
)
_FORMAT_FLOORS = {"awq": 3.0, "gptq": 2.0, "autoround": 2.0, "exl2": 2.0, "exl3": 1.0}


@dataclass(frozen=True)
class QuantBits:
    bits: float  # bits per weight, the lowest the name allows
    basis: str  # which part of the name gave it, for messages

    @property
    def bytes_per_weight(self) -> float:
        return self.bits / 8.0


def bits_per_weight(quant: str) -> Optional[QuantBits]:
    """The lowest bits/weight the quant name can mean, or None when nothing in it is recognised."""
    name = quant.lower()
    widths: list[tuple[float, str]] = []
    for m in _BPW.finditer(name):
        value = float(f"{m.group(1)}.{m.group(2)}") if m.group(2) else float(m.group(1))
        widths.append((value, m.group(0).strip("-_.")))
    for m in _BIT.finditer(name):
        widths.append((float(m.group(1)), m.group(0).strip("-_.")))
    tokens = [t for t in re.split(r"[-_.]", name) if t]
    for token in tokens:
        for pattern, fixed in _TOKEN_WIDTHS:
            m = pattern.fullmatch(token)
            if m:
                widths.append((float(fixed if fixed is not None else int(m.group(1))), token))
                break
    widths = [(bits, basis) for bits, basis in widths if bits > 0]
    if widths:
        bits, basis = min(widths)
        return QuantBits(bits, basis)
    joined = name.replace("-", "").replace("_", "").replace(".", "")
    floors = [(floor, fmt) for fmt, floor in _FORMAT_FLOORS.items() if fmt in tokens or fmt in joined]
    if floors:
        bits, basis = min(floors)
        return QuantBits(bits, basis)
    return None
