"""``ConvertService`` gives what the Python converters give, on every transport (gRPC, Connect JSON, Connect binary,
gRPC-Web): the same JSON text byte for byte, the same losses, the same rewritten tool-call ids; reading a payload
back gives the Python readers' messages; bad input and scopes answer alike everywhere."""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.request
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from conftest import ServerThread
from conversions import (
    FORMAT,
    READERS,
    RESPONSE_WRITERS,
    WRITERS,
    C,
    anonymous,
    dumps,
    expected,
    fixture,
    losses,
    to_provider,
)
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from transports import TRANSPORTS, CallFailedError, Transport

import agentmsg as am
from agentmsg.providers import anthropic, openai_chat
from agentmsg.providers._common import ConversionReport
from agentmsg.service import AsyncClient, Client
from agentmsg.service.access import Scope
from agentmsg.ui import ag_ui


@pytest.fixture(scope="module")
def server() -> Any:
    running = ServerThread(am.service.ServerConfig(db=None, http_port=0))
    yield running
    running.stop()


def over_every_transport(server: ServerThread, script: Callable[[Transport], Any]) -> dict[str, Any]:
    async def run(name: str) -> Any:
        async with Transport(name, server.target, server.running.http_port) as transport:
            return await script(transport)

    return {name: asyncio.run(run(name)) for name in TRANSPORTS}


def test_to_provider_gives_the_python_converters_json_and_losses_on_every_transport(server: ServerThread) -> None:
    messages = fixture()
    cases = [(name, False) for name in WRITERS] + [(name, True) for name in RESPONSE_WRITERS]

    async def script(transport: Transport) -> list[Any]:
        out = []
        for name, response in cases:
            given = messages[4:5] if response else messages
            request = to_provider(name, given, response=response)
            # reads: over Connect, also as a GET (NO_SIDE_EFFECTS)
            out.append(await transport.unary("ToProvider", request, get=transport.name != "grpc"))
        return out

    answers = over_every_transport(server, script)
    for transport, replies in answers.items():
        for (name, response), reply in zip(cases, replies, strict=True):
            text, report = expected(name, messages[4:5] if response else messages, response=response)
            where = f"{name}{' response' if response else ''} over {transport}"
            assert reply.json == text, where
            assert losses(reply) == report.losses, where
            assert dict(reply.id_map) == report.id_map, where
    # the fixture reaches losses and rewritten ids, so the equalities compare something
    grpc_replies = answers["grpc"]
    assert sum(len(r.losses) for r in grpc_replies) > 20
    assert any(r.id_map for r in grpc_replies)
    assert any("é" in r.json for r in grpc_replies)  # non-ASCII travels as it is


def test_from_provider_reads_as_the_python_readers_and_round_trips(server: ServerThread) -> None:
    messages = fixture()
    payloads = {name: expected(name, messages)[0] for name in WRITERS}

    async def script(transport: Transport) -> list[Any]:
        out = []
        for name, text in payloads.items():
            out.append(await transport.unary("FromProvider", C.FromProviderRequest(format=FORMAT[name], json=text)))
        # a response object, and tool-call ids restored through the id map ToProvider gave
        written = await transport.unary("ToProvider", to_provider("anthropic", messages))
        request = C.FromProviderRequest(format=FORMAT["anthropic"], json=written.json, id_map=written.id_map)
        out.append(await transport.unary("FromProvider", request))
        response = RESPONSE_WRITERS["gemini"](messages[4], report=ConversionReport())
        out.append(
            await transport.unary(
                "FromProvider", C.FromProviderRequest(format=FORMAT["gemini"], json=dumps(response), response=True)
            )
        )
        return out

    answers = over_every_transport(server, script)
    for transport, replies in answers.items():
        for (name, text), reply in zip(payloads.items(), replies[: len(payloads)], strict=True):
            report = ConversionReport()
            data = json.loads(text)
            read = READERS[name](data, report=report) if name in ("ag-ui", "ai-sdk") else READERS[name](data)
            assert anonymous(reply.messages) == anonymous(read), f"{name} over {transport}"
            assert losses(reply) == report.losses, f"{name} over {transport}"
        restored = replies[len(payloads)]
        ids = [c.tool_call.id for m in restored.messages if m.HasField("assistant") for c in m.assistant.content]
        assert "call.odd/1 é" in ids, transport
        (answer,) = replies[-1].messages
        assert answer.assistant.content[-1].text.text.startswith("Paris is 18°C"), transport
    # formats that keep ids and timestamps give the messages back whole
    assert [am.message_from_proto(m) for m in answers["grpc"][list(payloads).index("seed1")].messages] == messages


