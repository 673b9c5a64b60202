"""Defects a review of the service found (issue 34), each shown by the behaviour it broke.

- A cluster that refuses a taken tool name says ``ConflictError`` in ``ErrorInfo.reason`` (it said a private class).
- An unexpected exception in ``PublishStream`` or ``ServeTools`` ends the call INTERNAL and is logged (it was
  UNKNOWN naming the Python class, or a ``ServeTools`` stream that ended as if the runner had closed it).
- ``create_server`` that refuses a cluster node's configuration leaves no port bound and no store open.
- The CLI names the missing module of an ``ImportError``; only a missing LangChain says to install that extra.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import grpc
import psycopg
import pytest
from conftest import ServerThread, fresh_database
from google.rpc import error_details_pb2
from grpc_status import rpc_status

import agentmsg as am
from agentmsg.service import Client, ServerConfig, ToolRunner, create_server
from agentmsg.service.localpg import LocalPostgres
from agentmsg.streaming import events_from_message
from agentmsg.v1 import session_service_pb2, session_service_pb2_grpc, tool_pb2, tool_service_pb2, tool_service_pb2_grpc

INTERNAL_MESSAGE = "internal error; see the server log"


def _reason(error: grpc.RpcError) -> str:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None, "the status carries no details"
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info.reason
    raise AssertionError("no ErrorInfo in the status")


def _register(name: str, tool: str) -> tool_service_pb2.ServeToolsRequest:
    return tool_service_pb2.ServeToolsRequest(
        register=tool_service_pb2.RegisterTools(runner_name=name, tools=[tool_pb2.ToolDefinition(name=tool)])
    )


async def _serve_tools(target: str, *requests: tool_service_pb2.ServeToolsRequest) -> list[Any]:
    """A runner at the gRPC level: sends ``requests``, keeps its side open, and reads until the server ends the
    stream; what it read, then the error it ended with (or None)."""
    async with grpc.aio.insecure_channel(target) as channel:
        stream = tool_service_pb2_grpc.ToolServiceStub(channel).ServeTools()
        for request in requests:
            await stream.write(request)
        read: list[Any] = []
        try:
            async with asyncio.timeout(20):
                while (item := await stream.read()) is not grpc.aio.EOF:
                    read.append(item)
        except grpc.aio.AioRpcError as exc:
            return [*read, exc]
        return [*read, None]


# --- the cluster's taken tool name ------------------------------------------------------------------------------


def test_a_tool_name_taken_on_another_node_is_refused_with_the_public_reason(
    postgres: LocalPostgres, make_server: Callable[..., ServerThread], start_runner: Callable[..., Any]
) -> None:
    url = fresh_database(postgres)
    first, second = make_server(db=url), make_server(db=url)
    runner = ToolRunner(first.target, name="one")
    runner.tool(lambda: "x", name="shared")
    start_runner(runner)
    (*_, error) = asyncio.run(_serve_tools(second.target, _register("two", "shared")))
    assert isinstance(error, grpc.aio.AioRpcError)
    assert error.code() == grpc.StatusCode.ALREADY_EXISTS
    assert _reason(error) == "ConflictError"  # a class of the error vocabulary, not cluster._TakenError
    assert "already served by another node: shared" in (error.details() or "")
    with Client(second.target, timeout=10) as client:  # the refused registration left nothing behind
        assert [t.runner_name for t in client.list_tools()] == ["one"]


# --- unexpected exceptions in the streaming handlers ------------------------------------------------------------


def test_an_unexpected_exception_in_publish_stream_is_internal_and_logged(
    server: ServerThread, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in the store")

    monkeypatch.setattr(server.running.sessions.store, "append", broken)
    message = am.AssistantMessage.text("hello", id="a1")
    requests = [
        session_service_pb2.PublishStreamRequest(session_id="s" if i == 0 else "", event=event.pb)
        for i, event in enumerate(events_from_message(message))
    ]
    with caplog.at_level(logging.ERROR, "agentmsg.service"), grpc.insecure_channel(server.target) as channel:
        stub = session_service_pb2_grpc.SessionServiceStub(channel)
        with pytest.raises(grpc.RpcError) as info:
            stub.PublishStream(iter(requests), timeout=10)
    assert info.value.code() == grpc.StatusCode.INTERNAL  # type: ignore[attr-defined]
    assert info.value.details() == INTERNAL_MESSAGE  # type: ignore[attr-defined]
    logged = [r for r in caplog.records if r.getMessage() == "internal error in PublishStream"]
    assert logged
    assert "a bug in the store" in str(logged[0].exc_info[1])  # type: ignore[index]


def test_an_unexpected_exception_registering_a_runner_is_internal_and_logged(
    server: ServerThread, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(register: Any) -> Any:
        raise RuntimeError("a bug in registration")

    monkeypatch.setattr(server.running.tools, "_register", broken)
    with caplog.at_level(logging.ERROR, "agentmsg.service"):
        (error,) = asyncio.run(_serve_tools(server.target, _register("r", "t")))
    assert isinstance(error, grpc.aio.AioRpcError)
    assert (error.code(), error.details()) == (grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE)
    assert any(r.getMessage() == "internal error in ServeTools" for r in caplog.records)


def test_an_unexpected_exception_reading_a_runners_outcomes_is_internal_and_logged(
    server: ServerThread, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: the stream ended OK, as if the runner had closed it, and nothing was logged."""

    async def broken(runner: Any, requests: Any) -> None:
        raise RuntimeError("a bug reading outcomes")

    monkeypatch.setattr(server.running.tools, "_read_outcomes", broken)
    with caplog.at_level(logging.ERROR, "agentmsg.service"):
        registered, error = asyncio.run(_serve_tools(server.target, _register("r", "t")))
    assert registered.WhichOneof("kind") == "registered"
    assert isinstance(error, grpc.aio.AioRpcError)
    assert (error.code(), error.details()) == (grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE)
    assert any(r.getMessage() == "internal error in ServeTools" for r in caplog.records)
    with Client(server.target, timeout=10) as client:
        assert client.list_tools() == []  # the runner's tools went with it


