"""Regenerate the checked-in Python code for the contract.

Runs the pinned grpcio-tools protoc over proto/agentmsg/v1/*.proto (with
mypy-protobuf stubs) and over buf/validate/validate.proto, which the generated
modules import. Writes into src/ so that proto package = Python package:
agentmsg.v1 lands in src/agentmsg/v1 and imports cleanly with no patching.
gRPC stubs and Connect services (``*_connect.py``, protoc-gen-connectrpc with
``protobuf=google`` so they use the same generated messages) are generated only
for files that declare a service.

Then the TypeScript code of @agentmsg/sdk (sdk/typescript/src/gen): protoc-gen-es, pinned by
package-lock.json, through ``buf generate`` over the same protos plus google/rpc's status and
error-detail protos (proto/google/rpc, fetched by scripts/fetch_rpc_protos.py), in which the
service's errors travel.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO = ROOT / "proto"
SRC = ROOT / "src"
OURS = "agentmsg/v1"
VALIDATE = "buf/validate/validate.proto"
SERVICE = re.compile(r"^service\s+\w+", re.MULTILINE)


BIN = Path(sys.executable).parent
PLUGINS = [f"--plugin=protoc-gen-{name}={BIN / f'protoc-gen-{name}'}" for name in ("mypy", "mypy_grpc", "connectrpc")]


def protoc(*args: str) -> None:
    cmd = [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO}", *PLUGINS, *args]
    subprocess.run(cmd, check=True, cwd=ROOT)


TS_TEMPLATE = ROOT / "sdk" / "typescript" / "buf.gen.yaml"
BUF = ROOT / "node_modules" / ".bin" / "buf"
RPC = "google/rpc"
RPC_PROTOS = ("status.proto", "error_details.proto")


def generate_typescript() -> None:
    """protoc-gen-es over one directory holding every proto the SDK needs (buf supplies the well-known types)."""
    missing = [f"proto/{RPC}/{name}" for name in RPC_PROTOS if not (PROTO / RPC / name).exists()]
    if missing:
        sys.exit(f"{', '.join(missing)} missing: run scripts/fetch_rpc_protos.py (make deps)")
    if not BUF.exists():
        sys.exit("node_modules/.bin/buf is missing: run npm install (make deps)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(PROTO / OURS, root / OURS)
        (root / VALIDATE).parent.mkdir(parents=True)
        shutil.copy(PROTO / VALIDATE, root / VALIDATE)
        (root / RPC).mkdir(parents=True)
        for name in RPC_PROTOS:
            shutil.copy(PROTO / RPC / name, root / RPC / name)
        subprocess.run([str(BUF), "generate", str(root), "--template", str(TS_TEMPLATE)], check=True, cwd=ROOT)


def main() -> None:
    if not (PROTO / VALIDATE).exists():
        sys.exit(f"proto/{VALIDATE} is missing: run scripts/fetch_validate_proto.py (make deps)")
    out = SRC / OURS
    for stale in [*out.glob("*_pb2*.py"), *out.glob("*_pb2*.pyi"), *out.glob("*_connect.py")]:
        stale.unlink()
    protos = sorted(p.relative_to(PROTO).as_posix() for p in (PROTO / OURS).glob("*.proto"))
    protoc(f"--python_out={SRC}", f"--mypy_out={SRC}", *protos)
    services = [p for p in protos if SERVICE.search((PROTO / p).read_text(encoding="utf-8"))]
    if services:
        protoc(f"--grpc_python_out={SRC}", f"--mypy_grpc_out={SRC}", *services)
        # Connect and gRPC-Web (agentmsg.service.http): protoc-gen-connectrpc over the same generated messages.
        protoc(f"--connectrpc_out={SRC}", "--connectrpc_opt=protobuf=google", *services)
    protoc(f"--python_out={SRC}", VALIDATE)
    for package in (out, SRC / "buf", SRC / "buf" / "validate"):
        (package / "__init__.py").touch()
    generate_typescript()


if __name__ == "__main__":
    main()
