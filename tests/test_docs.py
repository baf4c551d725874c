"""The docs: every setting described, the site built strictly, a short README, no dangling references.

The site is built with `mkdocs build --strict` (mkdocs.yml; the `docs` extra, which `make test`
installs): a broken link, a page missing from the nav or an unknown generated part fails it. The
configuration reference is generated from bot.settings.Settings, so a setting without a
description fails here first, by name.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "notes" not in p.relative_to(DOCS).parts)
# Repository paths a page names in backticks: they must exist (a moved module moves its docs too).
REPO_PATH = re.compile(r"`((?:bot|adapters|agent_core|tools|tripbot|tests|benchmarks|scripts|migrations)/[\w./-]*\w)`")
# Issue numbers and documents that live outside the repository.
SETTING_NAME = re.compile(r"\b((?:BOT|OPENAI|TELEGRAM|SLACK)_[A-Z0-9_]+)\b")
# Read by the tests, the browser installer or the libraries, not by the bot's settings.
NOT_SETTINGS = {"BOT_TEST_PG_URL", "BOT_TEST_WITHOUT_POSTGRES", "BOT_SKIP_BROWSER_INSTALL", "BOT_TEST_RUN_DIR"}
FORBIDDEN = [
    re.compile(r"\bissues?\s*#?\d+", re.IGNORECASE),
    re.compile(r"(?<![\w&/])#\d{1,5}\b"),
    re.compile(r"DESIGN(\.md|\s*§)"),
    re.compile(r"SEED-NOTES|shared/|/work/"),
]


def _variable(field) -> str:
    choices = getattr(field.validation_alias, "choices", None)
    return str(choices[0]) if choices else ""


def test_every_setting_has_a_description():
    missing = [name for name, field in Settings.model_fields.items() if not (field.description or "").strip()]
    assert not missing, f"settings without a description (bot/settings/; the docs are generated from it): {missing}"


def test_the_readme_is_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines: the rest belongs in docs/"


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_issue_numbers_or_outside_documents(path: Path):
    text = path.read_text(encoding="utf-8")
    found = [m.group(0) for pattern in FORBIDDEN for m in pattern.finditer(text)]
    assert not found, f"{path.relative_to(ROOT)} cites {found}: name the behaviour, not an issue or an outside file"


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_repository_path_named_exists(path: Path):
    text = path.read_text(encoding="utf-8")
    named = {m.group(1) for m in REPO_PATH.finditer(text) if "NNNN" not in m.group(1)}  # NNNN: a pattern
    gone = sorted(p for p in named if not (ROOT / p).exists())
    assert not gone, f"{path.relative_to(ROOT)} names paths that do not exist: {gone}"


def test_every_variable_named_is_a_setting():
    """A variable the README or a page tells people to set exists (or is another program's)."""
    settings = {_variable(f) for f in Settings.model_fields.values()}
    named = {m.group(1) for path in [README, *PAGES]
             for m in SETTING_NAME.finditer(path.read_text(encoding="utf-8"))}
    unknown = sorted(v for v in named - settings - NOT_SETTINGS if not v.endswith("_"))
    assert not unknown, f"variables named in the docs that bot/settings/ does not read: {unknown}"


def test_the_docs_site_builds_strictly(tmp_path: Path):
    try:
        import material  # noqa: F401  (mkdocs-material)
        import mkdocs  # noqa: F401
    except ImportError:
        pytest.fail("mkdocs-material is not installed: `pip install -c constraints.txt -e '.[docs]'` "
                    "(make test installs it)")
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    # the generated parts are there: every setting, the machine's diagram, the latest benchmark run
    reference = (site / "configuration" / "index.html").read_text(encoding="utf-8")
    missing = [v for v in map(_variable, Settings.model_fields.values()) if v and v not in reference]
    assert not missing, f"the configuration page lacks {missing}"
    machine = (site / "architecture" / "chat-machine" / "index.html").read_text(encoding="utf-8")
    assert "stateDiagram-v2" in machine and "signoff --&gt; idle" in machine
    performance = (site / "performance" / "index.html").read_text(encoding="utf-8")
    assert "crash_soak" in performance and "generated:" not in performance
    assert not (site / "notes").exists(), "docs/notes/ is never built"
