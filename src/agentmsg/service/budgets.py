"""Budgets of concurrent calls: long-lived streams and unary calls, each per tenant and in total.

A *stream* is any call with a streaming side (``Subscribe``, ``ServeTools``, ``PublishStream``, health's
``Watch``, reflection): it may stay open for hours, mostly idle. A *unary* call is one request and one
answer (appends, reads, tool calls). They are counted apart, so subscribers never use up the room of the
calls that do work, and each tenant (with tokens configured: each bearer token) has its own share, so one
tenant cannot fill the server for everyone else:

==============================  =======  ==========================================================
``max_streams``                 4096     streams open on this server
``max_streams_per_tenant``      1024     streams one token holds open
``max_unary``                   1024     unary calls in progress on this server
``max_unary_per_tenant``        256      unary calls one token has in progress
==============================  =======  ==========================================================

0 turns a budget off. Without tokens there are no tenants: only the totals apply. Callers with no valid
token (health probes are the only ones let in) are one tenant. Health ``Check`` is never counted: a
probe is answered however busy the server is.

A call over a budget is refused before its request is decoded: ``RESOURCE_EXHAUSTED`` with an
``ErrorInfo`` (reason ``ResourceExhaustedError``, metadata ``budget`` and ``limit``) and a
``google.rpc.QuotaFailure`` naming the budget. A refused call is not counted; a call is counted from
the moment its handler starts until it ends, whichever way. Refusals are counted by budget
(:attr:`Ledger.refused`, ``agentmsg_calls_refused_total`` on ``/metrics``).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import grpc
from google.rpc import error_details_pb2

from agentmsg.errors import ResourceExhaustedError, ValidationError
from agentmsg.service import status
from agentmsg.service.access import Access, refusing_with

__all__ = [
    "BUDGET_NAMES",
    "DEFAULT_MAX_STREAMS",
    "DEFAULT_MAX_STREAMS_PER_TENANT",
    "DEFAULT_MAX_UNARY",
    "DEFAULT_MAX_UNARY_PER_TENANT",
    "HEALTH_CHECK",
    "BudgetGate",
    "Budgets",
    "Ledger",
]

HEALTH_CHECK = "/grpc.health.v1.Health/Check"
STREAMS = "streams"
UNARY = "unary"
_ANONYMOUS = b""  # the tenant of callers without a valid token (health probes)


BUDGET_NAMES = ("max_streams", "max_streams_per_tenant", "max_unary", "max_unary_per_tenant")
DEFAULT_MAX_STREAMS = 4096
DEFAULT_MAX_STREAMS_PER_TENANT = 1024
DEFAULT_MAX_UNARY = 1024
DEFAULT_MAX_UNARY_PER_TENANT = 256


@dataclass(frozen=True, slots=True)
class Budgets:
    """How many calls may be in progress at once (0: no limit); see the module docstring."""

    max_streams: int = DEFAULT_MAX_STREAMS
    max_streams_per_tenant: int = DEFAULT_MAX_STREAMS_PER_TENANT
    max_unary: int = DEFAULT_MAX_UNARY
    max_unary_per_tenant: int = DEFAULT_MAX_UNARY_PER_TENANT

    def __post_init__(self) -> None:
        for name in BUDGET_NAMES:
            if getattr(self, name) < 0:
                raise ValidationError.single(
                    name, "budget", f"must be 0 (no limit) or more, not {getattr(self, name)}", "budget"
                )


class Ledger:
    """The calls in progress, by kind (streams, unary) in total and per tenant."""

    def __init__(self, budgets: Budgets) -> None:
        self.budgets = budgets
        b = budgets
        self._by_kind = {
            STREAMS: (("max_streams", b.max_streams), ("max_streams_per_tenant", b.max_streams_per_tenant)),
            UNARY: (("max_unary", b.max_unary), ("max_unary_per_tenant", b.max_unary_per_tenant)),
        }
        self.total = {STREAMS: 0, UNARY: 0}
        self.tenants: dict[tuple[str, bytes], int] = {}
        # Calls refused so far, by the budget that refused them (every transport's: they share this ledger).
        self.refused = dict.fromkeys(BUDGET_NAMES, 0)

    def over(self, kind: str, tenant: bytes | None) -> tuple[str, int] | None:
        """The budget (its name and limit) one more call of this kind and tenant would break, or None.

        The caller refuses a call told a budget: it is counted in :attr:`refused` here, once for every transport.
        """
        (total_name, total), (each_name, each) = self._by_kind[kind]
        if tenant is not None and each and self.tenants.get((kind, tenant), 0) >= each:
            self.refused[each_name] += 1
            return each_name, each
        if total and self.total[kind] >= total:
            self.refused[total_name] += 1
            return total_name, total
        return None

    def take(self, kind: str, tenant: bytes | None) -> None:
        self.total[kind] += 1
        if tenant is not None:
            key = (kind, tenant)
            self.tenants[key] = self.tenants.get(key, 0) + 1

    def give(self, kind: str, tenant: bytes | None) -> None:
        self.total[kind] -= 1
        if tenant is not None:
            key = (kind, tenant)
            left = self.tenants[key] - 1
            if left:
                self.tenants[key] = left
            else:
                del self.tenants[key]


def exhausted(kind: str, budget: str, limit: int) -> grpc.Status:
    """The RESOURCE_EXHAUSTED status of a call refused by ``budget``: ErrorInfo and QuotaFailure name it."""
    error, extra, metadata = refusal(kind, budget, limit)
    return status.to_status(error, extra=extra, metadata=metadata)


def refusal(kind: str, budget: str, limit: int) -> tuple[ResourceExhaustedError, list[Any], dict[str, str]]:
    """A call refused by ``budget``, for any transport: the error, its extra detail (a ``QuotaFailure`` naming the
    budget) and its ErrorInfo metadata."""
    what = "long-lived streams" if kind == STREAMS else "unary calls"
    whose = "this token has" if budget.endswith("_per_tenant") else "the server has"
    flag = "--" + budget.replace("_", "-")
    message = f"{whose} {limit} {what} in progress, the most {budget} allows (raise {flag}, or wait)"
    quota = error_details_pb2.QuotaFailure(
        violations=[error_details_pb2.QuotaFailure.Violation(subject=budget, description=message)]
    )
    return ResourceExhaustedError(message), [quota], {"budget": budget, "limit": str(limit)}


def tenant_for(access: Access, metadata: Any) -> bytes | None:
    """The tenant a call counts against: its token's, the anonymous tenant without a valid token when tokens are
    required, or None (no tokens: only the totals count)."""
    tenant = access.tenant_of(metadata)
    if tenant is None and access.enabled:
        tenant = _ANONYMOUS
    return tenant


_COUNTED_MAX = 4096  # counted handlers kept (methods times tenants)


def _streaming(handler: grpc.RpcMethodHandler[Any, Any]) -> bool:
    return handler.unary_unary is None


class BudgetGate:
    """Counts every call but health ``Check`` against its budgets; refuses one over a budget undecoded (a
    :class:`~agentmsg.service.grpc.calls.Gate`: after the bearer token's, so a call it refuses is never counted)."""

    def __init__(self, access: Access, budgets: Budgets, ledger: Ledger | None = None) -> None:
        self._access = access
        self.ledger = ledger if ledger is not None else Ledger(budgets)
        # The counted handler of each (method, tenant), made once rather than per call: the handler it wraps
        # (the same object for every call of a method) and the wrapper. Tenants are valid tokens (a bounded
        # set); the map is emptied should it ever hold more than _COUNTED_MAX of them.
        self._counted_handlers: dict[tuple[str, bytes | None], tuple[Any, grpc.RpcMethodHandler[Any, Any]]] = {}

    def __call__(
        self,
        details: grpc.HandlerCallDetails,
        handler: grpc.RpcMethodHandler[Any, Any],
        then: Callable[[grpc.HandlerCallDetails, grpc.RpcMethodHandler[Any, Any]], grpc.RpcMethodHandler[Any, Any]],
    ) -> grpc.RpcMethodHandler[Any, Any]:
        method = details.method
        if method == HEALTH_CHECK:
            return then(details, handler)
        kind = STREAMS if _streaming(handler) else UNARY
        tenant = tenant_for(self._access, details.invocation_metadata) if self._access.enabled else None
        # Checked here, before the request is read: a call over its budget costs no decoding.
        over = self.ledger.over(kind, tenant)
        if over is not None:
            return refusing_with(handler, exhausted(kind, *over))
        inner = then(details, handler)
        key = (method, tenant)
        made = self._counted_handlers.get(key)
        if made is None or made[0] is not inner:
            if len(self._counted_handlers) >= _COUNTED_MAX:
                self._counted_handlers.clear()
            made = self._counted_handlers[key] = (inner, self._counted(inner, kind, tenant))
        return made[1]

    def _counted(
        self, handler: grpc.RpcMethodHandler[Any, Any], kind: str, tenant: bytes | None
    ) -> grpc.RpcMethodHandler[Any, Any]:
        """``handler`` holding its place in the ledger while it runs (checked again as it starts: calls
        admitted together may have filled the budget since)."""
        ledger = self.ledger
        kwargs: dict[str, Any] = {
            "request_deserializer": handler.request_deserializer,
            "response_serializer": handler.response_serializer,
        }

        async def admit(context: grpc.aio.ServicerContext) -> None:  # type: ignore[type-arg]
            over = ledger.over(kind, tenant)
            if over is not None:
                await context.abort_with_status(exhausted(kind, *over))
            ledger.take(kind, tenant)

        if handler.unary_unary is not None or handler.stream_unary is not None:
            behavior: Any = handler.unary_unary or handler.stream_unary

            async def single(request: Any, context: grpc.aio.ServicerContext) -> Any:  # type: ignore[type-arg]
                over = ledger.over(kind, tenant)  # (admit's check inline: one coroutine less on every unary call)
                if over is not None:
                    await context.abort_with_status(exhausted(kind, *over))
                ledger.take(kind, tenant)
                try:
                    return await behavior(request, context)
                finally:
                    ledger.give(kind, tenant)

            make = (
                grpc.unary_unary_rpc_method_handler
                if handler.unary_unary is not None
                else grpc.stream_unary_rpc_method_handler
            )
            return make(single, **kwargs)
        streams: Any = handler.unary_stream or handler.stream_stream
        many: Any
        if inspect.isasyncgenfunction(streams):

            async def many(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:  # type: ignore[type-arg]
                await admit(context)
                try:
                    async for item in streams(request, context):
                        yield item
                finally:
                    ledger.give(kind, tenant)

        else:  # a handler that writes its replies with context.write (health's Watch)

            async def many(request: Any, context: grpc.aio.ServicerContext) -> Any:  # type: ignore[type-arg]
                await admit(context)
                try:
                    return await streams(request, context)
                finally:
                    ledger.give(kind, tenant)

        make_stream = (
            grpc.unary_stream_rpc_method_handler
            if handler.unary_stream is not None
            else grpc.stream_stream_rpc_method_handler
        )
        return make_stream(many, **kwargs)
