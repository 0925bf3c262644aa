"""The HTML report in headless Chromium (Debian's package, driven by selenium): it renders, every image loads
from its embedded data: URI, and the console has no errors. Skipped, with the reason, without chromium."""

from __future__ import annotations

import shutil
import sys
import tempfile

import pytest
from test_report_figures import extreme_rows

from evaluation.report import write_report
from evaluation.runner import write_batch
from evaluation.study import StudyConfig, write_config

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


def _skip_reason() -> str | None:
    if not CHROMIUM or not DRIVER:
        return "chromium / chromedriver not installed (apt-get install -y chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium not installed (pip install -e .[dev])"
    return None


def _driver(profile: str):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=opts)


def test_html_report_renders_in_chromium(tmp_path):
    reason = _skip_reason()
    if reason:
        print(f"skipped: {reason}", file=sys.stderr)
        pytest.skip(reason)
    write_config(tmp_path, StudyConfig(name="html", instances=8, trials=2, design="paper-cells"))
    df = extreme_rows()  # with the extreme instance: the figures must still be there
    for i in range(8):
        write_batch(tmp_path, df[df["instance_id"] == f"i{i:04d}"].to_dict("records"))
    md = write_report(tmp_path)
    html = md.with_suffix(".html")
    body = html.read_text()
    assert body.count("data:image/png;base64,") == 4 and 'src="ecdf' not in body
    with tempfile.TemporaryDirectory() as profile:
        drv = _driver(profile)
        try:
            drv.get(html.as_uri())
            assert drv.title.startswith("Study report")
            assert drv.find_element("tag name", "h2").text.startswith("Table 5")
            imgs = drv.execute_script("return Array.from(document.images).map("
                                      "i => [i.complete, i.naturalWidth, i.naturalHeight])")
            assert len(imgs) == 4 and all(c and w > 300 and h > 200 for c, w, h in imgs), imgs
            caps = drv.execute_script("return Array.from(document.querySelectorAll('figcaption')).map(e => "
                                      "e.textContent)")
            assert len(caps) == 4 and all("Points:" in c for c in caps)
            rows = drv.execute_script("return document.querySelectorAll('table')[0].rows.length")
            assert rows == 1 + 8  # header + 4 subsets x 2 comparisons
            errors = [e for e in drv.get_log("browser") if e["level"] == "SEVERE"]
            assert errors == [], errors
        finally:
            drv.quit()


def test_html_renderer_subset(tmp_path):
    from evaluation.report_html import render

    out = render("# T\n\n- a **b**\n\n| x | y |\n|---|---|\n| 1 | <2> |\n\ntext *em* `c`", tmp_path)
    assert "<h1>T</h1>" in out and "<li>a <strong>b</strong></li>" in out
    assert "<td>&lt;2&gt;</td>" in out and "<em>em</em>" in out and "<code>c</code>" in out and "<table>" in out
