"""Headless Chromium (Debian's ``chromium``) measuring a page ``tracebot console --html`` wrote.

The page forbids scripts; the measuring copy allows one script that writes, for every message, its
height and where the first fix step ends (both relative to the message's top) into a ``data-metrics``
attribute, which ``--dump-dom`` prints. A screenshot of the whole page is kept beside it.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tracebot.render.html import CSP_META, PANE_PX

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"  # git-ignored
MEASURE = """<script>
const metrics = [];
for (const m of document.querySelectorAll(".msg")) {
  const box = m.getBoundingClientRect();
  const step = m.querySelector('[data-block-id="tracebot_fix"] .ln:nth-of-type(2)');
  metrics.push({id: m.id, ts: m.dataset.ts, bot: m.classList.contains("bot"),
                ephemeral: m.classList.contains("ephemeral"), height: box.height,
                first_step_bottom: step ? step.getBoundingClientRect().bottom - box.top : null});
}
document.body.setAttribute("data-metrics", JSON.stringify(
  {metrics, page_height: document.documentElement.scrollHeight}));
</script>"""


@dataclass
class Measured:
    id: str
    ts: str
    bot: bool
    ephemeral: bool
    height: float
    first_step_bottom: float | None


def chromium() -> str:
    """The browser, or a skip outside CI (in CI a missing browser fails the test)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    message = "chromium is not installed (apt-get install chromium; scripts/test.sh installs it)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def _run(args: list[str], profile: Path) -> str:
    argv = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={profile}", *args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def measure(page: Path, name: str, tmp: Path) -> tuple[list[Measured], Path]:
    """Every message's height and first-fix-step offset, in CSS pixels at the pane's width, and the path
    of a full-page screenshot (tests/artifacts/NAME.png)."""
    source = page.read_text(encoding="utf-8")
    assert CSP_META in source, "the page must forbid scripts"
    measured = tmp / f"{name}.measure.html"
    measured.write_text(
        source.replace(CSP_META, "").replace("</body>", MEASURE + "</body>"), encoding="utf-8"
    )
    dom = _run([f"--window-size={PANE_PX},1000", "--dump-dom", measured.as_uri()], tmp / "profile")
    found = re.search(r'data-metrics="([^"]*)"', dom)
    assert found, "the measuring script did not run"
    data = json.loads(html.unescape(found.group(1)))
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / f"{name}.png"
    height = min(int(data["page_height"]) + 10, 16000)
    _run([f"--window-size={PANE_PX},{height}", f"--screenshot={shot}", page.as_uri()], tmp / "profile")
    assert shot.is_file() and shot.stat().st_size > 0
    print(f"screenshot: {shot}")
    return [Measured(**m) for m in data["metrics"]], shot
