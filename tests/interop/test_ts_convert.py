"""ConvertService from TypeScript: the Node client (gRPC) and the web client (Connect binary, Connect JSON, gRPC-Web
over fetch) get, for every format, the JSON text and the losses the Python converters give, read each payload back
into the messages the Python readers give, convert a session's context for a leaf, and are refused a strict
conversion with one violation per loss (sdk/typescript/interop/convert.ts)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conversions import RESPONSE_WRITERS, WRITERS, anonymous, expected, fixture
from tstools import PythonServer, built_sdk, run_ts

import agentmsg as am
from agentmsg import formats
from agentmsg.providers._common import ConversionReport
from agentmsg.service import Client, ServerConfig
from agentmsg.v1 import message_pb2

CLIENTS = ("grpc", "connect-binary", "connect-json", "grpc-web")


@pytest.fixture(scope="module")
def node() -> str:
    return built_sdk()


@pytest.fixture
def server(node: str) -> Iterator[PythonServer]:
    running = PythonServer(ServerConfig(db=None, http_port=0))
    try:
        yield running
    finally:
        running.close()


def _losses(items: list[dict[str, str]]) -> list[tuple[str, str, str]]:
    return [(x["path"], x["what"], x["reason"]) for x in items]


def test_typescript_clients_convert_as_the_python_functions(node: str, server: PythonServer, tmp_path: Path) -> None:
    messages = fixture()
    conversation = tmp_path / "conversation.bin"
    conversation.write_bytes(am.Conversation(messages).to_bytes())
    with Client(server.target, timeout=10) as client:
        client.append_many("ts-convert", messages)
        context = client.build_context("ts-convert", leaf="a2")
    assert server.running is not None
    base_url = f"http://127.0.0.1:{server.running.http_port}"
    report: dict[str, Any] = run_ts(node, "convert", server.target, base_url, str(conversation), "ts-convert", "a2")
    assert sorted(report) == sorted(CLIENTS)
    for client_name, got in report.items():
        for name in WRITERS:
            text, python = expected(name, messages)
            answer = got[name]
            assert answer["json"] == text, f"{name} through {client_name}"
            assert _losses(answer["losses"]) == [(x.path, x.what, x.reason) for x in python.losses], name
            assert answer["idMap"] == python.id_map, name
            read_report = ConversionReport()
            read = formats.read(name, json.loads(text), id_map=python.id_map, report=read_report)
            back = [message_pb2.Message.FromString(base64.b64decode(b)) for b in answer["read"]]
            assert anonymous(back) == anonymous(read), f"{name} read back through {client_name}"
            assert _losses(answer["readLosses"]) == [(x.path, x.what, x.reason) for x in read_report.losses]
        for name in RESPONSE_WRITERS:
            text, python = expected(name, messages[4:5], response=True)
            assert got[f"{name} response"]["json"] == text, f"{name} response through {client_name}"
            assert _losses(got[f"{name} response"]["losses"]) == [(x.path, x.what, x.reason) for x in python.losses]
        assert got["session"]["json"] == expected("anthropic", context)[0], client_name
        strict_report = ConversionReport()
        WRITERS["openai-chat"](messages, strict=False, report=strict_report)
        assert got["strict"] == [
            ["input.messages.messages" + loss.path, "conversion.strict"] for loss in strict_report.losses
        ], client_name
    # the comparisons reach losses and rewritten ids
    assert any(report["grpc"][name]["losses"] for name in WRITERS)
    assert any(report["grpc"][name]["idMap"] for name in WRITERS)
