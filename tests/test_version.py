"""One version for Python and npm: pyproject.toml's, read by the package and stamped into the SDK by
scripts/version.py (``make version``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import agentmsg

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "version.py"
STAMPED = ("sdk/typescript/package.json", "package-lock.json")


def _version(*args: str, root: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _copy(tmp_path: Path, version: str) -> Path:
    """The three files the version lives in, under tmp_path, with pyproject.toml saying ``version``."""
    for name in ("pyproject.toml", *STAMPED):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, tmp_path / name)
    pyproject = tmp_path / "pyproject.toml"
    current = tomllib.loads(pyproject.read_text())["project"]["version"]
    pyproject.write_text(pyproject.read_text().replace(f'version = "{current}"', f'version = "{version}"', 1))
    return tmp_path


def test_python_and_npm_versions_agree() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert _version().stdout.strip() == version
    checked = _version("--check")
    assert checked.returncode == 0, checked.stderr
    assert json.loads((ROOT / "sdk/typescript/package.json").read_text())["version"] == version
    assert json.loads((ROOT / "package-lock.json").read_text())["packages"]["sdk/typescript"]["version"] == version
    assert agentmsg.__version__ == version


def test_a_new_version_is_refused_until_stamped_then_agrees(tmp_path: Path) -> None:
    root = _copy(tmp_path, "9.8.7")
    before = {name: (root / name).read_text() for name in STAMPED}

    refused = _version("--check", root=root)
    assert refused.returncode == 1
    assert "sdk/typescript/package.json says" in refused.stderr
    assert "package-lock.json (packages['sdk/typescript']) says" in refused.stderr
    assert "pyproject.toml says 9.8.7" in refused.stderr

    stamped = _version("--stamp", root=root)
    assert stamped.returncode == 0, stamped.stderr
    assert _version("--check", root=root).returncode == 0
    assert json.loads((root / "sdk/typescript/package.json").read_text())["version"] == "9.8.7"
    lock = json.loads((root / "package-lock.json").read_text())
    assert lock["packages"]["sdk/typescript"]["version"] == "9.8.7"
    # one line changed in each file, nothing else in the lock (no dependency that shares the old version)
    for name in STAMPED:
        changed = [
            (old, new)
            for old, new in zip(before[name].splitlines(), (root / name).read_text().splitlines(), strict=True)
            if old != new
        ]
        assert len(changed) == 1, (name, changed)
        assert '"9.8.7"' in changed[0][1]
    assert _version("--stamp", root=root).stdout == ""  # stamping again changes nothing


def test_a_version_that_npm_would_read_differently_is_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path, "1.0rc1")
    refused = _version("--stamp", root=root)
    assert refused.returncode != 0
    assert "[project] version '1.0rc1' is not MAJOR.MINOR.PATCH" in refused.stderr


def test_the_install_lines_name_this_versions_artifacts() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    artifact = re.compile(r"agentmsg(?:-sdk)?-(\d+\.\d+\.\d+)(?:-py3-none-any\.whl|\.tar\.gz|\.tgz)")
    pages = [ROOT / "README.md", ROOT / "sdk" / "typescript" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    named = {(page.relative_to(ROOT).as_posix(), m[0]) for page in pages for m in artifact.finditer(page.read_text())}
    assert named, "the README names no artifact to install"
    assert {(page, name) for page, name in named if version not in name} == set()
