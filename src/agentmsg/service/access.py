"""Who may do what: bearer tokens and their scopes.

A token is either *full* (every session, calling and serving tools) or
*scoped*. A scope lists what the token may touch, comma-separated:

==================  ==============================================================
``*``               everything (the same as a full token)
``PREFIX*``         the sessions whose id starts with ``PREFIX`` (a tenant: ``acme:*``)
``SESSION``         exactly that session
``tools:call``      list tools and call them (``ListTools``, ``CallTool``)
``tools:serve``     serve tools as a runner (``ServeTools``)
==================  ==============================================================

Session ids are letters, digits, ``.``, ``_``, ``:`` and ``-``, so ``*``,
``,`` and ``=`` never appear in one; items starting with ``tools:`` are the
capabilities (a typo there is an error, never a session). A scoped token has no tool access unless
its scope says so: tools are one namespace for the whole server (not per
tenant), so calling or serving them is a capability given to trusted tokens.

On the command line and in token files a token is ``TOKEN`` (full) or
``TOKEN=SCOPE`` (the scope follows the first ``=``, so such tokens cannot hold
``=``; ``secrets.token_urlsafe()`` tokens never do). A token file has one per
line; blank lines and ``#`` comments are ignored.

Every SessionService call names one session (``ListSessions`` excepted): the
server checks it against the caller's scope before touching the store and
refuses with PERMISSION_DENIED (``PermissionDeniedError``) — the same answer
whether the session exists or not. ``ListSessions`` lists only the sessions in
scope. Health is open to anyone; everything else, reflection included, needs a
valid token (UNAUTHENTICATED otherwise).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from agentmsg.errors import AgentMsgError, PermissionDeniedError, UnauthenticatedError, ValidationError
from agentmsg.service import status

__all__ = [
    "FULL",
    "Access",
    "BearerTokenGate",
    "Scope",
    "load_token_file",
    "named_session",
    "parse_token",
    "refusing",
    "refusing_with",
]

_SESSION = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_PREFIX = re.compile(r"^[A-Za-z0-9._:-]{1,127}\*$")


@dataclass(frozen=True, slots=True)
class Scope:
    """What a token may do: which sessions (exact ids and id prefixes), and tool calls and serving."""

    all_sessions: bool = False
    prefixes: tuple[str, ...] = ()
    sessions: frozenset[str] = frozenset()
    call_tools: bool = False
    serve_tools: bool = False

    @classmethod
    def parse(cls, text: str) -> Scope:
        """A scope from its text (see the module docstring); a bad item raises ValidationError naming it."""
        items = [item.strip() for item in text.split(",")]
        if not any(items):
            raise ValidationError.single("scope", "scope", "an empty scope (omit '=' for a full-access token)")
        every = call = serve = False
        prefixes: list[str] = []
        sessions: set[str] = set()
        for item in items:
            if item == "*":
                every = call = serve = True
            elif item == "tools:call":
                call = True
            elif item == "tools:serve":
                serve = True
            elif item.startswith("tools:"):
                raise ValidationError.single(
                    "scope", "scope", f"{item!r}: the tools capabilities are tools:call and tools:serve"
                )
            elif _PREFIX.match(item):
                prefixes.append(item[:-1])
            elif _SESSION.match(item):
                sessions.add(item)
            else:
                raise ValidationError.single(
                    "scope",
                    "scope",
                    f"{item!r} is not '*', 'PREFIX*', a session id, 'tools:call' or 'tools:serve'",
                )
        return cls(every, tuple(sorted(set(prefixes))), frozenset(sessions), call, serve)

    def allows(self, session_id: str) -> bool:
        """May the token use this session?"""
        return self.all_sessions or session_id in self.sessions or session_id.startswith(self.prefixes)

    def listing(self) -> list[str] | None:
        """The id prefixes to list sessions under (exact ids are prefixes too, filtered); None for all."""
        if self.all_sessions:
            return None
        return sorted({*self.prefixes, *self.sessions})


FULL = Scope(all_sessions=True, call_tools=True, serve_tools=True)


def parse_token(spec: str) -> tuple[str, Scope]:
    """``TOKEN`` (full access) or ``TOKEN=SCOPE``: the token and its scope."""
    token, sep, scope = spec.strip().partition("=")
    if not token:
        raise ValidationError.single("token", "required", "an empty token")
    return token, (Scope.parse(scope) if sep else FULL)


def load_token_file(path: str | Path) -> dict[str, Scope]:
    """Tokens from a file: one ``TOKEN`` or ``TOKEN=SCOPE`` per line; blank lines and ``#`` comments skipped."""
    grants: dict[str, Scope] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            token, scope = parse_token(text)
        except ValidationError as exc:
            raise ValidationError.single("token_file", "scope", f"{path}:{number}: {exc}") from None
        grants[token] = scope
    return grants