# --- create_server refusing a cluster node's configuration -------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("0.0.0.0", port))
        except OSError:
            return False
        return True


def _connections(postgres: LocalPostgres, url: str) -> int:
    database = url.rsplit("/", 1)[1]
    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (database,)).fetchone()
    assert row is not None
    return int(row[0])


def test_a_cluster_node_without_an_advertised_address_leaves_no_port_and_no_store_open(
    postgres: LocalPostgres,
) -> None:
    url = fresh_database(postgres)
    port = _free_port()
    config = ServerConfig(db=url, host="0.0.0.0", port=port)
    with pytest.raises(am.UnavailableError, match="needs advertise"):
        asyncio.run(create_server(config))
    assert _bindable(port), "the refused node still holds its port"
    assert _connections(postgres, url) == 0, "the refused node's store still holds connections"


# --- the CLI's ImportError ---------------------------------------------------------------------------------------


def _cli_without(module: str, *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``agentmsg ARGV`` in a process where importing ``module`` fails."""
    code = f"import sys; sys.modules[{module!r}] = None\nfrom agentmsg.cli import main\nsys.exit(main({list(argv)!r}))"
    return subprocess.run(
        [sys.executable, "-c", code], input=stdin, capture_output=True, text=True, timeout=60, check=False
    )


def test_an_import_error_names_the_module_and_no_unrelated_extra() -> None:
    done = _cli_without("agentmsg._demo", "demo")
    assert done.returncode == 2
    assert "agentmsg._demo" in done.stderr
    assert "langchain" not in done.stderr


def test_a_missing_langchain_says_which_extra_to_install() -> None:
    done = _cli_without("langchain_core.messages", "convert", "--from", "langchain", "--to", "agentmsg", stdin="[]")
    assert done.returncode == 2
    assert "langchain_core.messages" in done.stderr
    assert "pip install 'agentmsg[langchain]'" in done.stderr
