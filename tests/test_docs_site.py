"""The documentation site: `make docs` builds it (mkdocs.yml, strict, offline) and its link checker fails broken links.

The site is built as `make docs` builds it (``python -m mkdocs build --strict``), into a temporary directory: no
warning, every nav page and API reference page present. Then a small site made with the project's own checking
settings (mkdocs.yml's ``strict`` and ``validation``) shows that a link to a missing page and an ``#anchor`` a page
does not have each fail the build, named. The reST-to-Markdown rewriting of the docstrings
(scripts/griffe_roles.py) is checked on a small package loaded by griffe.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from gates import skip_or_fail

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "mkdocs.yml"

# The API reference pages and objects each must document (from the docstrings, by mkdocstrings).
API_ANCHORS = {
    "api/agentmsg.html": ["agentmsg.UserMessage", "agentmsg.ToolCallContent", "agentmsg.validate"],
    "api/service.html": ["agentmsg.service.Client", "agentmsg.service.ServerConfig", "agentmsg.service.ToolRunner"],
    "api/mcp.html": ["agentmsg.mcp.McpRunner", "agentmsg.mcp.create_mcp_server"],
    "api/providers.html": ["agentmsg.providers.openai_chat", "agentmsg.providers.anthropic", "agentmsg.formats.read"],
    "api/frameworks.html": ["agentmsg.frameworks.pydantic_ai", "agentmsg.frameworks.a2a"],
    "api/ui.html": ["agentmsg.ui.ag_ui", "agentmsg.ui.ai_sdk", "agentmsg.ui.ConversionReport"],
}


def mkdocs_or_skip() -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings_handlers.python") is None:
        skip_or_fail("mkdocs and mkdocstrings-python are missing: run `make deps` (the dev extra pins them)")


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """The site as `make docs` builds it (never --quiet: that hides warnings from strict mode's count)."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        cwd=config.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_site_builds_strict_with_no_warning(tmp_path: Path) -> None:
    mkdocs_or_skip()
    site = tmp_path / "site"
    done = build(CONFIG, site)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    for page in ["index.html", "proto.html", "reliability.html", "approval.html", "a2a.html", "json-schema.html"]:
        assert (site / page).is_file(), page
    for page, anchors in API_ANCHORS.items():
        html = (site / page).read_text(encoding="utf-8")
        for anchor in anchors:
            assert f'id="{anchor}"' in html, f"{page} does not document {anchor}"
    # a docstring's :mod:`agentmsg.ui.ag_ui` (agentmsg.ui's) became a link to that module's section
    ui = (site / "api/ui.html").read_text(encoding="utf-8")
    assert 'href="#agentmsg.ui.ag_ui"' in ui
    assert ":mod:`" not in ui
    assert ":class:`" not in (site / "api/agentmsg.html").read_text(encoding="utf-8")


def checking_config(docs: Path) -> dict[str, Any]:
    """A config for ``docs`` with mkdocs.yml's theme, Markdown extensions and its checking settings."""
    import yaml  # mkdocs's own dependency

    project = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    assert project["strict"] is True
    assert project["validation"]["anchors"] == "warn"
    return {
        "site_name": "checker",
        "docs_dir": str(docs),
        "strict": project["strict"],
        "validation": project["validation"],
        "theme": project["theme"],
        "markdown_extensions": project["markdown_extensions"],
        "nav": ["index.md", "other.md"],
    }


@pytest.mark.parametrize(
    ("link", "named"),
    [
        ("[gone](missing.md)", "'missing.md'"),
        ("[no such heading](other.md#no-such-heading)", "'#no-such-heading'"),
        ("[no such heading here](#nowhere)", "'#nowhere'"),
    ],
)
def test_a_broken_link_or_anchor_fails_the_build_named(tmp_path: Path, link: str, named: str) -> None:
    mkdocs_or_skip()
    import yaml

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "other.md").write_text("# Other\n\n## A heading\n", encoding="utf-8")
    (docs / "index.md").write_text(f"# Home\n\n[fine](other.md#a-heading)\n\n{link}\n", encoding="utf-8")
    config = tmp_path / "mkdocs.yml"
    config.write_text(yaml.safe_dump(checking_config(docs)), encoding="utf-8")

    done = build(config, tmp_path / "site")
    assert done.returncode != 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1, done.stderr  # the good link passed
    assert named in warnings[0], done.stderr


def test_the_same_pages_with_the_link_fixed_build(tmp_path: Path) -> None:
    mkdocs_or_skip()
    import yaml

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "other.md").write_text("# Other\n\n## A heading\n", encoding="utf-8")
    (docs / "index.md").write_text("# Home\n\n[fine](other.md#a-heading) [here](#home)\n", encoding="utf-8")
    config = tmp_path / "mkdocs.yml"
    config.write_text(yaml.safe_dump(checking_config(docs)), encoding="utf-8")
    done = build(config, tmp_path / "site")
    assert done.returncode == 0, done.stderr


def test_docstring_rest_becomes_markdown(tmp_path: Path) -> None:
    if importlib.util.find_spec("griffe") is None:
        skip_or_fail("griffe is missing: run `make deps` (the dev extra pins griffelib)")
    import griffe

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        textwrap.dedent('''\
            """See :class:`Thing`, :func:`~pkg.make`, :mod:`pkg`, :attr:`its size <pkg.Thing.size>`, :class:`Nowhere`.

            A table:

            =====  ==========
            name   what
            =====  ==========
            a      :func:`make`
            =====  ==========

            Use it so::

                thing = make()
            """

            class Thing:
                size = 1

            def make() -> Thing:
                return Thing()
        '''),
        encoding="utf-8",
    )
    extension = str(ROOT / "scripts" / "griffe_roles.py")
    docstring = griffe.load("pkg", search_paths=[tmp_path], extensions=griffe.load_extensions(extension)).docstring
    assert docstring is not None
    text = docstring.value
    assert '<autoref identifier="pkg.Thing" optional>`Thing`</autoref>' in text
    assert '<autoref identifier="pkg.make" optional>`make()`</autoref>' in text
    assert '<autoref identifier="pkg" optional>`pkg`</autoref>' in text
    assert '<autoref identifier="pkg.Thing.size" optional>`its size`</autoref>' in text
    assert "`Nowhere`" in text  # unresolvable: code, not a link
    assert 'identifier="Nowhere"' not in text
    assert "```text\n=====  ==========\nname   what\n=====  ==========\na      make()\n=====  ==========\n```" in text
    assert "Use it so:\n\n```python\nthing = make()\n```" in text
