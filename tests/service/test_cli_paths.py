"""The command-line flags, demos, auth paths and client error mappings no other test runs (issue 34)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
import trustme
from conftest import RunnerThread, ServerThread
from google.rpc import error_details_pb2, status_pb2
from serverproc import ServerProcess

import agentmsg as am
from agentmsg.cli import main
from agentmsg.providers._common import ConversionError
from agentmsg.service import Client, ToolRunner
from agentmsg.service import status as service_status
from agentmsg.service.server import ServerConfig, create_server
from agentmsg.v1 import session_service_pb2

ROOT = Path(__file__).resolve().parents[2]


# --- convert --pretty -----------------------------------------------------------------------------------------------


def test_convert_pretty_indents_the_same_payload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "in.json"
    source.write_text(json.dumps([am.UserMessage.text("hi", id="u1", timestamp=1).to_dict()]))
    argv = ["convert", str(source), "--from", "seed1", "--to", "openai-chat"]
    assert main(argv) == 0
    plain = capsys.readouterr().out
    assert main([*argv, "--pretty"]) == 0
    pretty = capsys.readouterr().out
    assert json.loads(pretty) == json.loads(plain) == [{"role": "user", "content": "hi"}]
    assert len(plain.strip().splitlines()) == 1
    assert pretty.startswith('[\n  {\n    "role": "user",')


# --- the connection flags: --ca, --cert, --key ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def pki() -> tuple[trustme.CA, trustme.LeafCert, trustme.LeafCert]:
    ca = trustme.CA()
    return ca, ca.issue_cert("localhost", "127.0.0.1"), ca.issue_cert("client.agentmsg.test")


def test_the_cli_speaks_tls_and_mtls_with_ca_cert_and_key(
    make_server: Callable[..., ServerThread],
    pki: tuple[trustme.CA, trustme.LeafCert, trustme.LeafCert],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ca, server_cert, client_cert = pki
    files = {
        "ca": ca.cert_pem,
        "cert": client_cert.cert_chain_pems[0],
        "key": client_cert.private_key_pem,
    }
    for name, blob in files.items():
        blob.write_to_path(str(tmp_path / f"{name}.pem"))
    server = make_server(
        tls_cert=server_cert.cert_chain_pems[0].bytes(),
        tls_key=server_cert.private_key_pem.bytes(),
        tls_client_ca=ca.cert_pem.bytes(),
    )
    target = ["--target", server.target, "--timeout", "10"]
    ca_only = ["--ca", str(tmp_path / "ca.pem")]
    full = [*ca_only, "--cert", str(tmp_path / "cert.pem"), "--key", str(tmp_path / "key.pem")]
    assert main(["send", "tls", "--text", "over mTLS", *target, *full]) == 0
    assert "tls#1 " in capsys.readouterr().out
    assert main(["sessions", *target, *ca_only]) == 2  # no client certificate: the handshake is refused
    assert "agentmsg: " in capsys.readouterr().err
    assert main(["tail", "tls", *target, *full]) == 0
    assert "over mTLS" in capsys.readouterr().out


# --- tools call --call-id -------------------------------------------------------------------------------------------


class RecordingRunner(ToolRunner):
    """A runner that notes the id of every call it answers."""

    def __init__(self, target: str) -> None:
        super().__init__(target, name="ids")
        self.ids: list[str] = []

    async def call(self, call: am.ToolCallContent) -> am.ToolResultContent:
        self.ids.append(call.id)
        return await super().call(call)


def test_tools_call_sends_the_call_id_given(
    server: ServerThread, start_runner: Callable[..., RunnerThread], capsys: pytest.CaptureFixture[str]
) -> None:
    runner = RecordingRunner(server.target)
    runner.tool(lambda: "answered", name="echo")
    start_runner(runner)
    target = ["--target", server.target]
    assert main(["tools", "call", "echo", "--call-id", "call-from-cli", *target]) == 0
    assert main(["tools", "call", "echo", *target]) == 0
    assert capsys.readouterr().out.split() == ["answered", "answered"]
    assert runner.ids == ["call-from-cli", "cli-call"]  # the flag, then the default


# --- tail --after and --count ---------------------------------------------------------------------------------------


def test_tail_after_skips_what_was_read(server: ServerThread, capsys: pytest.CaptureFixture[str]) -> None:
    with Client(server.target) as client:
        client.append_many("t", [am.UserMessage.text(f"m{i}", id=f"m{i}") for i in range(1, 4)])
    assert main(["tail", "t", "--after", "2", "--target", server.target]) == 0
    out = capsys.readouterr().out
    assert "m3" in out
    assert "m1" not in out
    assert "m2" not in out
    assert main(["tail", "t", "--after", "3", "--target", server.target]) == 0  # nothing after: not an error
    assert capsys.readouterr().out == ""


def test_tail_follow_count_waits_for_new_messages_and_stops(
    server: ServerThread, capsys: pytest.CaptureFixture[str]
) -> None:
    """The second message comes only once the follower is subscribed: the count is reached by following."""
    with Client(server.target) as client:
        client.append("t", am.UserMessage.text("old", id="m1"))
        codes: list[int] = []
        argv = ["tail", "t", "--follow", "--after", "1", "--count", "2", "--target", server.target]
        follower = threading.Thread(target=lambda: codes.append(main(argv)))
        follower.start()
        for _ in range(1000):  # until the server has the subscription
            if server.running.store._watching.get("t"):
                break
            follower.join(0.01)
        assert server.running.store._watching.get("t") == 1
        client.append_many("t", [am.UserMessage.text("new", id="m2"), am.UserMessage.text("newer", id="m3")])
        client.append("t", am.UserMessage.text("not read", id="m4"))
        follower.join(20)
    assert codes == [0]
    out = capsys.readouterr().out
    assert "new" in out
    assert "newer" in out
    assert "old" not in out
    assert "not read" not in out


# --- serve --no-reflection, serve with AGENTMSG_TOKEN ---------------------------------------------------------------


def _reflection_services(target: str) -> list[str]:
    from grpc_reflection.v1alpha import reflection_pb2

    with grpc.insecure_channel(target) as channel:
        call = channel.stream_stream(
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )
        (answer,) = call(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10)
    return [service.name for service in answer.list_services_response.service]


def test_serve_no_reflection_turns_reflection_off() -> None:
    server = ServerProcess("--memory", "--no-reflection")
    try:
        with pytest.raises(grpc.RpcError) as info:
            _reflection_services(server.target)
        assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED  # type: ignore[attr-defined]
        with Client(server.target, timeout=10) as client:
            assert client.append("s", am.UserMessage.text("served", id="u1")) == 1
    finally:
        server.stop()
    reflecting = ServerProcess("--memory")
    try:
        assert "agentmsg.v1.SessionService" in _reflection_services(reflecting.target)
    finally:
        reflecting.stop()


@pytest.fixture
def token_server() -> Iterator[str]:
    """``agentmsg serve`` with ``AGENTMSG_TOKEN`` set (and no --token): its target."""
    env = {**os.environ, "AGENTMSG_TOKEN": "from-the-environment", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentmsg", "serve", "--memory", "--host", "127.0.0.1", "--port", "0", "--grace", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline()
        assert "(in memory, 1 token(s), 0 scoped, plaintext, " in ready, ready
        yield ready.split(" on ", 1)[1].split(" ", 1)[0]
    finally:
        proc.terminate()
        proc.wait(20)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_serve_takes_its_token_from_agentmsg_token(token_server: str) -> None:
    with Client(token_server, timeout=10) as anonymous, pytest.raises(am.UnauthenticatedError):
        anonymous.sessions()
    with Client(token_server, timeout=10, token="from-the-environment") as client:
        assert client.append("s", am.UserMessage.text("hi", id="u1")) == 1


# --- a non-Bearer authorization header ------------------------------------------------------------------------------


@pytest.mark.parametrize("header", ["Basic dXNlcjpwYXNz", "token secret", "secret"])
def test_an_authorization_header_that_is_not_bearer_is_unauthenticated(
    make_server: Callable[..., ServerThread], header: str
) -> None:
    server = make_server(tokens=["secret"])
    with grpc.insecure_channel(server.target) as channel:
        list_sessions = channel.unary_unary(
            "/agentmsg.v1.SessionService/ListSessions",
            request_serializer=session_service_pb2.ListSessionsRequest.SerializeToString,
            response_deserializer=session_service_pb2.ListSessionsResponse.FromString,
        )
        request = session_service_pb2.ListSessionsRequest()
        with pytest.raises(grpc.RpcError) as info:
            list_sessions(request, metadata=[("authorization", header)], timeout=10)
        assert list_sessions(request, metadata=[("authorization", "bearer secret")], timeout=10) is not None
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]
    assert "missing or wrong bearer token" in (info.value.details() or "")  # type: ignore[attr-defined]


# --- the client's mapping of statuses without agentmsg details ------------------------------------------------------


@pytest.fixture
def plain_server() -> Iterator[tuple[str, list[grpc.Status | tuple[grpc.StatusCode, str]]]]:
    """A gRPC server (not agentmsg's) whose ListMessages ends with the status queued in the returned list:
    what a proxy or another implementation may answer."""
    answers: list[grpc.Status | tuple[grpc.StatusCode, str]] = []

    def list_messages(request: bytes, context: grpc.ServicerContext) -> bytes:
        answer = answers.pop(0)
        if isinstance(answer, grpc.Status):
            context.abort_with_status(answer)
        code, details = answer
        context.abort(code, details)
        return b""

    handler = grpc.method_handlers_generic_handler(
        "agentmsg.v1.SessionService", {"ListMessages": grpc.unary_unary_rpc_method_handler(list_messages)}
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=[handler])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}", answers
    finally:
        server.stop(None)


def test_an_invalid_argument_without_details_is_a_validation_error(
    plain_server: tuple[str, list[grpc.Status | tuple[grpc.StatusCode, str]]],
) -> None:
    target, answers = plain_server
    answers.append((grpc.StatusCode.INVALID_ARGUMENT, "the proxy refused it"))
    with Client(target, timeout=10) as client, pytest.raises(am.ValidationError) as info:
        list(client.history("s"))
    assert type(info.value) is am.ValidationError
    assert str(info.value) == "the proxy refused it"
    assert [(v.field, v.rule_id, v.message) for v in info.value.violations] == [
        ("", "invalid_argument", "the proxy refused it")
    ]


def test_a_tool_arguments_error_from_the_server_is_a_validation_error_on_arguments(
    plain_server: tuple[str, list[grpc.Status | tuple[grpc.StatusCode, str]]],
) -> None:
    target, answers = plain_server
    error = am.ToolArgumentsError("c1", "add", "Expecting value", '{"a": ')
    answers.append(service_status.to_status(error))
    with Client(target, timeout=10) as client, pytest.raises(am.ValidationError) as info:
        list(client.history("s"))
    assert info.value.violations[0].field == "arguments"
    assert info.value.violations[0].rule_id == "json"
    assert "tool call 'c1' (add): arguments are not a JSON object" in info.value.violations[0].message
    assert service_status.code_for(error) == grpc.StatusCode.INVALID_ARGUMENT


# --- the demos ------------------------------------------------------------------------------------------------------


def test_agentmsg_demo_runs_offline() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentmsg", "demo"], capture_output=True, text=True, timeout=120, check=False, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


def test_make_run_mcp_runs_the_mcp_demo_end_to_end() -> None:
    if not (ROOT / "node_modules" / ".bin" / "mcp-server-everything").exists():
        if os.environ.get("CI"):
            pytest.fail("mcp-server-everything must be installed under CI (make deps)")
        pytest.skip("node_modules/.bin/mcp-server-everything is missing: run make deps")
    done = subprocess.run(
        [sys.executable, "-m", "agentmsg.mcp.demo"], capture_output=True, text=True, timeout=180, check=False, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = done.stdout
    for tool in ("get-sum", "get-tiny-image", "get-structured-content", "get-resource-links"):
        assert f"engine: everything.{tool} -> ok" in out
    assert "engine:     text 'The sum of 19 and 23 is 42.'" in out
    assert "the 30-second operation hit its 1.5 s deadline; the MCP server was told" in out
    assert "engine: session 'mcp-demo' holds 3 messages" in out
    assert "\ndone\n" in out


def test_an_error_outside_the_vocabulary_is_internal_under_its_own_name() -> None:
    """A private subclass of a vocabulary class goes out as that class; an agentmsg error the table does not
    map (a conversion error) is INTERNAL, reason its own name."""

    class _Private(am.ConflictError):
        pass

    assert service_status.code_for(_Private("x")) == grpc.StatusCode.ALREADY_EXISTS
    conversion = ConversionError("openai-chat", [])
    assert service_status.code_for(conversion) == grpc.StatusCode.INTERNAL
    reasons = {}
    for error in (_Private("x"), conversion):
        status = service_status.to_status(error)
        details = dict(status.trailing_metadata)["grpc-status-details-bin"]
        info = error_details_pb2.ErrorInfo()
        status_pb2.Status.FromString(details).details[0].Unpack(info)
        reasons[type(error).__name__] = info.reason
    assert reasons == {"_Private": "ConflictError", "ConversionError": "ConversionError"}


# --- port numbers (issue 33) ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "flag", "value"),
    [
        (["serve", "--memory", "--port", "70000"], "--port", "70000"),
        (["serve", "--memory", "--port", "-1"], "--port", "-1"),
        (["serve", "--memory", "--metrics-port", "65536"], "--metrics-port", "65536"),
        (["serve", "--memory", "--http", "70000"], "--http", "70000"),
        (["mcp", "serve", "--http", "99999"], "--http", "99999"),
    ],
)
def test_a_port_out_of_range_is_refused_in_one_line_with_status_2(argv: list[str], flag: str, value: str) -> None:
    # Before: 70000 was served on 4464 and -1 on 65535, silently.
    done = subprocess.run(
        [sys.executable, "-m", "agentmsg", *argv], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"agentmsg {argv[0] if argv[0] != 'mcp' else 'mcp serve'}: error: argument {flag}: {value} is not a port "
        "number (0 to 65535; 0 picks a free one)"
    ]


@pytest.mark.parametrize("field", ["port", "metrics_port", "http_port"])
def test_server_config_refuses_a_port_out_of_range_before_opening_anything(field: str, tmp_path: Path) -> None:
    db = tmp_path / "never.db"
    config = ServerConfig(db=str(db), **{field: 70000})  # type: ignore[arg-type]
    with pytest.raises(am.ValidationError) as info:
        asyncio.run(create_server(config))
    assert [(v.field, v.message) for v in info.value.violations] == [
        (field, "must be a port number from 0 to 65535, got 70000")
    ]
    assert not db.exists()


def test_tail_of_a_session_that_does_not_exist_says_so_as_the_clients_do(
    server: ServerThread, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tail", "--target", server.target, "never-written"]) == 2
    assert capsys.readouterr().err.strip() == "agentmsg: no session 'never-written' (it has no messages)"
