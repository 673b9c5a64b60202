"""Fetch the google/rpc protos the service's errors use from the PyPI source release of googleapis-common-protos.

Every error the service returns is a ``google.rpc.Status`` in ``grpc-status-details-bin`` with
``google.rpc.ErrorInfo`` and, for bad input, ``google.rpc.BadRequest`` details. A client in another language
needs those three files to read them, so they ship beside the contract: taken, at build time, from the
googleapis-common-protos sdist on PyPI, checked against a pinned
SHA-256, and written to proto/google/rpc/ (git-ignored), as scripts/fetch_validate_proto.py does for
validate.proto. They are Google's files: buf lint and breaking ignore them, and no code is generated from
them (the Python runtime gets the same messages from googleapis-common-protos, which grpcio-status
requires).
"""

from __future__ import annotations

import hashlib
import io
import sys
import tarfile
import urllib.request
from pathlib import Path

VERSION = "1.76.0"
URL = (
    "https://files.pythonhosted.org/packages/62/b6/"
    "bc095b23a3e0d978e75c8c18cabe4c11f791837410670e4486f0d539bfba/"
    f"googleapis_common_protos-{VERSION}.tar.gz"
)
SHA256 = "71db0e44a1d4c2dd024ebad44ca67129cc1e2892e4861df466764749d5ef8642"
FILES = ("google/rpc/status.proto", "google/rpc/error_details.proto", "google/rpc/code.proto")
ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / f"googleapis_common_protos-{VERSION}.tar.gz"
PROTO = ROOT / "proto"


def _archive() -> bytes:
    if CACHE.exists() and hashlib.sha256(CACHE.read_bytes()).hexdigest() == SHA256:
        return CACHE.read_bytes()
    with urllib.request.urlopen(URL, timeout=120) as response:
        data: bytes = response.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        sys.exit(f"googleapis-common-protos {VERSION} sdist: sha256 {digest} != pinned {SHA256}")
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    CACHE.write_bytes(data)
    return data


def main() -> None:
    if all((PROTO / name).exists() for name in FILES):
        return
    with tarfile.open(fileobj=io.BytesIO(_archive()), mode="r:gz") as archive:
        for name in FILES:
            member = archive.extractfile(f"googleapis_common_protos-{VERSION}/{name}")
            if member is None:
                sys.exit(f"{name} is missing from the googleapis-common-protos {VERSION} sdist")
            target = PROTO / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(member.read())
            print(f"wrote {target.relative_to(ROOT)} from googleapis-common-protos {VERSION} (PyPI sdist)")


if __name__ == "__main__":
    main()
