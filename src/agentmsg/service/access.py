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

import hashlib
import hmac
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from agentmsg.errors import AgentMsgError, PermissionDeniedError, UnauthenticatedError, ValidationError
from agentmsg.service import status

__all__ = ["FULL", "Access", "BearerTokenInterceptor", "Scope", "load_token_file", "parse_token"]

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
        for key, value in metadata or ():
            if key == "authorization":
                text = value.decode() if isinstance(value, bytes) else value
                scheme, _, token = text.partition(" ")
                if scheme.lower() != "bearer":
                    return None
                given = token.strip().encode()
                found = self._scopes.get(_digest(given))
                if found is None or not hmac.compare_digest(found[0], given):
                    return None
                return found[1]
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


class BearerTokenInterceptor(grpc.aio.ServerInterceptor):
    """Refuses calls without ``authorization: Bearer <token>`` for one of the configured tokens.

    Only authentication happens here; what a token may touch (its scope) is checked by each RPC,
    which knows the session the request names.
    """

    def __init__(self, access: Access) -> None:
        self._access = access

    def _allowed(self, metadata: Sequence[tuple[str, str | bytes]] | None) -> bool:
        return self._access.scope_of(metadata) is not None

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        method = handler_call_details.method
        if method.startswith(PUBLIC_METHODS) or self._allowed(handler_call_details.invocation_metadata):
            return await continuation(handler_call_details)
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        return _refusing(handler, UnauthenticatedError("missing or wrong bearer token"))


def _refusing(handler: grpc.RpcMethodHandler[Any, Any], error: AgentMsgError) -> grpc.RpcMethodHandler[Any, Any]:
    rich = status.to_status(error)

    async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:  # type: ignore[type-arg]
        await context.abort_with_status(rich)

    async def streaming(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:  # type: ignore[type-arg]
        await context.abort_with_status(rich)
        yield  # pragma: no cover - makes this an async generator

    kwargs = {"request_deserializer": handler.request_deserializer, "response_serializer": handler.response_serializer}
    if handler.unary_unary:
        return grpc.unary_unary_rpc_method_handler(unary, **kwargs)
    if handler.unary_stream:
        return grpc.unary_stream_rpc_method_handler(streaming, **kwargs)
    if handler.stream_unary:
        return grpc.stream_unary_rpc_method_handler(unary, **kwargs)
    return grpc.stream_stream_rpc_method_handler(streaming, **kwargs)
