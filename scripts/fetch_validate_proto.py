"""Fetch buf/validate/validate.proto from the PyPI source release of protovalidate.

The contract's constraints use protovalidate's `buf.validate` options, so
protoc and buf need `buf/validate/validate.proto`. The file is not committed:
it is taken, at build time, from the protovalidate sdist on PyPI (the same
release the runtime depends on), checked against a pinned SHA-256, and written
to proto/buf/validate/validate.proto (git-ignored).
"""

from __future__ import annotations

import hashlib
import io
import sys
import tarfile
import urllib.request
from pathlib import Path

VERSION = "2.1.0"
URL = (
    "https://files.pythonhosted.org/packages/a2/af/"
    "7518ed77c4355e4bb025496915385bd9337c975d8b7487a2f97adf2c1ab3/"
    f"protovalidate-{VERSION}.tar.gz"
)
SHA256 = "d2f66bd8c7e8c4929116ad598348e83d90bd718f0387f2307b34f83b1740f318"
MEMBER = f"protovalidate-{VERSION}/proto/buf/validate/validate.proto"
ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / f"protovalidate-{VERSION}.tar.gz"
TARGET = ROOT / "proto" / "buf" / "validate" / "validate.proto"


def _archive() -> bytes:
    if CACHE.exists() and hashlib.sha256(CACHE.read_bytes()).hexdigest() == SHA256:
        return CACHE.read_bytes()
    with urllib.request.urlopen(URL, timeout=120) as response:
        data: bytes = response.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        sys.exit(f"protovalidate {VERSION} sdist: sha256 {digest} != pinned {SHA256}")
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    CACHE.write_bytes(data)
    return data


def main() -> None:
    if TARGET.exists():
        return
    with tarfile.open(fileobj=io.BytesIO(_archive()), mode="r:gz") as archive:
        member = archive.extractfile(MEMBER)
        if member is None:
            sys.exit(f"{MEMBER} is missing from the protovalidate {VERSION} sdist")
        text = member.read()
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_bytes(text)
    print(f"wrote {TARGET.relative_to(ROOT)} from protovalidate {VERSION} (PyPI sdist)")


if __name__ == "__main__":
    main()