def test_a_session_context_for_a_leaf_converts_as_its_build_context(server: ServerThread) -> None:
    messages = fixture()
    with Client(server.target, timeout=10) as client:
        client.append_many("convert-tree", messages)
        # a branch from the first answer: its context is the path to the branch, not the last turn
        branch = client.branch("convert-tree", "a1", "Looked at Paris only.", entry_id="b1")
        client.append(
            "convert-tree", am.UserMessage.text("and Rome?", id="u9", timestamp=1_790_000_020.0, parent_id="b1")
        )
        leaves = {"": client.build_context("convert-tree"), "t3": client.build_context("convert-tree", leaf="t3")}
    assert [m.id for m in leaves[""]][-2:] == ["b1", "u9"]
    assert [m.id for m in leaves["t3"]] == [m.id for m in messages]
    assert branch.message.id == "b1"

    async def script(transport: Transport) -> list[Any]:
        out = []
        for leaf in leaves:
            for name in ("anthropic", "openai-responses"):
                request = C.ToProviderRequest(format=FORMAT[name])
                request.input.session.session_id = "convert-tree"
                request.input.session.leaf_entry_id = leaf
                out.append(await transport.unary("ToProvider", request))
        return out

    for transport, replies in over_every_transport(server, script).items():
        pairs = [(leaf, name) for leaf in leaves for name in ("anthropic", "openai-responses")]
        for (leaf, name), reply in zip(pairs, replies, strict=True):
            text, report = expected(name, leaves[leaf])
            assert reply.json == text, f"{name} for leaf {leaf!r} over {transport}"
            assert losses(reply) == report.losses


async def _refusals(transport: Transport) -> list[Any]:
    out: list[Any] = []
    messages = fixture()

    async def outcome(rpc: str, request: Any) -> Any:
        try:
            return await transport.unary(rpc, request)
        except CallFailedError as failure:
            return failure

    out.append(await outcome("ToProvider", to_provider("openai-chat", messages, strict=True)))
    out.append(await outcome("ToProvider", C.ToProviderRequest(format=99, input=to_provider("gemini", messages).input)))
    out.append(await outcome("ToProvider", C.ToProviderRequest(input=to_provider("gemini", messages).input)))
    out.append(await outcome("ToProvider", C.ToProviderRequest(format=FORMAT["gemini"])))  # no input
    out.append(await outcome("ToProvider", to_provider("adaline", messages, response=True)))
    out.append(await outcome("ToProvider", to_provider("anthropic", messages, response=True)))  # six messages
    broken = messages[1].pb
    broken.ClearField("id")
    bad = C.ToProviderRequest(format=FORMAT["anthropic"])
    bad.input.messages.messages.extend([messages[0].pb, broken])
    out.append(await outcome("ToProvider", bad))
    missing = C.ToProviderRequest(format=FORMAT["anthropic"])
    missing.input.session.session_id = "no-such-session"
    out.append(await outcome("ToProvider", missing))
    out.append(await outcome("FromProvider", C.FromProviderRequest(format=FORMAT["anthropic"], json='{"messages": [')))
    out.append(await outcome("FromProvider", C.FromProviderRequest(format=FORMAT["anthropic"], json="[NaN]")))
    out.append(await outcome("FromProvider", C.FromProviderRequest(format=FORMAT["anthropic"], json="")))
    wrong = '{"messages": [{"role": "user", "content": 5}]}'
    out.append(await outcome("FromProvider", C.FromProviderRequest(format=FORMAT["anthropic"], json=wrong)))
    out.append(
        await outcome("FromProvider", C.FromProviderRequest(format=FORMAT["adaline"], json="[]", id_map={"a": "b"}))
    )
    out.append(
        await outcome(
            "FromProvider", C.FromProviderRequest(format=FORMAT["gemini"], json="[" * 100_000 + "]" * 100_000)
        )
    )
    return out


