"""The release version, from its one source: ``[project] version`` in pyproject.toml.

The Python package reads it from its installed metadata (``agentmsg.__version__``); the npm package cannot, so
this script stamps it into ``sdk/typescript/package.json`` and the workspace's entry in ``package-lock.json``.

    python scripts/version.py           print the version
    python scripts/version.py --stamp   write it into package.json and package-lock.json (make version; make dist)
    python scripts/version.py --check   fail, naming each file, when one of them says otherwise

To release another version: change pyproject.toml's, then ``make version``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = "pyproject.toml"
PACKAGE_JSON = "sdk/typescript/package.json"
LOCK = "package-lock.json"
LOCK_ENTRY = "sdk/typescript"
# PEP 440's public versions that npm's semver also reads the same way (1.2.3, 1.2.3rc1 is not semver: refused)
_VERSION = re.compile(r"\d+\.\d+\.\d+")


def source_version(root: Path = ROOT) -> str:
    """pyproject.toml's ``[project] version``: the one place the version is written by hand."""
    version = tomllib.loads((root / PYPROJECT).read_text(encoding="utf-8"))["project"]["version"]
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        raise SystemExit(f"pyproject.toml: [project] version {version!r} is not MAJOR.MINOR.PATCH")
    return version


def stamped_versions(root: Path = ROOT) -> dict[str, str]:
    """What each stamped file says now, by a name for the file."""
    package = json.loads((root / PACKAGE_JSON).read_text(encoding="utf-8"))
    lock = json.loads((root / LOCK).read_text(encoding="utf-8"))
    return {
        PACKAGE_JSON: package["version"],
        f"{LOCK} (packages[{LOCK_ENTRY!r}])": lock["packages"][LOCK_ENTRY]["version"],
    }


def _rewrite_version(path: Path, document: dict[str, Any], version: str) -> None:
    """Set the ``"version"`` field textually, so the file's layout and key order stay as npm wrote them."""
    text = path.read_text(encoding="utf-8")
    old = json.dumps(document["version"])
    field = re.compile(r'("version":\s*)' + re.escape(old))
    if path.name == LOCK:
        # the workspace's entry only, never a dependency that happens to carry the same version
        start = text.index(f'"{LOCK_ENTRY}": {{')
        end = text.index("\n    }", start)
        text = text[:start] + field.sub(rf"\g<1>{json.dumps(version)}", text[start:end], count=1) + text[end:]
    else:
        text = field.sub(rf"\g<1>{json.dumps(version)}", text, count=1)
    path.write_text(text, encoding="utf-8")


def stamp(version: str, root: Path = ROOT) -> list[str]:
    """Write ``version`` into package.json and the lock's workspace entry; the files it changed."""
    changed = []
    package = json.loads((root / PACKAGE_JSON).read_text(encoding="utf-8"))
    if package["version"] != version:
        _rewrite_version(root / PACKAGE_JSON, package, version)
        changed.append(PACKAGE_JSON)
    entry = json.loads((root / LOCK).read_text(encoding="utf-8"))["packages"][LOCK_ENTRY]
    if entry["version"] != version:
        _rewrite_version(root / LOCK, entry, version)
        changed.append(LOCK)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--stamp", action="store_true", help="write the version into package.json and the lock")
    mode.add_argument("--check", action="store_true", help="fail when a stamped file disagrees")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this script's)")
    args = parser.parse_args(argv)
    version = source_version(args.root)
    if args.stamp:
        for changed in stamp(version, args.root):
            print(f"{changed}: version {version}")
    elif args.check:
        wrong = {name: found for name, found in stamped_versions(args.root).items() if found != version}
        if wrong:
            for name, found in wrong.items():
                print(f"{name} says {found}, pyproject.toml says {version}: run make version", file=sys.stderr)
            return 1
    else:
        print(version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