def _digest(token: bytes) -> bytes:
    return hashlib.sha256(token).digest()


class Access:
    """The tokens a server accepts and their scopes. With no tokens at all, every caller has full access."""

    def __init__(self, tokens: Iterable[str] = (), grants: Mapping[str, Scope] | None = None) -> None:
        # Looked up by the token's SHA-256, compared in constant time: the lookup reveals nothing of a token.
        self._scopes: dict[bytes, tuple[bytes, Scope]] = {}
        for token in tokens:
            self._add(token, FULL)
        for token, scope in (grants or {}).items():
            self._add(token, scope)

    def _add(self, token: str, scope: Scope) -> None:
        raw = token.encode()
        self._scopes[_digest(raw)] = (raw, scope)

    @property
    def enabled(self) -> bool:
        """True when tokens are required."""
        return bool(self._scopes)

    def scope_of(self, metadata: Iterable[tuple[str, str | bytes]] | None) -> Scope | None:
        """The scope of the bearer token in ``metadata``; None when it is missing or unknown."""
        if not self._scopes:
            return FULL
        found = self._lookup(metadata)
        return None if found is None else found[1]

    def tenant_of(self, metadata: Iterable[tuple[str, str | bytes]] | None) -> bytes | None:
        """Who is calling, for budgets: the SHA-256 of the caller's valid bearer token (a tenant is a token);
        None without tokens configured, or for a caller with no valid token."""
        if not self._scopes:
            return None
        found = self._lookup(metadata)
        return None if found is None else found[0]

    def _lookup(self, metadata: Iterable[tuple[str, str | bytes]] | None) -> tuple[bytes, Scope] | None:
        for key, value in metadata or ():
            if key == "authorization":
                text = value.decode() if isinstance(value, bytes) else value
                scheme, _, token = text.partition(" ")
                if scheme.lower() != "bearer":
                    return None
                given = token.strip().encode()
                digest = _digest(given)
                found = self._scopes.get(digest)
                if found is None or not hmac.compare_digest(found[0], given):
                    return None
                return digest, found[1]
        return None

    def require(self, metadata: Iterable[tuple[str, str | bytes]] | None) -> Scope:
        """The caller's scope, or UnauthenticatedError."""
        scope = self.scope_of(metadata)
        if scope is None:
            raise UnauthenticatedError("missing or wrong bearer token")
        return scope

    def check_session(self, metadata: Iterable[tuple[str, str | bytes]] | None, session_id: str) -> Scope:
        """The caller's scope if it includes ``session_id``; PermissionDeniedError otherwise.

        The refusal is the same whether the session exists or not: it is decided before the store is read.
        """
        scope = self.require(metadata)
        if not scope.allows(session_id):
            raise PermissionDeniedError(f"this token's scope does not include session {session_id!r}")
        return scope

    def check_tools(self, metadata: Iterable[tuple[str, str | bytes]] | None, *, serve: bool) -> Scope:
        """The caller's scope if it may call (or, with ``serve``, serve) tools; PermissionDeniedError otherwise."""
        scope = self.require(metadata)
        if not (scope.serve_tools if serve else scope.call_tools):
            what = "serve tools" if serve else "call or list tools"
            raise PermissionDeniedError(f"this token may not {what}")
        return scope


# --- authentication on the wire ------------------------------------------------------------

