"""`make breaking`: `buf breaking` (the FILE rules of buf.yaml) against the last release of the contract.

    .venv/bin/python scripts/breaking.py [--tag v0.1.0] [--against REF]

The baseline is the last release's tag (``--tag``, which the Makefile's RELEASE_TAG sets) when this clone has
it, else the commit recorded in proto/BASELINE (a tag does not travel with every clone); ``--against`` names
any other commit, branch or tag. On each release, set RELEASE_TAG and proto/BASELINE to the new release.

buf cannot compare against ``.git#ref=...`` here: proto/buf/validate/validate.proto is fetched at build time
and git-ignored, so the baseline's files would not compile ("imported file does not exist"). Instead the
baseline's proto/ and buf.yaml are exported from git (``git archive``, read-only) into a temporary directory,
the current proto/buf/ is copied beside them so the imports resolve, and buf compares the working tree with
that. Everything is local: no network, no worktree, nothing written to the repository.
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUF = ROOT / "node_modules" / ".bin" / "buf"
BASELINE_FILE = ROOT / "proto" / "BASELINE"
RELEASE_TAG = "v0.1.0"
VALIDATE = ROOT / "proto" / "buf"


def git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, check=False)


def commit_of(ref: str) -> str | None:
    found = git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    return found.stdout.decode().strip() if found.returncode == 0 else None


def baseline(tag: str, override: str | None) -> tuple[str, str]:
    """The baseline commit and where it came from."""
    if override:
        ref, source = override, "--against"
    elif commit_of(f"refs/tags/{tag}"):
        ref, source = f"refs/tags/{tag}", f"tag {tag}"
    else:
        lines = [line.strip() for line in BASELINE_FILE.read_text(encoding="utf-8").splitlines()]
        ref, source = next(line for line in lines if line and not line.startswith("#")), "proto/BASELINE"
    sha = commit_of(ref)
    if sha is None:
        sys.exit(
            f"breaking: the baseline {ref} ({source}) is not in this clone; fetch it "
            f"(`git fetch --tags`, or `git fetch --unshallow` in a shallow clone) and run again"
        )
    return sha, source


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tag", default=RELEASE_TAG, help=f"the last release's tag (default: {RELEASE_TAG})")
    parser.add_argument("--against", metavar="REF", help="compare with REF instead of the release")
    args = parser.parse_args()
    if not (VALIDATE / "validate" / "validate.proto").is_file():
        sys.exit("breaking: proto/buf/validate/validate.proto is missing: run `make deps`")
    sha, source = baseline(args.tag, args.against)
    archive = git("archive", "--format=tar", sha, "--", "proto", "buf.yaml")
    if archive.returncode != 0:
        sys.exit(f"breaking: git archive {sha} failed: {archive.stderr.decode().strip()}")
    with tempfile.TemporaryDirectory(prefix="agentmsg-baseline-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(tmp, filter="data")
        shutil.copytree(VALIDATE, Path(tmp) / "proto" / "buf", dirs_exist_ok=True)
        print(f"buf breaking against {sha[:12]} ({source})")
        done = subprocess.run([str(BUF), "breaking", "--against", tmp], cwd=ROOT, check=False)
    if done.returncode != 0:
        sys.exit(
            f"breaking: the contract breaks compatibility with {sha[:12]} ({source}); "
            "see proto/README.md for what v1 allows"
        )


if __name__ == "__main__":
    main()
