"""How the ``agentmsg`` command starts gRPC: on its TCP endpoints rather than the EventEngine's, where the gRPC
installed is one this was measured on.

gRPC 1.85's EventEngine endpoints (the default) hand every read and write between their own threads, the completion
queue's poller thread and the event loop. Its TCP endpoints (``GRPC_EXPERIMENTS`` turning the EventEngine client,
listener and other endpoints off) do the socket work on the poller thread. Measured on this project's 2-core machine:
a bare ``grpc.aio`` echo (client and server in one process) 541-631 µs → 433-437 µs a round trip and 561-641 µs →
418-441 µs of CPU; the hosted MCP ``CallTool`` path's server 320-326 µs → 297-305 µs of CPU a call with 16 callers.

Like :func:`agentmsg._logtext.quiet_grpc_core`, for the command only, never on import: a program that embeds agentmsg
keeps gRPC's defaults (it may set the same variable itself: ``docs/service.md``). A ``GRPC_EXPERIMENTS`` the user set,
even empty, wins; so does a gRPC already started in the process (the variable is read when gRPC loads). With a gRPC
whose minor version is not one this was measured on, nothing is set: the experiments' names change between versions,
and gRPC logs an unknown one as an error.
"""

from __future__ import annotations

import os
import sys
from importlib import metadata

__all__ = ["GRPC_EXPERIMENTS", "MEASURED_ON", "prefer_tcp_endpoints", "tcp_endpoints"]

GRPC_EXPERIMENTS = "-event_engine_client,-event_engine_listener,-event_engine_for_all_other_endpoints"
MEASURED_ON = ((1, 85),)  # grpcio (major, minor) versions with these experiments, where the gain was measured


def tcp_endpoints() -> dict[str, str]:
    """The environment a process started now gets gRPC's TCP endpoints with: ``{"GRPC_EXPERIMENTS": ...}``, or
    nothing when the user set the variable or the installed grpcio was not measured (see the module docstring)."""
    if "GRPC_EXPERIMENTS" in os.environ:
        return {}
    try:
        major, minor = (int(part) for part in metadata.version("grpcio").split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        return {}
    return {"GRPC_EXPERIMENTS": GRPC_EXPERIMENTS} if (major, minor) in MEASURED_ON else {}


def prefer_tcp_endpoints() -> bool:
    """Start this process's gRPC on its TCP endpoints (:func:`tcp_endpoints`), if it has not started yet. True when
    the variable was set here."""
    if "grpc" in sys.modules:
        return False
    wanted = tcp_endpoints()
    os.environ.update(wanted)
    return bool(wanted)