# Methods any caller may use without a token: load balancers and orchestrators probe health.
PUBLIC_METHODS = ("/grpc.health.v1.Health/",)
_SESSIONS = "/agentmsg.v1.SessionService/"
_LIST_SESSIONS = "/agentmsg.v1.SessionService/ListSessions"
_TOOL_METHODS = {
    "/agentmsg.v1.ToolService/ListTools": False,
    "/agentmsg.v1.ToolService/CallTool": False,
    "/agentmsg.v1.ToolService/ServeTools": True,
}
# Every SessionService request names its session in field 1 (ListSessions excepted, which names none).
_SESSION_FIELD = 1
# How many top-level fields the session id is looked for among before the request is left to the
# servicer's own check (a canonical request has two to six; a longer run is handed on undecided).
_PEEK_FIELDS = 16


class BearerTokenGate:
    """Refuses calls without ``authorization: Bearer <token>`` for one of the configured tokens, and calls
    their token's scope rules out, before a byte of the request is decoded (a
    :class:`~agentmsg.service.grpc.calls.Gate`: the server's first, when tokens are configured).

    A refused call's request bytes are never parsed or walked: the refusing handler's deserializer ignores
    them (the method's own one could spend seconds on a large request), and the gates after this one (the
    budgets) never see the call. What the metadata alone decides is decided here: the tool capabilities, a
    token that holds no session at all; for a token scoped to some sessions, a SessionService request naming a
    session out of scope among its first top-level fields is refused by reading that one string, not the
    request. The servicers check the decoded request again.
    """

    def __init__(self, access: Access) -> None:
        self._access = access

    def __call__(
        self,
        details: grpc.HandlerCallDetails,
        handler: grpc.RpcMethodHandler[Any, Any],
        then: Callable[[grpc.HandlerCallDetails, grpc.RpcMethodHandler[Any, Any]], grpc.RpcMethodHandler[Any, Any]],
    ) -> grpc.RpcMethodHandler[Any, Any]:
        method = details.method
        if method.startswith(PUBLIC_METHODS):
            return then(details, handler)
        scope = self._access.scope_of(details.invocation_metadata)
        if scope is None:
            return refusing(handler, UnauthenticatedError("missing or wrong bearer token"))
        if method in _TOOL_METHODS:
            serve = _TOOL_METHODS[method]
            if not (scope.serve_tools if serve else scope.call_tools):
                what = "serve tools" if serve else "call or list tools"
                return refusing(handler, PermissionDeniedError(f"this token may not {what}"))
        elif method.startswith(_SESSIONS) and method != _LIST_SESSIONS and not scope.all_sessions:
            if not scope.prefixes and not scope.sessions:
                return refusing(handler, PermissionDeniedError("this token's scope includes no session"))
            return _peeking(then(details, handler), scope)
        return then(details, handler)


# How long a refused client-streaming call waits for its first message (see refusing_with).
FIRST_MESSAGE_WAIT = 1.0


def _ignore(data: bytes) -> None:
    """The deserializer of a refused call: its request bytes are not looked at."""


def refusing(handler: grpc.RpcMethodHandler[Any, Any], error: AgentMsgError) -> grpc.RpcMethodHandler[Any, Any]:
    """A handler of ``handler``'s kind that ends every call with ``error``, never decoding its request."""
    rich = status.to_status(error)
    return refusing_with(handler, rich)


