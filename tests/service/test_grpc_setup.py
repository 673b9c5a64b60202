"""The ``agentmsg`` command starts gRPC on its TCP endpoints (agentmsg._grpcsetup) where the grpcio installed is one
this was measured on; a ``GRPC_EXPERIMENTS`` the user set (even empty) wins, and a gRPC already loaded is left as it
is. Importing agentmsg changes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata

import grpc
import pytest

from agentmsg import _grpcsetup

PROBE = """
import os, sys
import agentmsg.cli
assert "grpc" not in sys.modules, "importing the command loaded gRPC"
before = os.environ.get("GRPC_EXPERIMENTS")
try:
    agentmsg.cli.main(["--version"])
except SystemExit:
    pass
print("probe:", repr(before), repr(os.environ.get("GRPC_EXPERIMENTS")))
"""


def _probe(env: dict[str, str]) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("probe: ")]
    return line.split()[1:]


def _without_the_variable() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "GRPC_EXPERIMENTS"}


def test_the_command_starts_grpc_on_its_tcp_endpoints_and_importing_agentmsg_does_not() -> None:
    assert grpc.__version__.startswith("1.85.")  # the version measured (MEASURED_ON): the command sets the variable
    before, after = _probe(_without_the_variable())
    assert before == "None"
    assert after == repr(_grpcsetup.GRPC_EXPERIMENTS)


@pytest.mark.parametrize("theirs", ["", "-event_engine_client"])
def test_a_grpc_experiments_the_user_set_wins(theirs: str) -> None:
    assert _probe({**_without_the_variable(), "GRPC_EXPERIMENTS": theirs}) == [repr(theirs), repr(theirs)]


def test_nothing_is_set_once_grpc_is_loaded_or_for_a_grpcio_not_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRPC_EXPERIMENTS", raising=False)
    assert "grpc" in sys.modules  # loaded in this process (above): it read the variable already
    assert _grpcsetup.prefer_tcp_endpoints() is False
    assert "GRPC_EXPERIMENTS" not in os.environ
    assert _grpcsetup.tcp_endpoints() == {"GRPC_EXPERIMENTS": _grpcsetup.GRPC_EXPERIMENTS}  # for a child started now
    for other in ("1.86.0", "2.0.0", "1.84.2", "not-a-version"):
        monkeypatch.setattr(_grpcsetup.metadata, "version", lambda _name, other=other: other)
        assert _grpcsetup.tcp_endpoints() == {}, other

    def missing(_name: str) -> str:
        raise metadata.PackageNotFoundError(_name)

    monkeypatch.setattr(_grpcsetup.metadata, "version", missing)
    assert _grpcsetup.tcp_endpoints() == {}