def test_bad_input_is_refused_alike_on_every_transport_naming_the_field(server: ServerThread) -> None:
    answers = over_every_transport(server, _refusals)
    for name in TRANSPORTS[1:]:
        assert answers[name] == answers["grpc"], name
    (strict, unknown, unset, no_input, no_response, many, invalid, missing, cut, nan, empty, wrong, id_map, deep) = (
        answers["grpc"]
    )
    assert all(isinstance(a, CallFailedError) for a in answers["grpc"])
    assert (strict.code, strict.reason) == ("INVALID_ARGUMENT", "ValidationError")
    # one violation per loss, each naming where in the request it is
    report = ConversionReport()
    openai_chat.to_openai_chat(fixture(), report=report)
    assert [(v[0], v[1]) for v in strict.violations] == [
        ("input.messages.messages" + loss.path, "conversion.strict") for loss in report.losses
    ]
    assert unknown.violations[0][:2] == ("format", "enum.defined_only")
    assert unset.violations[0][:2] == ("format", "enum.not_in")
    assert no_input.violations[0][0] == "input"
    assert no_response.violations[0][:2] == ("response", "format.response")
    assert many.violations[0][:2] == ("input.messages.messages", "format.response")
    assert invalid.violations[0][0] == "input.messages.messages[1].id"
    assert missing.code == "NOT_FOUND"
    for failure in (cut, nan, deep):
        assert failure.violations[0][:2] == ("json", "json"), failure
    assert empty.violations[0][:2] == ("json", "string.min_len")
    assert wrong.violations[0][0].startswith("messages[0].content")
    assert id_map.violations[0][:2] == ("id_map", "format.id_map")


@pytest.fixture(scope="module")
def scoped_server() -> Any:
    grants = {"acme-token": Scope.parse("acme:*"), "full-token": Scope.parse("*")}
    running = ServerThread(am.service.ServerConfig(db=None, http_port=0, grants=grants))
    with Client(running.target, token="full-token", timeout=10) as client:
        client.append_many("acme:one", fixture()[:2])
        client.append_many("globex:one", fixture()[:2])
    yield running
    running.stop()


async def _access(transport: Transport) -> list[Any]:
    out: list[Any] = []

    def of(session: str) -> Any:
        request = C.ToProviderRequest(format=FORMAT["openai-chat"])
        request.input.session.session_id = session
        return request

    calls = [
        ("ToProvider", to_provider("openai-chat", fixture()[:2]), None),
        ("ToProvider", to_provider("openai-chat", fixture()[:2]), "wrong"),
        ("ToProvider", to_provider("openai-chat", fixture()[:2]), "acme-token"),  # any valid token converts messages
        ("ToProvider", of("acme:one"), "acme-token"),
        ("ToProvider", of("globex:one"), "acme-token"),
        ("ToProvider", of("globex:one"), "full-token"),
        ("FromProvider", C.FromProviderRequest(format=FORMAT["openai-chat"], json="[]"), None),
        ("FromProvider", C.FromProviderRequest(format=FORMAT["openai-chat"], json="[]"), "acme-token"),
    ]
    for rpc, request, token in calls:
        try:
            out.append(await transport.unary(rpc, request, token=token))
        except CallFailedError as failure:
            out.append(failure.code)
    return out


def test_conversions_need_a_token_and_a_session_context_needs_its_scope(scoped_server: ServerThread) -> None:
    answers = over_every_transport(scoped_server, _access)
    for name in TRANSPORTS[1:]:
        assert answers[name] == answers["grpc"], name
    codes = [a if isinstance(a, str) else "OK" for a in answers["grpc"]]
    assert codes == [
        "UNAUTHENTICATED",
        "UNAUTHENTICATED",
        "OK",
        "OK",
        "PERMISSION_DENIED",
        "OK",
        "UNAUTHENTICATED",
        "OK",
    ]