def refusing_with(handler: grpc.RpcMethodHandler[Any, Any], rich: grpc.Status) -> grpc.RpcMethodHandler[Any, Any]:
    """A handler of ``handler``'s kind that ends every call with the status ``rich``, never decoding its request."""

    async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:  # type: ignore[type-arg]
        await context.abort_with_status(rich)

    async def streaming(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:  # type: ignore[type-arg]
        await context.abort_with_status(rich)
        yield  # pragma: no cover - makes this an async generator

    async def after_first(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> Any:  # type: ignore[type-arg]
        # A client-streaming caller writes as soon as the call opens; a write that races this status fails on
        # the client with gRPC's own INTERNAL ("Internal error from Core"), hiding the refusal. Its first
        # message is taken (not decoded: the deserializer ignores it), for a second at most, before refusing.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(anext(aiter(requests)), FIRST_MESSAGE_WAIT)
        await context.abort_with_status(rich)

    async def after_first_streaming(
        requests: AsyncIterator[Any],
        context: grpc.aio.ServicerContext,  # type: ignore[type-arg]
    ) -> AsyncIterator[Any]:
        await after_first(requests, context)
        yield  # pragma: no cover - makes this an async generator

    kwargs: dict[str, Any] = {"request_deserializer": _ignore, "response_serializer": handler.response_serializer}
    if handler.unary_unary:
        return grpc.unary_unary_rpc_method_handler(unary, **kwargs)
    if handler.unary_stream:
        return grpc.unary_stream_rpc_method_handler(streaming, **kwargs)
    if handler.stream_unary:
        return grpc.stream_unary_rpc_method_handler(after_first, **kwargs)
    return grpc.stream_stream_rpc_method_handler(after_first_streaming, **kwargs)


# --- the session a request names, read without decoding it ------------------------------------


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise IndexError("varint too long")


def named_session(data: bytes) -> str | None:
    """The session id a SessionService request's bytes name (field 1; the last one, as a parser takes it),
    read from its top-level fields without decoding the rest; None when it is not found within the first
    ``_PEEK_FIELDS`` fields, or the bytes are not well formed there (the full decoder then says what it finds).
    """
    found: str | None = None
    pos, end = 0, len(data)
    try:
        for _ in range(_PEEK_FIELDS):
            if pos >= end:
                return found
            key, pos = _varint(data, pos)
            wire = key & 7
            if wire == 2:
                length, pos = _varint(data, pos)
                if pos + length > end:
                    return None
                if key >> 3 == _SESSION_FIELD:
                    found = data[pos : pos + length].decode("utf-8")
                pos += length
            elif wire == 0:
                _, pos = _varint(data, pos)
            elif wire in (1, 5):
                pos += 8 if wire == 1 else 4
            else:
                return None
    except (IndexError, UnicodeDecodeError):
        return None
    return found if pos >= end else None


class _OutOfScope:
    """A request that names a session its caller's scope does not include: refused undecoded."""

    __slots__ = ("error",)

    def __init__(self, session_id: str) -> None:
        self.error = PermissionDeniedError(f"this token's scope does not include session {session_id!r}")


def _peeking(handler: grpc.RpcMethodHandler[Any, Any], scope: Scope) -> grpc.RpcMethodHandler[Any, Any]:
    """``handler`` with each request first checked for the session it names, by that one field."""
    decode = handler.request_deserializer
    assert decode is not None

    def deserialize(data: bytes) -> Any:
        session_id = named_session(data)
        if session_id is not None and not scope.allows(session_id):
            return _OutOfScope(session_id)
        return decode(data)

    async def checked(requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for request in requests:
            if isinstance(request, _OutOfScope):
                raise request.error
            yield request

    kwargs: dict[str, Any] = {"request_deserializer": deserialize, "response_serializer": handler.response_serializer}
    if handler.unary_unary is not None:
        unary_unary: Any = handler.unary_unary

        async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:  # type: ignore[type-arg]
            if isinstance(request, _OutOfScope):
                await status.abort(context, request.error)
            return await unary_unary(request, context)

        return grpc.unary_unary_rpc_method_handler(unary, **kwargs)
    if handler.unary_stream is not None:
        unary_stream: Any = handler.unary_stream

        async def server_streaming(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:  # type: ignore[type-arg]
            if isinstance(request, _OutOfScope):
                await status.abort(context, request.error)
            async for item in unary_stream(request, context):
                yield item

        return grpc.unary_stream_rpc_method_handler(server_streaming, **kwargs)
    if handler.stream_unary is not None:
        stream_unary: Any = handler.stream_unary

        async def client_streaming(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> Any:  # type: ignore[type-arg]
            return await stream_unary(checked(requests), context)

        return grpc.stream_unary_rpc_method_handler(client_streaming, **kwargs)
    return handler
