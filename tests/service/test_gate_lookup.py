"""The gated server's method lookup: every service registered through the gates is one generic handler with one
method table, found in gRPC's own order, and every call it finds passes the gates once (a method it does not know
passes none)."""

from __future__ import annotations

from typing import Any

import grpc

from agentmsg.service.grpc.calls import gated


class _Recording:
    """Stands in for grpc.aio.Server: keeps the generic handlers it is given."""

    def __init__(self) -> None:
        self.generic: list[grpc.GenericRpcHandler] = []

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        self.generic.extend(handlers)


class _Details(grpc.HandlerCallDetails):
    def __init__(self, method: str) -> None:
        self.method = method
        self.invocation_metadata = ()


class _Asked(grpc.GenericRpcHandler):
    """A generic handler without a method table: answers one method, counts how often it is asked."""

    def __init__(self, method: str, handler: Any) -> None:
        self.method, self.handler, self.asked = method, handler, 0

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> Any:
        self.asked += 1
        return self.handler if handler_call_details.method == self.method else None


def _unary(tag: str) -> Any:
    async def behavior(request: Any, context: Any) -> str:
        return tag

    return grpc.unary_unary_rpc_method_handler(behavior)


def test_services_share_one_table_found_in_grpcs_order_and_each_call_passes_the_gates_once() -> None:
    server = _Recording()
    admitted: list[str] = []

    def gate(details: Any, handler: Any, then: Any) -> Any:
        admitted.append(details.method)
        return then(details, handler)

    gate_server = gated(server, [gate])  # type: ignore[arg-type]
    first, clash, second = _unary("first"), _unary("clash"), _unary("second")
    gate_server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("a.A", {"M": first}),))
    gate_server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("a.A", {"M": clash, "N": second}),))
    asked = _Asked("/c.C/X", _unary("asked"))
    late = _unary("late")
    gate_server.add_generic_rpc_handlers((asked,))
    gate_server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("c.C", {"X": late, "Y": late}),))

    assert len(server.generic) == 1  # one generic handler for them all
    (lookup,) = server.generic
    assert lookup.service(_Details("/a.A/M")) is first  # the first service to claim a method keeps it
    assert lookup.service(_Details("/a.A/N")) is second
    assert asked.asked == 0  # found in the table: nothing else is asked
    # A handler without a table, and every one registered after it, is asked in its turn.
    assert lookup.service(_Details("/c.C/X")) is asked.handler
    assert lookup.service(_Details("/c.C/Y")) is late
    assert lookup.service(_Details("/no.Such/Method")) is None
    assert admitted == ["/a.A/M", "/a.A/N", "/c.C/X", "/c.C/Y"]
