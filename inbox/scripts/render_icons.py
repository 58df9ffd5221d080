"""Render the app icon's PNGs (192 and 512 px, the sizes the manifest names) from `public/icons/icon.svg`
with the Chromium the browser tests use, so the PNGs are always the SVG: `uv run python inbox/scripts/render_icons.py`.
The PNGs are committed; run this again after changing the SVG."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import sync_playwright

ICONS = Path(__file__).resolve().parents[1] / "public" / "icons"
SIZES = (192, 512)


def main() -> None:
    svg = (ICONS / "icon.svg").read_text()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        for size in SIZES:
            page = browser.new_page(viewport={"width": size, "height": size})
            sized = svg.replace('width="512" height="512"', f'width="{size}" height="{size}"', 1)
            page.set_content(f"<html><body style='margin:0'>{sized}</body></html>")
            page.screenshot(path=str(ICONS / f"icon-{size}.png"), omit_background=True)
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
