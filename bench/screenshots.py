"""Screenshots of the site as a reader sees it, at 1,280 × 900 and 390 × 844 (issue 53), into docs/screenshots/.

    python bench/screenshots.py [--out docs/screenshots]

Builds the browser tests' registry (tests/e2e/test_site.py's verified_registry) holding verified (T2) inference sweeps on two GPUs (an H100,
which the test catalog prices, and an RTX 3090, which it does not) besides claimed and training
recipes, renders it with `orv site`, serves it on loopback and photographs, in Debian's headless
Chromium (the browser tests' driver, tests/e2e/test_site.py), the training board (index), the
inference board, the comparison chart (also with a second engine hidden from the legend and two llama-bench
rows, from the same boards altered) and one recipe page at both widths. Deterministic data, so a
change to the pages shows as a change to the images.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.e2e.test_site import (  # noqa: E402
    CHROMEDRIVER,
    CHROMIUM,
    _QuietHandler,
    _with_single_stream,
    load,
    verified_registry,
)
from validator.cli import main as orv  # noqa: E402
from validator.site import render_site, write_site  # noqa: E402

WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}
PAGES = {
    "index": "index.html",
    "inference": "inference.html",
    "comparison": "frontier.html",
    "recipe": "recipe/inference/hop-a.html",
    # the same boards with the H100's hop-b served by a second engine (hidden by its legend button, so
    # the H100's line is the frontier of vLLM's points alone) and two llama-bench rows (single stream)
    "comparison-engines": "engines/frontier.html",
}
CLICK = {"comparison-engines": ".legend-toggles button[data-value=sglang]"}


def build_site(work: Path) -> Path:
    root = verified_registry(work / "registry")
    out = work / "site"
    if orv(["boards", "--root", str(root)]) != 0 or orv(["site", str(out), "--root", str(root)]) != 0:
        raise SystemExit("orv boards / orv site failed")
    boards = _with_single_stream(load(root / "boards"))
    for row in boards["boards"]["measured"]:
        if row["recipe"] == "hop-b":
            row["engine"] = "sglang"
    write_site(str(out / "engines"), render_site(boards))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE.parent / "docs" / "screenshots")
    args = parser.parse_args()
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must never download a driver
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    with tempfile.TemporaryDirectory() as tmp:
        site = build_site(Path(tmp))
        handler = functools.partial(_QuietHandler, directory=str(site))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--disable-dev-shm-usage"):
            options.add_argument(flag)
        driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
        args.out.mkdir(parents=True, exist_ok=True)
        try:
            for device, (width, height) in WIDTHS.items():
                for name, page in PAGES.items():
                    driver.set_window_size(width, height)
                    driver.get(base + page)
                    if name in CLICK:
                        driver.find_element("css selector", CLICK[name]).click()
                    # the whole page, as tall as it is (capped so an image stays a few hundred kB)
                    full = driver.execute_script("return document.documentElement.scrollHeight")
                    driver.set_window_size(width, min(max(height, full), 4 * height))
                    shot = args.out / f"{name}-{device}.png"
                    driver.save_screenshot(str(shot))
                    print(shot.relative_to(HERE.parent) if shot.is_relative_to(HERE.parent) else shot)
        finally:
            driver.quit()
            server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
