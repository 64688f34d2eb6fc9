"""The clone-and-gate tables of docs/benchmarks.md ("What getting the registry costs"), from
bench/clone-results.json and bench/clone-gate-*.json, and a table per bench/shard-<N>k-results.json (the
sharded check, whose figures docs/scaling.md quotes).

    python bench/clone_table.py [--new bench/clone-results-sparse-preview.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def size(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB" if n >= 2**20 else f"{n / 2**10:,.0f} KiB" if n >= 2**10 else f"{n} B"


def gate_cell(row: dict | None) -> str:
    if not row:
        return "—"
    if "refused" in row:
        return f"{size(row['bytes'])}; orv refused: {row['refused'][:80]}"
    return (
        f"{size(row['bytes'])}; {row['checkout_s']:.1f} + {row['orv_s']:.1f} = **{row['total_s']:.1f} s** "
        f"({row['outputs'].get('errors', '?')} errors)"
    )


def clone_table(results: dict, new: dict | None = None) -> str:
    """One row per size; the new workflow's gate from `new` (another results file) when given."""
    lines = [
        "| run files (recipes, commits; packed) | full clone | blobless clone | blobless sparse clone "
        "| gate, old workflow: bytes; checkout + orv = total | gate, new workflow | contributor: sparse clone "
        "+ `orv check --base origin/main` |",
        "|---|---|---|---|---|---|---|",
    ]
    for key in sorted((k for k in results if k.isdigit()), key=int):
        r = results[key]
        t = r["transfer"]
        c = r["contributor"]
        lines.append(
            f"| {r['run_files']:,} ({r['recipes']:,}, {r['commits']:,}; {size(r['pack_bytes'])}) "
            + "".join(f"| {size(t[k]['bytes'])}, {t[k]['s']:.1f} s " for k in ("full", "blobless", "blobless_sparse"))
            + f"| {gate_cell(_old(results, new, key))} "
            + f"| {gate_cell((new or results).get(key, {}).get('gate', {}).get('new'))} "
            + f"| {size(c['bytes'] + c['check_bytes'])}; {c['s']:.1f} + {c['orv_s']:.1f} s |"
        )
    return "\n".join(lines)


def _old(results: dict, new: dict | None, key: str) -> dict | None:
    """The old workflow's gate row: from the run that measured the new one, when it measured both
    (`--workflow both`: side by side), else from the clone results."""
    row = (new or {}).get(key, {}).get("gate", {}).get("old")
    return row or results.get(key, {}).get("gate", {}).get("old")


def gate_parts_table(results: dict, old_results: dict) -> str:
    """The new gate's parts per size (pull request's checkout, base-rules, orv's own fetches), and its
    wall time against the smallest registry's, from the same run; the old gate's from `old_results`."""
    keys = sorted((k for k in results if k.isdigit() and results[k].get("gate", {}).get("new")), key=int)
    if not keys:
        return ""
    first = results[keys[0]]["gate"]["new"]
    lines = [
        "| run files | new gate: pull request's checkout + base-rules + orv's fetches = total (requests) "
        "| checkout + orv = total wall | total / smallest's | old gate: bytes, total wall |",
        "|---|---|---|---|---|",
    ]
    for key in keys:
        r = results[key]
        row, old = r["gate"]["new"], _old(old_results, results, key)
        steps = row["steps"]
        lines.append(
            f"| {r['run_files']:,} | {size(steps[0]['bytes'])} + {size(steps[1]['bytes'])} + {size(row['orv_bytes'])} "
            f"= **{size(row['bytes'])}** ({row['fetches']}) | {row['checkout_s']:.1f} + {row['orv_s']:.1f} = "
            f"**{row['total_s']:.1f} s** | {row['total_s'] / first['total_s']:.2f}× | "
            + (f"{size(old['bytes'])}, {old['total_s']:.1f} s |" if old else "— |")
        )
    return "\n".join(lines)


# The gate's checkout, blobless (filter: blob:none, every commit and tree) against tree-less
# (filter: tree:0, commits only), on a one-recipe and a copied-run pull request (bench/clone.py
# --gate-only [--copied-run] [--workflow-file]).
VARIANTS = (
    ("blobless", "clone-gate-blobless.json", "clone-gate-blobless-copied.json"),
    ("tree-less", "clone-gate-treeless.json", "clone-gate-treeless-copied.json"),
)


def variant_cell(row: dict | None) -> str:
    if not row:
        return "—"
    steps = row["steps"]
    return (
        f"{size(steps[0]['bytes'])} + {size(steps[1]['bytes'])} + {size(row['orv_bytes'])} = "
        f"**{size(row['bytes'])}**; {row['fetches']} fetches; {row['total_s']:.1f} s "
        f"({row['outputs'].get('errors', '?')} errors)"
    )


def variants_table(results: dict[str, dict]) -> str:
    """One row per size and pull request; a column per checkout variant (`results`: file name -> results)."""
    lines = [
        "| run files (commits) | pull request | "
        + " | ".join(
            f"gate, {name}: pull request's checkout + base-rules + orv's fetches = total; requests; wall"
            for name, _, _ in VARIANTS
        )
        + " |",
        "|---|---|" + "---|" * len(VARIANTS),
    ]
    sizes = sorted({k for r in results.values() for k in r if k.isdigit()}, key=int)
    for key in sizes:
        for kind, index in (("one recipe", 1), ("copied run (ORV304)", 2)):
            cells = [results.get(v[index], {}).get(key, {}).get("gate", {}).get("new") for v in VARIANTS]
            some = next((results[v[index]][key] for v in VARIANTS if key in results.get(v[index], {})), None)
            if some is None:
                continue
            lines.append(
                f"| {some['run_files']:,} ({some['commits']:,}) | {kind} | "
                + " | ".join(variant_cell(c) for c in cells)
                + " |"
            )
    return "\n".join(lines)


def shard_table(result: dict) -> str:
    rows = [s for s in result["steps"] if "n" in s]
    single = next((s for s in result["steps"] if s.get("step") == "check"), None)
    lines = [
        f"`orv check --shard K/N` at {result['run_files']:,} run files ({result['recipes']:,} recipes); shards "
        "run one after another on this 2-core host:",
        "",
        "| shards | slowest shard (wall) | sum of shards (wall / CPU) | merge-results | one `orv check -j1` |",
        "|---|---|---|---|---|",
    ]
    for s in rows:
        lines.append(
            f"| {s['n']} | {s['slowest_shard_wall_s']:.0f} s | {s['shards_wall_sum_s']:.0f} s / "
            f"{s['shards_cpu_s']:.0f} s | {s['merge_wall_s']:.1f} s | "
            f"{single['wall_s'] if single else s['check_wall_s']:.0f} s |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--new",
        type=Path,
        default=None,
        help="take the new workflow's gate from this results file (e.g. measured with --orv)",
    )
    args = parser.parse_args()
    clone = HERE / "clone-results.json"
    if clone.exists():
        results = json.loads(clone.read_text())
        new = json.loads(args.new.read_text()) if args.new else None
        print(clone_table(results, new))
        print()
        print(gate_parts_table(new or results, results))
    variants = {
        name: json.loads((HERE / name).read_text())
        for _, *names in VARIANTS
        for name in names
        if (HERE / name).exists()
    }
    if variants:
        print()
        print(variants_table(variants))
    for shard in sorted(HERE.glob("shard-*k-results.json"), key=lambda p: int(p.name.split("-")[1][:-1])):
        print()
        print(shard_table(json.loads(shard.read_text())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
