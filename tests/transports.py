"""One call, four transports: gRPC (grpcio's own stubs), and Connect JSON, Connect binary and gRPC-Web through
connectrpc's own Python client. Every failure becomes the same :class:`CallFailedError` (code, message, ErrorInfo
reason, BadRequest violations), so tests compare the transports' answers with ``==``."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import grpc
from connectrpc.code import Code
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from agentmsg.v1 import convert_service_pb2_grpc, session_service_pb2_grpc, tool_service_pb2_grpc
from agentmsg.v1.convert_service_connect import ConvertServiceClient
from agentmsg.v1.session_service_connect import SessionServiceClient
from agentmsg.v1.tool_service_connect import ToolServiceClient

TRANSPORTS = ("grpc", "connect-json", "connect-proto", "grpc-web")
MAX = 64 * 1024 * 1024

# RPC name -> the generated Connect clients' method name
_SNAKE = {
    "AppendMessage": "append_message",
    "AppendMessages": "append_messages",
    "ListMessages": "list_messages",
    "Subscribe": "subscribe",
    "PublishStream": "publish_stream",
    "ListSessions": "list_sessions",
    "BranchSession": "branch_session",
    "CompactSession": "compact_session",
    "BuildContext": "build_context",
    "DeleteSession": "delete_session",
    "ServeTools": "serve_tools",
    "ListTools": "list_tools",
    "CallTool": "call_tool",
    "ToProvider": "to_provider",
    "FromProvider": "from_provider",
}
_TOOL_RPCS = {"ServeTools", "ListTools", "CallTool"}
_CONVERT_RPCS = {"ToProvider", "FromProvider"}


@dataclass(frozen=True)
class CallFailedError(Exception):
    """A failed call as any transport reports it."""

    code: str  # the gRPC status code's name (CANCELLED for Connect's "canceled")
    message: str
    reason: str = ""
    violations: tuple[tuple[str, str, str], ...] = ()  # (field, reason, description)


def _from_details(details: list[tuple[str, bytes]]) -> tuple[str, tuple[tuple[str, str, str], ...]]:
    reason, violations = "", ()
    for type_name, value in details:
        if type_name == "google.rpc.ErrorInfo":
            reason = error_details_pb2.ErrorInfo.FromString(value).reason
        elif type_name == "google.rpc.BadRequest":
            bad = error_details_pb2.BadRequest.FromString(value)
            violations = tuple((v.field, v.reason, v.description) for v in bad.field_violations)
    return reason, violations


def _grpc_failure(error: grpc.aio.AioRpcError) -> CallFailedError:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    details = [(d.TypeName(), d.value) for d in status.details] if status is not None else []
    reason, violations = _from_details(details)
    return CallFailedError(error.code().name, error.details() or "", reason, violations)


def _connect_failure(error: ConnectError) -> CallFailedError:
    code = "CANCELLED" if error.code is Code.CANCELED else error.code.name
    reason, violations = _from_details([(d.type_name, d.message_bytes) for d in error.details])
    return CallFailedError(code, error.message, reason, violations)


class Transport:
    """Calls to one server over one transport (``grpc``: the gRPC port; the others: the HTTP port)."""

    def __init__(self, name: str, grpc_target: str, http_port: int | None) -> None:
        self.name = name
        self._stack = contextlib.AsyncExitStack()
        if name == "grpc":
            options = [("grpc.max_receive_message_length", MAX), ("grpc.max_send_message_length", MAX)]
            self._channel = grpc.aio.insecure_channel(grpc_target, options)
            self._stubs: dict[str, Any] = {
                "session": session_service_pb2_grpc.SessionServiceStub(self._channel),
                "tool": tool_service_pb2_grpc.ToolServiceStub(self._channel),
                "convert": convert_service_pb2_grpc.ConvertServiceStub(self._channel),
            }
            return
        assert http_port is not None
        address = f"http://127.0.0.1:{http_port}"
        codec = google_protobuf_json_codec() if name == "connect-json" else google_protobuf_binary_codec()
        protocol = ProtocolType.GRPC_WEB if name == "grpc-web" else ProtocolType.CONNECT
        self._stubs = {
            "session": SessionServiceClient(address, codec=codec, protocol=protocol, send_compression=None),
            "tool": ToolServiceClient(address, codec=codec, protocol=protocol, send_compression=None),
            "convert": ConvertServiceClient(address, codec=codec, protocol=protocol, send_compression=None),
        }

    async def __aenter__(self) -> Transport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.name == "grpc":
            await self._channel.close()
        else:
            for stub in self._stubs.values():
                await stub.close()

    def _stub(self, rpc: str) -> Any:
        if rpc in _CONVERT_RPCS:
            return self._stubs["convert"]
        return self._stubs["tool" if rpc in _TOOL_RPCS else "session"]

    @staticmethod
    def _metadata(token: str | None) -> dict[str, str]:
        return {"authorization": f"Bearer {token}"} if token else {}

    async def unary(
        self, rpc: str, request: Any, *, token: str | None = None, timeout: float = 30, get: bool = False
    ) -> Any:
        """The response, or a :class:`CallFailedError` raised. ``get``: over Connect, a GET (read-only RPCs)."""
        headers = self._metadata(token)
        try:
            if self.name == "grpc":
                return await getattr(self._stub(rpc), rpc)(request, timeout=timeout, metadata=tuple(headers.items()))
            method = getattr(self._stub(rpc), _SNAKE[rpc])
            extra: Mapping[str, Any] = {"use_get": True} if get else {}
            return await method(request, headers=headers, timeout_ms=int(timeout * 1000), **extra)
        except grpc.aio.AioRpcError as exc:
            raise _grpc_failure(exc) from None
        except ConnectError as exc:
            raise _connect_failure(exc) from None

    async def unary_with_headers(self, rpc: str, request: Any, headers: dict[str, str], *, timeout: float = 30) -> Any:
        """A unary call over Connect or gRPC-Web with these request headers (a ``traceparent``, say)."""
        try:
            return await getattr(self._stub(rpc), _SNAKE[rpc])(request, headers=headers, timeout_ms=int(timeout * 1000))
        except ConnectError as exc:
            raise _connect_failure(exc) from None

    async def stream(
        self, rpc: str, request: Any, *, token: str | None = None, timeout: float = 30
    ) -> AsyncIterator[Any]:
        """A server stream's responses; its failure as a :class:`CallFailedError`."""
        headers = self._metadata(token)
        try:
            if self.name == "grpc":
                call = getattr(self._stub(rpc), rpc)(request, timeout=timeout, metadata=tuple(headers.items()))
                try:
                    async for response in call:
                        yield response
                finally:
                    call.cancel()
                return
            method = getattr(self._stub(rpc), _SNAKE[rpc])
            async for response in method(request, headers=headers, timeout_ms=int(timeout * 1000)):
                yield response
        except grpc.aio.AioRpcError as exc:
            raise _grpc_failure(exc) from None
        except ConnectError as exc:
            raise _connect_failure(exc) from None

    async def client_stream(self, rpc: str, requests: list[Any], *, timeout: float = 10) -> Any:
        """A client-streaming call (PublishStream): its response, or a :class:`CallFailedError`."""

        async def each() -> AsyncIterator[Any]:
            for request in requests:
                yield request

        try:
            if self.name == "grpc":
                return await getattr(self._stub(rpc), rpc)(each(), timeout=timeout)
            return await getattr(self._stub(rpc), _SNAKE[rpc])(each(), timeout_ms=int(timeout * 1000))
        except grpc.aio.AioRpcError as exc:
            raise _grpc_failure(exc) from None
        except ConnectError as exc:
            raise _connect_failure(exc) from None
