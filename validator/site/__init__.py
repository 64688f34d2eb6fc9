"""The boards as a static website: the boards document in (read_boards assembles boards/index.json and
boards/models/), a folder of self-contained HTML pages out.

`render_site` is a pure function (boards document + optional registry context -> {relative path:
bytes}); `write_site` puts the result in place atomically; `collect_context` reads what boards.json
does not carry (loss curves, the workloads' reference curves, the catalog's model order) from a
registry. docs/site.md describes the pages.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import (
    Callable,
    Iterable,
    Mapping,  # not typing's, ~10x slower in isinstance() (report/summary.py)
    Sequence,
)
from dataclasses import dataclass, field
from typing import Any

import jinja2

from validator.errors import Refusal
from validator.files.atomic import staged_folder, swap_in
from validator.load import schema as schemas
from validator.report.wanted import wanted_items
from validator.site import format as fmt
from validator.site.frontier_chart import GPU_COLOURS, NARROW_HEIGHT, NARROW_WIDTH, comparison_chart, frontier_chart

SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")  # a recipe id (boards schema: slug), safe as a file name
REPO_PATH = re.compile(
    r"(?:runs|recipes|docs)(?:/[A-Za-z0-9_-][A-Za-z0-9._-]*)+"
)  # a file that may be linked: no "..", no URL
MARKER = ".orv-site"  # names a folder orv site wrote, so it may replace it, and only such a folder
LATEST_PER_PAGE = 500  # rows of the "Latest recipes" list per page (~0.5 KB each)
CARDS_PER_PAGE = 200  # model cards per page (~2 KB each)
WANTED_SHOWN = 25  # items of each wanted list on the index; `orv wanted` prints them all
INFERENCE_PER_PAGE = 500  # rows per inference board page (~0.9 KB each; long reasons make them longer)


@dataclass(frozen=True)
class SiteContext:
    """What the pages show beyond boards.json; every part is optional (an empty context still renders).

    losses: run content hash -> [(step, loss)] in step order, losses as floats or "nan"/"inf".
    references: workload id -> {"points": [(step, loss)], "tolerance", "tolerance_kind", "window"}.
    model_order: catalog model ids in catalog order (model cards follow it after verified first and the
      fastest, fmt.default_order; unknown ids go last).
    gpu_order: catalog GPU ids in catalog order (H100, H200, B200 first, as seed 000 lists them).
    file_base: what turns a repository path (runs/…, recipes/…, docs/…) into a link — a URL prefix
      ending in "/" (see `file_base`); empty: paths are shown, not linked.
    """

    losses: Mapping[str, Sequence[tuple[int, Any]]] = field(default_factory=dict)
    references: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    model_order: Sequence[str] = ()
    gpu_order: Sequence[str] = ()
    file_base: str = ""
    reproduce: Mapping[str, Sequence[str]] = field(default_factory=dict)  # recipe id -> `orv reproduce`'s lines


def file_base(directory: str, root: str | None, repo_url: str | None, commit: Any) -> str:
    """Where the site links a repository file: `repo_url`'s view of it at the boards' commit, else nowhere
    ("": the path is shown, not linked). Never relative to the site folder `directory`, nor to where the
    registry `root` sits on this machine (a file: URL): the same boards give the same pages wherever
    they are built, and no link breaks once the site is deployed elsewhere (issue 53)."""
    del directory, root  # kept in the signature: where the site or the registry is must not change a page
    if repo_url:
        ref = commit if isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{7,64}", commit) else "HEAD"
        return f"{repo_url.rstrip('/')}/blob/{ref}/"
    return ""


def _environment(hrefs: Mapping[str, str], base: str = "") -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("validator.site", "templates"),
        autoescape=True,  # recipe notes, authors and ids are contributor text
        undefined=jinja2.ChainableUndefined,  # an absent optional field renders empty, never raises
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )

    def recipe_href(value: Any) -> str:
        rid = value.get("recipe") if isinstance(value, Mapping) else value
        return hrefs.get(str(rid), "#") if rid else "#"

    def groupby_ordered(items: Iterable[Mapping[str, Any]], key: str) -> list[dict[str, Any]]:
        groups: dict[str, list[Mapping[str, Any]]] = {}
        for item in items if isinstance(items, (list, tuple)) else ():
            if not isinstance(item, Mapping):
                continue
            groups.setdefault(str(item.get(key) or "Other"), []).append(item)
        return [{"name": name, "members": members} for name, members in groups.items()]

    def needs(value: Any) -> str:
        if isinstance(value, (list, tuple)):
            return "; ".join(str(v) for v in value)
        return "" if value is None else str(value)

    def listtext(value: Any, sep: str = "; ") -> str:
        if isinstance(value, (list, tuple)):
            return sep.join(str(v) for v in value)
        return "" if value is None else str(value)

    def barwidth(value: Any) -> str:
        return f"{max(0.0, min(1.0, value if fmt.is_number(value) else 0.0)) * 100:.1f}"

    def file_href(path: Any, up: str) -> str:
        # only a plain relative path of the repository is linked: never a URL or a path out of it
        if not base or not isinstance(path, str) or not REPO_PATH.fullmatch(path):
            return ""
        return base + urllib.parse.quote(path)

    env.filters.update(
        num=fmt.num,
        usd=fmt.usd,
        pct=fmt.pct,
        gain=fmt.gain,
        sortkey=fmt.sort_key,
        quality=fmt.quality,
        quality_detail=fmt.quality_detail,
        quality_meaning=fmt.quality_meaning,
        headline=fmt.headline,
        why=fmt.short_reason,
        recipe_href=recipe_href,
        groupby_ordered=groupby_ordered,
        needs=needs,
        barwidth=barwidth,
        listtext=listtext,
        file_href=file_href,
    )
    return env


def _pages(total: int, size: int, name: Callable[[int], str], current: int, up: str = "") -> dict[str, Any]:
    count = max(1, -(-total // size))
    return {
        "count": count,
        "current": current,
        "total": total,
        "size": size,
        "links": [{"n": n, "current": n == current, "href": up + name(n)} for n in range(1, count + 1)],
    }


def _chunks(rows: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [rows[i : i + size] for i in range(0, len(rows), size)] or [rows[:0]]


# How often rendering reports progress (validator/cli/progress.py ends the line at the total).
PROGRESS_STEP = 50


def render_site(
    boards: Mapping[str, Any], context: SiteContext = SiteContext(), progress: Callable[[int, int], None] | None = None
) -> dict[str, bytes]:
    """Every page of the site, keyed by its path relative to the site root; deterministic.
    `progress(done, total)` is told as the recipe pages (the bulk of the work) are rendered."""
    meta = boards.get("meta") or {}
    tables = boards.get("boards") or {}
    training: list[dict[str, Any]] = list(tables.get("training") or [])
    measured: list[dict[str, Any]] = list(tables.get("measured") or [])
    claimed: list[dict[str, Any]] = list(tables.get("claimed") or [])
    runs: list[dict[str, Any]] = list(boards.get("runs") or [])
    models: list[dict[str, Any]] = list(boards.get("models") or [])
    wanted = boards.get("wanted") or None

    hrefs: dict[str, str] = {}
    rows: Sequence[dict[str, Any]]  # a board's rows, or one page of them
    for kind, rows in (("inference", claimed), ("inference", measured), ("training", training)):
        for row in rows:
            hrefs.setdefault(row["recipe"], f"recipe/{kind}/{row['recipe']}.html")
    env = _environment(hrefs, context.file_base)
    files: dict[str, bytes] = {}

    def page(path: str, template: str, **values: Any) -> None:
        up = "../" * path.count("/")
        html = env.get_template(template).render(meta=meta, up=up, **values)
        files[path] = html.encode("utf-8")

    # ---- training board: model cards (verified first, fastest, catalog order), then the newest-first list
    by_id = {row["recipe"]: row for row in training}
    order = {model: i for i, model in enumerate(context.model_order)}
    gpu_rank = {gpu: i for i, gpu in enumerate(context.gpu_order)}

    def by_gpu(gpu: str) -> tuple[int, str]:
        return gpu_rank.get(gpu, len(gpu_rank)), gpu

    cards = []
    for m in sorted(models, key=lambda m: (order.get(m["model"], len(order)), str(m.get("family") or ""), m["model"])):
        gpus = [
            dict(
                g,
                mfu=(by_id.get(g["recipe"]) or {}).get("mfu") if g.get("recipe") else None,
                tier=(by_id.get(g["recipe"]) or {}).get("tier") if g.get("recipe") else None,
                tier_reasons=(by_id.get(g["recipe"]) or {}).get("tier_reasons") if g.get("recipe") else None,
            )
            for g in sorted(m.get("gpus") or [], key=lambda g: (by_gpu(g["gpu"]), str(g.get("workload") or "")))
        ]
        cards.append(dict(m, gpus=gpus))
    # verified first, then the fastest, then catalog order (stable): a card ranks by its best recipe
    cards.sort(key=lambda m: _card_order(m["gpus"]))
    families = list(dict.fromkeys(str(m.get("family") or "Other") for m in cards))
    with_recipe = [(m["model"], g["gpu"], str(g.get("workload"))) for m in cards for g in m["gpus"] if g.get("recipe")]
    gpu_ids = sorted({g for _, g, _ in with_recipe}, key=by_gpu)
    gpu_names = {g["gpu"]: g["gpu"].upper() for m in cards for g in m["gpus"]}
    stats = {
        "recipes": len(training),
        "verified": sum(1 for r in training if r.get("tier") in ("T2", "T3")),
        "models": len(cards),
        "families": len(families),
        "pairs": len(set(with_recipe)),
        "gpus": gpu_ids,
        "gpu_names": [gpu_names[g] for g in gpu_ids],
    }
    workloads = sorted({str(r["workload"]) for r in training if r.get("workload")})
    # verified first, then newest first (stable: boards order within a tier and day)
    latest = sorted(training, key=lambda r: str(r.get("measured") or ""), reverse=True)
    latest.sort(key=lambda r: fmt.default_order(r.get("tier")))
    latest_chunks = _chunks(latest, LATEST_PER_PAGE)
    card_chunks = _chunks(cards, CARDS_PER_PAGE)

    def latest_name(n: int) -> str:
        return "index.html" if n == 1 else f"training/latest-{n}.html"

    def cards_name(n: int) -> str:
        return "index.html" if n == 1 else f"training/models-{n}.html"

    # `orv wanted`'s lists with their commands (validator/report/wanted.py), linked from every heading
    # each list cut to its first WANTED_SHOWN (the boards' order: most worth doing first), so the index
    # stays small at 10,000 recipes; the page says how many more `orv wanted` lists
    wanted_lists = {k: v[:WANTED_SHOWN] for k, v in wanted_items(boards).items()} if wanted else {}
    wanted_more = (
        {k: len(v) - WANTED_SHOWN for k, v in wanted.items() if isinstance(v, list) and len(v) > WANTED_SHOWN}
        if isinstance(wanted, Mapping)
        else {}
    )
    if isinstance(wanted, Mapping):
        wanted = {k: v[:WANTED_SHOWN] if isinstance(v, list) and k != "models" else v for k, v in wanted.items()}
    common = {"stats": stats, "families": families, "workloads": workloads, "script": True}
    for n, chunk in enumerate(card_chunks, 1):
        path = cards_name(n)
        up = "../" * path.count("/")
        page(
            path,
            "training.html",
            cards=chunk,
            card_pages=_pages(len(cards), CARDS_PER_PAGE, cards_name, n, up),
            latest=latest_chunks[0] if n == 1 else [],
            wanted=wanted if n == 1 else None,
            wanted_lists=wanted_lists if n == 1 else {},
            wanted_more=wanted_more,
            latest_pages=_pages(len(latest), LATEST_PER_PAGE, latest_name, 1, up),
            **common,
        )
    for n, chunk in enumerate(latest_chunks[1:], 2):
        path = latest_name(n)
        page(
            path,
            "latest.html",
            latest=chunk,
            script=True,
            latest_pages=_pages(len(latest), LATEST_PER_PAGE, latest_name, n, "../"),
        )

    # ---- inference board: measured and claimed, paginated together
    def inference_name(n: int) -> str:
        return "inference.html" if n == 1 else f"inference/page-{n}.html"

    # verified first (stable: the boards' order within a tier)
    measured.sort(key=lambda r: fmt.default_order(r.get("tier")))
    claimed.sort(key=lambda r: fmt.default_order(r.get("tier")))
    inference_rows = {"measured": measured, "claimed": claimed}
    labels = {
        str(r.get("workload") or "unspecified"): str(r.get("workload_label") or r.get("workload") or "unspecified")
        for r in measured + claimed
    }
    chunks = {name: _chunks(rows, INFERENCE_PER_PAGE) for name, rows in inference_rows.items()}
    count = max(len(c) for c in chunks.values())
    for n in range(1, count + 1):
        path = inference_name(n)
        up = "../" * path.count("/")
        boards_here = []
        for name, title in (("measured", "Measured"), ("claimed", "Claimed")):
            rows = chunks[name][n - 1] if n <= len(chunks[name]) else []
            if n > 1 and not rows:
                continue
            all_rows = inference_rows[name]
            boards_here.append(
                {
                    "name": name,
                    "title": title,
                    "rows": rows,
                    "pages": _pages(len(all_rows), INFERENCE_PER_PAGE, inference_name, n, up),
                    "tiers": sorted({str(r["tier"]) for r in all_rows if r.get("tier")}),
                    "engines": sorted({str(r["engine"]) for r in all_rows if r.get("engine")}),
                    "gpus": sorted({str(r["gpu"]) for r in all_rows if r.get("gpu")}),
                    # the filter that groups a board by workload: ids with their labels, by id
                    "workloads": [
                        {"id": wid, "label": labels[wid]}
                        for wid in sorted({str(r.get("workload") or "unspecified") for r in all_rows})
                    ],
                    # one workload at a time by default (figures of two workloads do not compare): the
                    # most populated, ties by id
                    "default_workload": _most_common(str(r.get("workload") or "unspecified") for r in all_rows),
                    "quality": any(r.get("quality") is not None for r in all_rows),
                }
            )
        page(
            path,
            "inference.html",
            boards=boards_here,
            script=True,
            measured_pages={"total": len(measured)},
            claimed_pages={"total": len(claimed)},
            verified=sum(1 for r in measured if r.get("tier") in ("T2", "T3")),
        )

    groups = []
    names = {row["model"]: row.get("model_name") or row["model"] for row in measured + claimed}
    for i, g in enumerate(boards.get("frontiers") or []):
        groups.append(
            dict(
                g,
                id=f"f{i + 1}",
                model_name=names.get(g["model"], g["model"]),
                workload_label=labels.get(str(g.get("workload")), str(g.get("workload"))),
                chart=frontier_chart(g),
                narrow=frontier_chart(g, NARROW_WIDTH, NARROW_HEIGHT),
            )
        )
    page(
        "frontier.html",
        "frontier.html",
        groups=groups,
        comparisons=_comparisons(groups, measured, by_gpu),
        single_stream=_single_stream(groups, measured, labels),
        empty_pairs=_empty_pairs(groups, measured, names),
        script=True,
    )

    page("tiers.html", "tiers.html", script=False)

    # ---- a page per recipe, with its evidence
    runs_of: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        for rid in run.get("recipes") or []:
            runs_of.setdefault(str(rid), []).append(run)
    total, done = len(training) + len(measured) + len(claimed), 0
    for kind, rows in (("training", training), ("inference", measured + claimed)):
        for row in rows:
            done += 1
            if progress and (done % PROGRESS_STEP == 0 or done == total):
                progress(done, total)
            path = f"recipe/{kind}/{row['recipe']}.html"
            if path in files:
                continue
            row_runs = sorted(
                runs_of.get(row["recipe"], []), key=lambda r: (str(r.get("measured_at") or ""), r["content_hash"])
            )
            diverged: list[str]
            chart, diverged = None, []
            if kind == "training":
                chart, diverged = _chart(row, row_runs, context)
            page(
                path,
                "recipe.html",
                r=row,
                kind=kind,
                runs=row_runs,
                facts=_facts(kind, row),
                plan=context.reproduce.get(row["recipe"]) or (),
                chart=chart,
                diverged=diverged,
                script=False,
            )
    files["site.css"] = env.loader.get_source(env, "site.css")[0].encode("utf-8")  # type: ignore[union-attr]
    files[MARKER] = b"written by orv site; `orv site` replaces this folder only when this file is in it\n"
    return files


def _card_order(gpus: Sequence[Mapping[str, Any]]) -> tuple[int, int, float]:
    """A model card's place: the best default_order of its GPU rows that have a recipe (a card with
    none goes last)."""
    keys = [fmt.default_order(g.get("tier"), g.get("tok_s_per_gpu")) for g in gpus if g.get("recipe")]
    return min(keys, default=(len(fmt.TIER_RANK) + 1, 1, 0.0))


def _most_common(values: Iterable[str]) -> str:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return min(counts, key=lambda v: (-counts[v], v)) if counts else ""


def _comparisons(
    groups: Sequence[Mapping[str, Any]], measured: Sequence[Mapping[str, Any]], by_gpu: Callable[[str], Any]
) -> list[dict[str, Any]]:
    """One chart per model × workload with every GPU's points and frontier (the comparison a reader
    choosing a GPU makes), GPUs in catalog order, each GPU the same colour on every chart."""
    engines = {str(r["recipe"]): str(r.get("engine") or "") for r in measured}
    colours = {
        gpu: GPU_COLOURS[i % len(GPU_COLOURS)]
        for i, gpu in enumerate(sorted({str(g["gpu"]) for g in groups}, key=by_gpu))
    }
    together: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for g in groups:
        together.setdefault((str(g["model"]), str(g.get("workload"))), []).append(g)
    out = []
    for i, ((model, _), members) in enumerate(together.items()):
        members = sorted(members, key=lambda g: by_gpu(str(g["gpu"])))
        coloured = [dict(g, colour=colours[str(g["gpu"])]) for g in members]
        charts = {}
        for measure in ("tok_s_per_gpu", "cost_per_1m"):
            wide = comparison_chart(coloured, measure, engines)
            if wide is not None:
                narrow = comparison_chart(coloured, measure, engines, NARROW_WIDTH, NARROW_HEIGHT)
                charts[measure] = {"wide": wide, "narrow": narrow}
        point_recipes = {
            str(p.get("recipe")) for g in members for p in list(g.get("points") or []) + list(g.get("apart") or [])
        }
        out.append(
            {
                "id": f"c{i + 1}",
                "model": model,
                "model_name": members[0]["model_name"],
                "workload": members[0].get("workload"),
                "workload_label": members[0]["workload_label"],
                "gpus": [{"gpu": g["gpu"], "colour": colours[str(g["gpu"])], "pair": g["id"]} for g in members],
                "engines": sorted({engines.get(r, "") for r in point_recipes} - {""}),
                "charts": charts,
            }
        )
    return out


def _single_stream(
    groups: Sequence[Mapping[str, Any]], measured: Sequence[Mapping[str, Any]], labels: Mapping[str, str]
) -> list[Mapping[str, Any]]:
    """Measured rows of pairs with no chart whose tool measures one stream (llama-bench): what they are,
    single-stream decode and prefill rates, rather than a point lacking an aggregate."""
    charted = {(g["model"], g["gpu"]) for g in groups}
    rows = [
        dict(
            r,
            workload_label=labels.get(str(r.get("workload") or "unspecified")),
            # one stream: the user's speed is the decode rate; the GPUs' output is that one stream's
            per_gpu=r["decode_tok_s"] / r["gpus"]
            if fmt.is_number(r.get("decode_tok_s")) and fmt.is_number(r.get("gpus")) and r["gpus"] > 0
            else None,
        )
        for r in measured
        if (r["model"], r["gpu"]) not in charted and r.get("tool") == "llama-bench"
    ]
    # the site's one default order: verified first, then the fastest single stream
    return sorted(rows, key=lambda r: fmt.default_order(r.get("tier"), r.get("decode_tok_s")))


def _empty_pairs(
    groups: Sequence[Mapping[str, Any]], measured: Sequence[Mapping[str, Any]], names: Mapping[str, str]
) -> list[str]:
    charted = {(g["model"], g["gpu"]) for g in groups}
    return sorted(
        {
            f"{names.get(r['model'], r['model'])} · {str(r['gpu']).upper()}"
            for r in measured
            if (r["model"], r["gpu"]) not in charted and r.get("tool") != "llama-bench"
        }
    )


def _chart(
    row: Mapping[str, Any], runs: Sequence[Mapping[str, Any]], context: SiteContext
) -> tuple[dict[str, Any] | None, list[str]]:
    curves, diverged = [], []
    for run in runs:
        digest = run.get("content_hash") or ""
        losses = context.losses.get(digest)
        if not losses:
            continue
        # JSON has no NaN: a diverged step is logged as the string "nan"/"inf" (run schema), so every
        # number is finite and every string is a divergence
        points = [(step, float(loss)) for step, loss in losses if not isinstance(loss, str)]
        diverged += [f"{loss} at step {step} ({digest[:12]})" for step, loss in losses if isinstance(loss, str)]
        if points:
            curves.append((f"{run.get('measured_by')} · {digest[:12]}", points))
    if not curves:
        return None, diverged
    return fmt.loss_chart(curves, context.references.get(row.get("workload") or "")), diverged


def _facts(kind: str, r: Mapping[str, Any]) -> list[tuple[str, str]]:
    if kind == "training":
        facts = [
            ("Model", r.get("model_name") or r.get("model")),
            ("GPU", f"{r.get('gpu_name') or r.get('gpu')} ×{r.get('gpus')}"),
            ("Workload", r.get("workload")),
            (
                "Tokens/s/GPU"
                + (
                    " (recomputed from the run)"
                    if r.get("method_ref")
                    else " (the run's tool summary)"
                    if r.get("run_file")
                    else " (claimed)"
                ),
                fmt.num(r.get("tok_s_per_gpu")),
            ),
            *(
                [("Tokens/s/GPU claimed", fmt.num(r.get("claimed_tok_s_per_gpu")))]
                if r.get("run_file") and r.get("claimed_tok_s_per_gpu") != r.get("tok_s_per_gpu")
                else []
            ),
            ("$ per 1M tokens (orv, from the catalog price)", fmt.usd(r.get("cost_per_1m"))),
            ("MFU (orv, from the catalog peak)", fmt.pct(r.get("mfu"))),
            ("Layout", r.get("layout")),
            ("Rank in model × GPU", f"#{r.get('rank')} of {r.get('rank_of')}"),
            ("Framework", " ".join(str(v) for v in (r.get("framework"), r.get("framework_ver")) if v) or "not stated"),
            ("Baseline (starting point)", "yes" if r.get("baseline") else "no"),
            ("Measured", r.get("measured")),
            ("Author", r.get("author")),
        ]
    else:
        measured = "decode_tok_s" in r
        facts = [
            ("Model", r.get("model_name") or r.get("model")),
            ("Hardware", f"{r.get('gpu_name') or str(r.get('gpu') or '').upper()} ×{r.get('gpus')}"),
            ("Engine", " ".join(str(v) for v in (r.get("engine"), r.get("engine_ver")) if v) or "not stated"),
            ("Quantization", r.get("quant")),
            ("Workload", r.get("workload_label") or r.get("workload") or "unspecified"),
            (
                "Decode tok/s" + ("" if measured else " (claimed)"),
                fmt.num(r.get("decode_tok_s") if measured else r.get("claimed_tok_s"), 2),
            ),
            (
                "Prefill tok/s" + ("" if measured else " (claimed)"),
                fmt.num(r.get("prefill_tok_s") if measured else r.get("claimed_prefill_tok_s"), 2),
            ),
            (
                "TTFT ms" + ("" if measured else " (claimed)"),
                fmt.num(r.get("ttft_ms") if measured else r.get("claimed_ttft_ms"), 2),
            ),
            *(
                [
                    (
                        "$ per 1M output tokens (orv, from the run's output rate and the catalog price)",
                        fmt.usd(r.get("cost_per_1m")),
                    )
                ]
                if measured
                else []
            ),
            ("Context length", fmt.num(r.get("context_len"), 0)),
            ("Concurrency", fmt.num(r.get("concurrency"), 0)),
        ]
        if measured:
            facts += [
                ("Tool", f"{r.get('tool')} {r.get('tool_version')}"),
                ("Measured by", r.get("measured_by")),
                ("Method", r.get("method_ref") or "the tool's own summary"),
            ]
        if r.get("quality") is not None:
            facts.append(("Quality", fmt.quality_detail(r.get("quality"))))
        facts += [("Measured", r.get("measured")), ("Author", r.get("author"))]
    facts.append(("Legacy import", "yes" if r.get("legacy") else "no"))
    return [(label, "–" if value is None else str(value)) for label, value in facts]


def write_site(directory: str, files: Mapping[str, bytes]) -> None:
    """Put the site at `directory` in one step: build it beside, then swap it in.

    A folder already there is replaced only if an earlier `orv site` wrote it (it holds MARKER) or
    it is empty; anything else is refused, so a typo cannot wipe a folder of other files.
    """
    target = os.path.abspath(directory)
    if os.path.lexists(target):
        if not os.path.isdir(target) or os.path.islink(target):
            raise SiteError(f"{directory} exists and is not a folder")
        if os.listdir(target) and not os.path.isfile(os.path.join(target, MARKER)):
            raise SiteError(f"{directory} is not empty and was not written by `orv site`; choose a new or empty folder")
    # built in a locked temporary folder git never lists (validator/files/atomic.py), then exchanged with
    # the old site in one step: a kill leaves the old site or the new, and the next write sweeps the rest
    with staged_folder(target) as staging:
        for rel, data in sorted(files.items()):
            path = os.path.join(staging, *rel.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(data)
        os.chmod(staging, 0o755)
        swap_in(staging, target)


def boards_problem(boards: Any) -> str | None:
    """Why `boards` cannot be rendered, or None: it must be what `orv boards` writes, checked with the
    same schema (schema/boards.schema.json, compiled by jsonschema-rs) — not a hand-kept subset of it."""
    found = schemas.first_error("boards", boards)
    if found is None:
        return None
    path, message = found
    return f"`{'/'.join(map(str, path)) or '(document)'}`: {message} (schema/boards.schema.json)"


class SiteError(Refusal):
    """A site that cannot be written where asked: the message says why and what to do."""