def test_the_python_clients_convert_as_the_functions_do(server: ServerThread) -> None:
    messages = fixture()
    text, report = expected("anthropic", messages)
    with Client(server.target, timeout=10) as client:
        converted = client.convert_to("anthropic", messages)
        assert (converted.json, converted.report) == (text, report)
        assert converted.payload == json.loads(text)
        back = client.convert_from("anthropic", converted.payload, id_map=converted.report.id_map)
        assert anonymous(back.messages) == anonymous(anthropic.from_anthropic(json.loads(text), id_map=report.id_map))
        client.append_many("client-context", messages)
        from_session = client.convert_to("gemini", session_id="client-context", leaf="a2")
        assert from_session.json == expected("gemini", client.build_context("client-context", leaf="a2"))[0]
        with pytest.raises(am.ValidationError) as refused:
            client.convert_to("openai-chat", messages, strict=True)
        assert refused.value.violations[0].rule_id == "conversion.strict"
        with pytest.raises(am.ValidationError) as unknown:
            client.convert_to("klingon", messages)
        assert unknown.value.violations[0].field == "format"
        with pytest.raises(am.ValidationError):
            client.convert_to("anthropic", messages, session_id="client-context")  # both inputs

    async def run() -> tuple[Any, Any]:
        async with AsyncClient(server.target, timeout=10) as client:
            converted = await client.convert_to("ag-ui", messages)
            read = await client.convert_from("ag-ui", converted.json)
            return converted, read

    converted, read = asyncio.run(run())
    ag_text, ag_report = expected("ag-ui", messages)
    assert (converted.json, converted.report.losses) == (ag_text, ag_report.losses)
    reader_report = ConversionReport()
    assert anonymous(read.messages) == anonymous(ag_ui.from_ag_ui(json.loads(ag_text), report=reader_report))
    assert read.report.losses == reader_report.losses


def test_health_and_reflection_name_the_conversion_service(server: ServerThread) -> None:
    """Health answers SERVING for it on both transports; reflection lists it and describes its file (grpcurl
    and buf curl can call it as they call the others)."""
    with grpc.insecure_channel(server.target) as channel:
        check = health_pb2.HealthCheckRequest(service="agentmsg.v1.ConvertService")
        assert (
            health_pb2_grpc.HealthStub(channel).Check(check, timeout=5).status == health_pb2.HealthCheckResponse.SERVING
        )
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        requests = [
            reflection_pb2.ServerReflectionRequest(list_services=""),
            reflection_pb2.ServerReflectionRequest(file_containing_symbol="agentmsg.v1.ConvertService"),
        ]
        listed, described = reflection.ServerReflectionInfo(iter(requests), timeout=5)
    assert "agentmsg.v1.ConvertService" in {s.name for s in listed.list_services_response.service}
    files = [
        descriptor_pb2.FileDescriptorProto.FromString(raw)
        for raw in described.file_descriptor_response.file_descriptor_proto
    ]
    (convert_file,) = [f for f in files if f.name == "agentmsg/v1/convert_service.proto"]
    assert [m.name for m in convert_file.service[0].method] == ["ToProvider", "FromProvider"]
    url = f"http://127.0.0.1:{server.running.http_port}/grpc.health.v1.Health/Check"
    request = urllib.request.Request(
        url, data=b'{"service":"agentmsg.v1.ConvertService"}', headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=5) as answer:
        assert json.loads(answer.read()) == {"status": "SERVING"}


def test_a_server_without_the_langchain_extra_names_the_format_and_the_extra(
    server: ServerThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    import langchain_core

    # `from langchain_core import messages` fails, as where langchain-core is not installed
    monkeypatch.delattr(langchain_core, "messages")
    monkeypatch.setitem(sys.modules, "langchain_core.messages", None)

    async def script(transport: Transport) -> list[CallFailedError]:
        out = []
        for rpc, request in (
            ("ToProvider", to_provider("langchain", fixture()[:2])),
            ("FromProvider", C.FromProviderRequest(format=FORMAT["langchain"], json="[]")),
        ):
            with pytest.raises(CallFailedError) as refused:
                await transport.unary(rpc, request)
            out.append(refused.value)
        return out

    answers = over_every_transport(server, script)
    for name in TRANSPORTS[1:]:
        assert answers[name] == answers["grpc"], name
    for failure in answers["grpc"]:
        assert failure.code == "INVALID_ARGUMENT"
        assert failure.violations[0][:2] == ("format", "format.extra")
        assert "pip install 'agentmsg[langchain]'" in failure.violations[0][2]
