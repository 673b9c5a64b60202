"""Observability: OpenTelemetry traces across engine, server and runner; Prometheus metrics of the server.

Everything here needs the optional extra ``agentmsg[otel]`` (opentelemetry-api,
-sdk, the OTLP exporters and prometheus-client); this module is the one place
that imports them. Without the extra, or without configuration, every hook is a
no-op and no handler or stub is wrapped: nothing changes.

**Traces.** :func:`configure_tracing` installs a tracer provider from the
standard environment (``OTEL_TRACES_EXPORTER``, ``OTEL_EXPORTER_OTLP_ENDPOINT``,
``OTEL_SERVICE_NAME``, ``OTEL_TRACES_SAMPLER``, ...) unless the application set
one itself; tracing is on when either is the case. The server, the clients and
the tool runner then carry W3C trace context (``traceparent``) in gRPC metadata,
and the server hands it to the runner inside ``RunToolCall.trace_context`` (a
call reaches a runner inside its ``ServeTools`` stream). So an engine's
``call_tool`` is one trace: the engine's CLIENT span, the server's SERVER span
(and, in a cluster, the forwarding node's CLIENT span and the owning node's
SERVER span), and the runner's ``execute_tool {name}`` span. Spans carry the
GenAI conventions' attributes where they apply: ``gen_ai.operation.name``
``execute_tool``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
``gen_ai.conversation.id`` (the session id), ``gen_ai.provider.name`` and
``gen_ai.response.model`` from an appended assistant message's provenance.
Message content is recorded only when ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``
is ``true`` (or ``span_only`` / ``span_and_event``): then appended messages go
on the span as ``gen_ai.input.messages`` / ``gen_ai.output.messages`` in the
conventions' JSON (:func:`agentmsg.providers.otel_genai.to_otel_messages`), and
tool spans get ``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``.

**Metrics.** :class:`ServerTelemetry` keeps the server's Prometheus registry
(see docs/observability.md for the names) and serves it at
``/metrics`` (``agentmsg serve --metrics-port PORT``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Protocol, TypeVar, cast

import grpc

from agentmsg.content import ToolCallContent, ToolResultContent
from agentmsg.errors import ValidationError
from agentmsg.messages import message_from_proto
from agentmsg.providers.otel_genai import to_otel_messages, to_otel_parts
from agentmsg.service.frames import ReceivedAppend
from agentmsg.v1 import content_pb2, message_pb2, session_service_pb2, tool_service_pb2

try:  # the one import guard of the optional extra
    import prometheus_client
    from opentelemetry import baggage, propagate, trace
    from opentelemetry import context as otel_context
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
    from prometheus_client.registry import Collector
except ImportError:  # pragma: no cover - exercised only without the extra
    AVAILABLE = False
else:
    AVAILABLE = True

__all__ = [
    "AVAILABLE",
    "CAPTURE_ENV",
    "ServerTelemetry",
    "configure_tracing",
    "content_capture",
    "flush_tracing",
    "inject_context",
    "instrument_call",
    "instrument_stub",
    "tool_execution",
    "tracing_enabled",
]

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_CAPTURE_ON = {"true", "1", "span_only", "span_and_event"}
_INSTRUMENTED = "/agentmsg.v1."  # health checks and reflection are not traced
_CLIENT_SPANS = "/agentmsg.v1.ToolService/"  # unary RPCs the clients make CLIENT spans for
_AFTER_RESPONSE = "/agentmsg.v1.SessionService/"  # unary-response RPCs whose spans are recorded after the response
_TRACER = "agentmsg"
# Answered session RPCs are recorded in batches: this many at once, or this long after the first is pending.
_RECORD_BATCH = 16
_RECORD_DELAY = 0.05
_SCRAPE_WAIT = 2.0  # how long a scrape waits for the event loop to record what is pending
_CONFIGURED: list[bool] = []  # set once: whether this process traces
_TRACERS: list[Any] = []
_CAPTURE: list[bool] = []
_LOG = logging.getLogger(__name__)
S = TypeVar("S")
C = TypeVar("C")


def content_capture() -> bool:
    """Whether message content may be recorded on spans (off unless the user opts in).

    Read once per process, when tracing is set up (it is asked on every call).
    """
    if not _CAPTURE:
        _CAPTURE.append(os.environ.get(CAPTURE_ENV, "").strip().lower() in _CAPTURE_ON)
    return _CAPTURE[0]


def configure_tracing(service_name: str = "agentmsg") -> bool:
    """Set up tracing from the ``OTEL_*`` environment once per process; whether this process traces.

    An application that installed its own tracer provider keeps it (and traces).
    Otherwise a provider is installed only when ``OTEL_TRACES_EXPORTER`` names
    exporters (not ``none``) or an OTLP endpoint is set; ``OTEL_SDK_DISABLED=true``
    turns tracing off. ``service_name`` is the default ``service.name`` when
    neither ``OTEL_SERVICE_NAME`` nor ``OTEL_RESOURCE_ATTRIBUTES`` names one.
    """
    if _CONFIGURED:
        return _CONFIGURED[0]
    _CONFIGURED.append(_configure(service_name))
    return _CONFIGURED[0]


def _configure(service_name: str) -> bool:
    if not AVAILABLE or os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return True  # the application configured tracing itself
    names = os.environ.get("OTEL_TRACES_EXPORTER")
    endpoint = any(k in os.environ for k in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
    if names is None and not endpoint:
        return False
    exporters = [n.strip() for n in (names or "otlp").split(",") if n.strip() and n.strip() != "none"]
    if not exporters:
        return False
    attributes = {}
    if "OTEL_SERVICE_NAME" not in os.environ and "service.name=" not in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", ""):
        attributes["service.name"] = service_name
    provider = TracerProvider(resource=Resource.create(attributes))
    for name in exporters:
        found = list(entry_points(group="opentelemetry_traces_exporter", name=name))
        if not found:
            raise ValidationError.single(
                "OTEL_TRACES_EXPORTER", "exporter", f"no span exporter named {name!r} is installed"
            )
        provider.add_span_processor(BatchSpanProcessor(found[0].load()()))
    trace.set_tracer_provider(provider)
    return True


def tracing_enabled() -> bool:
    """Whether this process traces (after :func:`configure_tracing`)."""
    return bool(_CONFIGURED and _CONFIGURED[0])


def _tracer() -> Any:
    """agentmsg's tracer (made once: a provider's ``get_tracer`` builds a new one per call)."""
    if not _TRACERS:
        _TRACERS.append(trace.get_tracer(_TRACER))
    return _TRACERS[0]


def inject_context(carrier: Any) -> None:
    """Write the current trace context (``traceparent``...) into a str->str map; nothing when not tracing."""
    if tracing_enabled():
        propagate.inject(carrier)


# --- attributes -----------------------------------------------------------------------------


@functools.cache
def _rpc_attributes(method: str) -> dict[str, Any]:
    """The RPC's attributes (cached per method: never modify the returned dict)."""
    service, _, name = method.lstrip("/").partition("/")
    return {"rpc.system": "grpc", "rpc.service": service, "rpc.method": name}


def _tool_attributes(call: content_pb2.ToolCallContent) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.id,
        "gen_ai.tool.type": "function",
    }


def _message_attributes(attributes: dict[str, Any], messages: Sequence[message_pb2.Message]) -> None:
    """Provider and model from the provenance of assistant messages; their content only when captured."""
    for message in messages:
        if message.WhichOneof("role") == "assistant" and message.assistant.HasField("provenance"):
            provenance = message.assistant.provenance
            if provenance.provider:
                attributes["gen_ai.provider.name"] = provenance.provider
            if provenance.model:
                attributes["gen_ai.response.model"] = provenance.model
            if provenance.response_id:
                attributes["gen_ai.response.id"] = provenance.response_id
    if content_capture() and messages:
        wrapped = [message_from_proto(m) for m in messages]
        outputs = [m for m, pb in zip(wrapped, messages, strict=True) if pb.WhichOneof("role") == "assistant"]
        inputs = [m for m, pb in zip(wrapped, messages, strict=True) if pb.WhichOneof("role") != "assistant"]
        if inputs:
            attributes["gen_ai.input.messages"] = json.dumps(to_otel_messages(inputs), ensure_ascii=False)
        if outputs:
            attributes["gen_ai.output.messages"] = json.dumps(to_otel_messages(outputs), ensure_ascii=False)


def _result_json(result: content_pb2.ToolResultContent) -> str:
    wrapped = ToolResultContent._wrap(content_pb2.Content(tool_result=result))
    return json.dumps(to_otel_parts([wrapped])[0]["response"], ensure_ascii=False)


def _code_name(code: Any) -> str:
    return code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"


def _entries(data: bytes) -> int:
    """How many ``LoggedMessage`` entries an encoded ``SubscribeResponse`` holds (its top-level field-1 items)."""
    count = position = 0
    while position < len(data):
        tag = data[position]
        position += 1
        length = shift = 0
        while True:
            byte = data[position]
            position += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        if tag == 0x0A:
            count += 1
        position += length
    return count


# --- the server -----------------------------------------------------------------------------


class _ServerState(Protocol):
    """What the metrics read from a running server (kept abstract: this module sits below the server)."""

    def snapshot(self) -> dict[str, float]: ...


@dataclass
class _Metrics:
    registry: Any
    rpcs: Any
    rpc_seconds: Any
    appended: Any
    appended_bytes: Any
    subscribers: Any
    deliveries: Any
    tool_calls: Any
    tool_seconds: Any
    forwards: Any
    forward_seconds: Any


def _metrics(store: str, first: Any) -> _Metrics:
    registry = prometheus_client.CollectorRegistry(auto_describe=True)
    # A registry collects in the order collectors were registered: ``first`` records what is pending before
    # the counters below are read, so a scrape always counts every call answered before it.
    registry.register(first)
    counter, gauge, histogram = prometheus_client.Counter, prometheus_client.Gauge, prometheus_client.Histogram
    metrics = _Metrics(
        registry,
        counter(
            "agentmsg_rpc_requests", "RPCs handled, by method and status code", ["method", "code"], registry=registry
        ),
        histogram(
            "agentmsg_rpc_duration_seconds",
            "RPC latency, by method and status code",
            ["method", "code"],
            registry=registry,
        ),
        counter(
            "agentmsg_appended_messages",
            "Messages appended (duplicates excluded), by store",
            ["store"],
            registry=registry,
        ),
        counter("agentmsg_appended_bytes", "Bytes of messages appended, by store", ["store"], registry=registry),
        gauge(
            "agentmsg_subscribers",
            "Subscribe streams open now, by whether they take live events",
            ["live_events"],
            registry=registry,
        ),
        counter(
            "agentmsg_subscribe_deliveries",
            "Subscribe responses sent, by kind (messages, live_event)",
            ["kind"],
            registry=registry,
        ),
        counter(
            "agentmsg_tool_calls",
            "Tool calls handled, by tool and outcome (ok, error, or the status code)",
            ["tool", "outcome"],
            registry=registry,
        ),
        histogram(
            "agentmsg_tool_call_duration_seconds",
            "Tool call latency, by tool and outcome",
            ["tool", "outcome"],
            registry=registry,
        ),
        counter(
            "agentmsg_cluster_forwards",
            "Tool calls forwarded to another node, by outcome",
            ["outcome"],
            registry=registry,
        ),
        histogram(
            "agentmsg_cluster_forward_duration_seconds",
            "Latency of tool calls forwarded to another node",
            registry=registry,
        ),
    )
    for live in ("true", "false"):
        metrics.subscribers.labels(live)
    metrics.appended.labels(store)
    metrics.appended_bytes.labels(store)
    return metrics


if AVAILABLE:

    class _StateCollector(Collector):
        """Reads the server's state at scrape time: runners, dropped live events, store health and pool."""

        def __init__(self, state: _ServerState, store: str) -> None:
            self.state = state
            self.store = store

        def collect(self) -> Iterator[Any]:
            values = self.state.snapshot()
            yield GaugeMetricFamily(
                "agentmsg_runners_connected", "Tool runners connected to this node", value=values["runners"]
            )
            yield CounterMetricFamily(
                "agentmsg_live_events_dropped", "Live events dropped for slow subscribers", value=values["live_dropped"]
            )
            refused = CounterMetricFamily(
                "agentmsg_calls_refused", "Calls refused for a budget of concurrent calls, by budget", labels=["budget"]
            )
            for key, count in values.items():
                if key.startswith("refused:"):
                    refused.add_metric([key.removeprefix("refused:")], count)
            yield refused
            healthy = GaugeMetricFamily("agentmsg_store_healthy", "1 when the store is reachable", labels=["store"])
            healthy.add_metric([self.store], values["store_healthy"])
            yield healthy
            for key, text in (
                ("commits", "Transactions the store's appends committed (group commit: one per batch, one log flush)"),
                ("committed_appends", "Append calls those transactions acknowledged"),
            ):
                if key in values:
                    yield CounterMetricFamily(f"agentmsg_store_{key}", text, value=values[key])
            for key, text in (
                ("pool_size", "PostgreSQL connections open in the pool"),
                ("pool_max", "PostgreSQL pool's maximum connections"),
                ("pool_available", "PostgreSQL connections idle in the pool"),
                ("pool_waiting", "Requests waiting for a PostgreSQL connection"),
            ):
                if key in values:
                    yield GaugeMetricFamily(f"agentmsg_store_{key}", text, value=values[key])

    class _RecordFirst(Collector):
        """Collects nothing: has the server record its pending calls before a scrape reads the counters."""

        def __init__(self, telemetry: ServerTelemetry) -> None:
            self.telemetry = telemetry

        def collect(self) -> Iterator[Any]:
            self.telemetry.flush_threadsafe()
            return iter(())


class ServerTelemetry:
    """One server's tracing and metrics: its handler wrapping, its Prometheus registry and ``/metrics`` endpoint.

    Answered session RPCs are recorded in batches (:meth:`_answered`): their metrics and spans are made
    :data:`_RECORD_BATCH` at a time, or :data:`_RECORD_DELAY` seconds after the first one was answered,
    whichever comes first, and always before a scrape reads the counters and when the server stops. Run one
    after another, the recordings share warm caches: a recording made alone, between two calls, costs
    about twice as much CPU (measured: ~120 us in place of ~50 us for a sampled append on the benchmark
    machine), and all of it fell between two calls of a busy client.
    """

    def __init__(self, *, tracing: bool, metrics: bool, store: str) -> None:
        self.store = store
        self.tracer = _tracer() if tracing else None
        self._pending: list[tuple[_Call, str, float, int, Any]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.metrics = _metrics(store, _RecordFirst(self)) if metrics and AVAILABLE else None
        self._http: Any = None
        self.metrics_port: int | None = None
        self._children: dict[tuple[str, str], tuple[Any, Any]] = {}
        # This server's store never changes: its labelled counters are looked up once, not per append.
        self._stored = (
            (self.metrics.appended.labels(store), self.metrics.appended_bytes.labels(store)) if self.metrics else None
        )

    @classmethod
    def create(cls, *, metrics_port: int | None, store: str) -> ServerTelemetry | None:
        """Telemetry for a server, or None when it neither traces nor serves metrics."""
        tracing = configure_tracing("agentmsg-server")
        if metrics_port is not None and not AVAILABLE:
            raise ValidationError.single(
                "metrics_port", "extra", "metrics need the otel extra: pip install 'agentmsg[otel]'"
            )
        if not tracing and metrics_port is None:
            return None
        return cls(tracing=tracing, metrics=metrics_port is not None, store=store)

    def serve_metrics(self, host: str, port: int, state: _ServerState) -> int:
        """Serve ``/metrics`` on ``host:port`` (0: any free port); the bound port."""
        assert self.metrics is not None
        self.metrics.registry.register(_StateCollector(state, self.store))
        server, _ = prometheus_client.start_http_server(port, addr=host, registry=self.metrics.registry)
        self._http = server
        self.metrics_port = int(server.server_port)
        return self.metrics_port

    def close(self) -> None:
        """Record what is pending; stop the ``/metrics`` endpoint."""
        self.flush()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None

    def served(self, method: str, request: Any, metadata: Sequence[tuple[str, str | bytes]]) -> ServedCall | None:
        """Start recording a call another transport serves (``method``: ``/package.Service/Method``); None for
        a method gRPC calls are not recorded for either (health)."""
        if not method.startswith(_INSTRUMENTED):
            return None
        return ServedCall(self, method, request, metadata)

    def instrument(self, server: grpc.aio.Server) -> grpc.aio.Server:
        """What the services register on instead of ``server``: their handlers get wrapped (see below)."""
        return cast(grpc.aio.Server, _InstrumentedServer(server, self))

    def instrument_peer_stub(self, stub: S) -> S:
        """A stub for calls to other nodes: the trace context travels on, and forwards are counted."""
        return _instrument(stub, self.tracer is not None, self)

    # -- what the wrapped handlers and peer stubs record

    def _answered(self, call: _Call, code: str, seconds: float, context: Any) -> None:
        """A session RPC's done callback: its recording is queued (see the class's docstring)."""
        metadata = context.invocation_metadata() if self.tracer is not None else ()
        call.context = None  # what the recording needs is kept; the call's own state can go
        pending = self._pending
        pending.append((call, code, seconds, time.time_ns(), metadata))
        if len(pending) >= _RECORD_BATCH:
            self.flush()
        elif self._timer is None:
            try:
                loop = self._loop = asyncio.get_running_loop()
            except RuntimeError:  # not on an event loop after all: nothing to wait for
                self.flush()
                return
            self._timer = loop.call_later(_RECORD_DELAY, self.flush)

    def flush(self) -> None:
        """Record every pending call now (on the server's event loop)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        pending, self._pending = self._pending, []
        for call, code, seconds, end_ns, metadata in pending:
            call._record(code, seconds, end_ns, metadata)

    def flush_threadsafe(self) -> None:
        """:meth:`flush` from another thread (a scrape's): waits up to :data:`_SCRAPE_WAIT` s for the loop."""
        loop = self._loop
        if not self._pending or loop is None:
            return
        try:
            if asyncio.get_running_loop() is loop:
                self.flush()
                return
        except RuntimeError:
            pass
        done = concurrent.futures.Future[None]()

        def run() -> None:
            try:
                self.flush()
            finally:
                done.set_result(None)

        try:
            loop.call_soon_threadsafe(run)
            done.result(_SCRAPE_WAIT)
        except (RuntimeError, concurrent.futures.TimeoutError):  # the loop is closed or busy: serve what is counted
            _LOG.warning("a scrape did not wait for %d pending calls to be recorded", len(self._pending))

    def forwarded(self, code: str, seconds: float) -> None:
        if self.metrics is not None:
            self.metrics.forwards.labels("ok" if code == "OK" else code.lower()).inc()
            self.metrics.forward_seconds.observe(seconds)

    def _finished(self, method: str, code: str, seconds: float, request: Any, response: Any) -> None:
        metrics = self.metrics
        if metrics is None:
            return
        name = method.rpartition("/")[2]
        children = self._children.get((name, code))
        if children is None:  # a labelled child is looked up once per method and code
            children = self._children[(name, code)] = (
                metrics.rpcs.labels(name, code),
                metrics.rpc_seconds.labels(name, code),
            )
        children[0].inc()
        children[1].observe(seconds)
        if name == "CallTool" and isinstance(request, tool_service_pb2.CallToolRequest):
            outcome = code.lower()
            if code == "OK":
                outcome = "error" if response is not None and response.result.is_error else "ok"
            metrics.tool_calls.labels(request.call.name, outcome).inc()
            metrics.tool_seconds.labels(request.call.name, outcome).observe(seconds)
        elif code == "OK" and response is not None:
            fresh = _appended(name, request, response)
            if fresh and self._stored is not None:
                self._stored[0].inc(len(fresh))
                # A large append is parsed with its media cut short: the bytes that arrived are its size.
                large = isinstance(request, ReceivedAppend)
                size = len(request.encoding) if large else sum(m.ByteSize() for m in fresh)
                self._stored[1].inc(size)


def _appended(name: str, request: Any, response: Any) -> list[message_pb2.Message]:
    """The messages an RPC appended (a retried append that was a duplicate is not counted again)."""
    if name == "AppendMessage":
        if response.duplicate:
            return []
        return [request.request.message if isinstance(request, ReceivedAppend) else request.message]
    if name == "AppendMessages":
        return [m for m, dup in zip(request.messages, response.duplicates, strict=False) if not dup]
    if name == "PublishStream":
        return [response.message]
    if name in ("BranchSession", "CompactSession"):
        return [response.entry]
    return []


def _session_of(request: Any) -> str:
    if isinstance(request, ReceivedAppend):
        request = request.request
    return str(getattr(request, "session_id", "") or "")


class _Headers:
    """A call of another transport seen as gRPC's context is, for :class:`_Call`: its metadata."""

    __slots__ = ("metadata",)

    def __init__(self, metadata: Sequence[tuple[str, str | bytes]]) -> None:
        self.metadata = metadata

    def invocation_metadata(self) -> Sequence[tuple[str, str | bytes]]:
        return self.metadata


class ServedCall:
    """One call served over another transport (Connect, gRPC-Web), recorded as a gRPC call is: the same SERVER
    span (parent: the caller's ``traceparent``), attributes and metrics, under the same method name.

    ``finish(code)`` ends it (a gRPC status code's name); ``delivered(reply)`` counts a Subscribe delivery.
    """

    __slots__ = ("_call", "_live", "_metrics")

    def __init__(
        self, telemetry: ServerTelemetry, method: str, request: Any, metadata: Sequence[tuple[str, str | bytes]]
    ) -> None:
        self._call = _Call(telemetry, method, request, _Headers(metadata))
        self._metrics = telemetry.metrics if method.endswith("/Subscribe") else None
        self._live = "true" if getattr(request, "live_events", False) else "false"
        if self._metrics is not None:
            self._metrics.subscribers.labels(self._live).inc()

    def delivered(self, reply: Any) -> None:
        self._call.delivered(reply)

    def finish(self, code: str, response: Any = None) -> None:
        if self._metrics is not None:
            self._metrics.subscribers.labels(self._live).dec()
        self._call.response = response
        self._call.finish(code)


class _InstrumentedServer:
    """Stands in for the gRPC server while the services register: each agentmsg handler is wrapped once.

    Wrapping at registration (rather than a server interceptor) costs nothing per call beyond the
    instrumentation itself: no interceptor chain runs and no handler is rebuilt per call.
    """

    def __init__(self, server: grpc.aio.Server, telemetry: ServerTelemetry) -> None:
        self.server = server
        self.telemetry = telemetry

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        self.server.add_generic_rpc_handlers(tuple(_GenericHandler(h, self.telemetry) for h in handlers))

    def add_registered_method_handlers(self, service: str, handlers: dict[str, Any]) -> None:
        wrapped = {name: _wrap(self.telemetry, f"/{service}/{name}", h) for name, h in handlers.items()}
        self.server.add_registered_method_handlers(service, wrapped)


class _GenericHandler(grpc.GenericRpcHandler):
    """A generic handler whose method handlers are wrapped (once per method)."""

    def __init__(self, inner: grpc.GenericRpcHandler, telemetry: ServerTelemetry) -> None:
        self.inner = inner
        self.telemetry = telemetry
        self.wrapped: dict[str, Any] = {}

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> Any:
        method: str = handler_call_details.method
        found = self.wrapped.get(method)
        if found is None:
            handler = self.inner.service(handler_call_details)
            if handler is None:
                return None
            found = self.wrapped[method] = _wrap(self.telemetry, method, handler)
        return found


def _wrap(telemetry: ServerTelemetry, method: str, handler: Any) -> Any:
    """The handler with its behaviour run inside a :class:`_Call` (a SERVER span and the RPC metrics)."""
    if not method.startswith(_INSTRUMENTED):
        return handler
    deserialize, serialize = handler.request_deserializer, handler.response_serializer
    # A session RPC with one response runs nothing that needs its span (no call leaves the node inside it):
    # its span is recorded after the response went out. Tool RPCs hand their context on, so theirs is made first.
    after = method.startswith(_AFTER_RESPONSE)
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(
            _unary_unary(telemetry, method, handler.unary_unary, after), deserialize, serialize
        )
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(
            _unary_stream(telemetry, method, handler.unary_stream), deserialize, serialize
        )
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(
            _stream_unary(telemetry, method, handler.stream_unary, after), deserialize, serialize
        )
    return grpc.stream_stream_rpc_method_handler(
        _stream_stream(telemetry, method, handler.stream_stream), deserialize, serialize
    )


def _unary_unary(telemetry: ServerTelemetry, method: str, behavior: Any, after: bool) -> Any:
    async def handle(request: Any, context: Any) -> Any:
        call = _Call(telemetry, method, request, context, after)
        try:
            call.response = await behavior(request, context)
        except BaseException as exc:
            call.end(exc)
            raise
        call.end(None)
        return call.response

    return handle


def _stream_unary(telemetry: ServerTelemetry, method: str, behavior: Any, after: bool) -> Any:
    async def handle(request_iterator: Any, context: Any) -> Any:
        call = _Call(telemetry, method, None, context, after)

        async def requests() -> AsyncIterator[Any]:
            async for request in request_iterator:
                if call.request is None:
                    call.request = request  # the first names the session
                yield request

        try:
            call.response = await behavior(requests(), context)
        except BaseException as exc:
            call.end(exc)
            raise
        call.end(None)
        return call.response

    return handle


def _unary_stream(telemetry: ServerTelemetry, method: str, behavior: Any) -> Any:
    async def handle(request: Any, context: Any) -> AsyncIterator[Any]:
        call = _Call(telemetry, method, request, context)
        live = "true" if getattr(request, "live_events", False) else "false"
        metrics = telemetry.metrics
        if metrics is not None:
            metrics.subscribers.labels(live).inc()
        try:
            async for response in behavior(request, context):
                call.delivered(response)
                yield response
        except BaseException as exc:
            call.end(exc)
            raise
        finally:
            if metrics is not None:
                metrics.subscribers.labels(live).dec()
        call.end(None)

    return handle


def _stream_stream(telemetry: ServerTelemetry, method: str, behavior: Any) -> Any:
    async def handle(request_iterator: Any, context: Any) -> AsyncIterator[Any]:
        call = _Call(telemetry, method, None, context)
        try:
            async for response in behavior(request_iterator, context):
                yield response
        except BaseException as exc:
            call.end(exc)
            raise
        call.end(None)

    return handle


class _Call:
    """One RPC being served: its span (parent: the caller's ``traceparent``), its clock, its outcome.

    The span is made when the call starts and is current while it runs, so what the call sends on (a tool
    call to its runner, a forward to another node) joins the trace. A session RPC with one response
    (``after``) runs nothing that needs it: on the way in only the clock is read, and its metrics and its
    span (with the times it was served, its parent from the caller's metadata) are recorded after the call
    is over, the response sent: gRPC's done callback queues the call, and :class:`ServerTelemetry` records
    the queue in batches. The caller does not wait for that bookkeeping; the server still does it (the
    benchmark's CPU column counts it). Subscribe deliveries' spans are recorded after the delivery, in a
    callback the event loop runs next.
    """

    __slots__ = (
        "after",
        "context",
        "method",
        "request",
        "response",
        "span",
        "start",
        "start_ns",
        "telemetry",
        "token",
    )

    def __init__(
        self, telemetry: ServerTelemetry, method: str, request: Any, context: Any, after: bool = False
    ) -> None:
        self.telemetry = telemetry
        self.method = method
        self.request = request
        self.context = context
        self.response: Any = None
        self.span: Any = None
        self.token: Any = None
        self.start_ns = 0
        self.start = time.perf_counter()
        self.after = after
        tracer = telemetry.tracer
        if tracer is None:
            return
        if after:
            self.start_ns = time.time_ns()
            return
        parent = _extract(context.invocation_metadata() or ())
        self.span = tracer.start_span(
            method.lstrip("/"), parent, kind=trace.SpanKind.SERVER, attributes=_rpc_attributes(method)
        )
        self.token = otel_context.attach(trace.set_span_in_context(self.span, parent))

    def end(self, error: BaseException | None) -> None:
        if error is None:
            code = "OK"
        elif isinstance(error, grpc.aio.AbortError):
            code = _code_name(self.context.code())
        else:
            code = "UNKNOWN" if isinstance(error, Exception) else "CANCELLED"
        self.finish(code)

    def finish(self, code: str) -> None:
        """Record the call as ended with ``code`` (a gRPC status code's name): its metrics, and its span."""
        seconds = time.perf_counter() - self.start
        if self.after:
            self.context.add_done_callback(functools.partial(self.telemetry._answered, self, code, seconds))
            return
        self.telemetry._finished(self.method, code, seconds, self.request, self.response)
        span = self.span
        if span is None:
            return
        otel_context.detach(self.token)
        if span.is_recording():
            name, attributes = self._outcome(code)
            if name is not None:
                span.update_name(name)
            if code != "OK":
                span.set_status(trace.Status(trace.StatusCode.ERROR, code))
            span.set_attributes(attributes)  # one call: each set_attribute takes the span's lock
        span.end()

    def _record(self, code: str, seconds: float, end_ns: int, metadata: Any) -> None:
        """The metrics and span of a call that has been answered (``after``), with the times it was served."""
        try:
            self.telemetry._finished(self.method, code, seconds, self.request, self.response)
            tracer = self.telemetry.tracer
            if tracer is None:
                return
            span = tracer.start_span(
                self.method.lstrip("/"),
                _extract(metadata or ()),
                kind=trace.SpanKind.SERVER,
                attributes=_rpc_attributes(self.method),
                start_time=self.start_ns,
            )
            if span.is_recording():  # an unsampled call's outcome is not read at all
                _, attributes = self._outcome(code)
                if code != "OK":
                    span.set_status(trace.Status(trace.StatusCode.ERROR, code))
                span.set_attributes(attributes)
            span.end(end_time=end_ns)
        except Exception:  # never worth the server: the call itself was answered
            _LOG.exception("recording the metrics and span of %s failed", self.method)

    def _outcome(self, code: str) -> tuple[str | None, dict[str, Any]]:
        """What the call's span records once it is over: a more precise name (tool calls) and attributes."""
        name = None
        attributes: dict[str, Any] = {"rpc.grpc.status_code": grpc.StatusCode[code].value[0]}
        request, response = self.request, self.response
        if request is not None:
            session = _session_of(request)
            if session:
                attributes["gen_ai.conversation.id"] = session
            if isinstance(request, tool_service_pb2.CallToolRequest):
                name = f"{self.method.lstrip('/')} {request.call.name}"
                attributes.update(_tool_attributes(request.call))
                if content_capture():
                    attributes["gen_ai.tool.call.arguments"] = request.call.arguments
                if response is not None:
                    if response.result.is_error:
                        attributes["error.type"] = "tool_error"
                    if content_capture():
                        attributes["gen_ai.tool.call.result"] = _result_json(response.result)
        if code != "OK":
            attributes["error.type"] = code
        if response is not None and code == "OK":
            messages = _appended(self.method.rpartition("/")[2], request, response)
            if messages and isinstance(request, ReceivedAppend) and content_capture():
                messages = [message_pb2.Message.FromString(bytes(request.encoding))]  # whole, media included
            _message_attributes(attributes, messages)
        return name, attributes

    def delivered(self, response: Any) -> None:
        """A Subscribe delivery: a count now, and a span (child of the Subscribe span) once it has gone out."""
        if isinstance(response, bytes):
            kind = "messages"
        elif isinstance(response, session_service_pb2.SubscribeResponse) and response.HasField("live_event"):
            kind = "live_event"
        else:
            kind = "messages"
        if self.telemetry.metrics is not None:
            self.telemetry.metrics.deliveries.labels(kind).inc()
        if self.span is not None and self.span.is_recording():
            asyncio.get_running_loop().call_soon(self._record_delivery, response, kind, time.time_ns())

    def _record_delivery(self, response: Any, kind: str, at_ns: int) -> None:
        try:
            if isinstance(response, bytes):
                count, size = _entries(response), len(response)
            else:
                count = 1 if kind == "live_event" else len(response.messages)
                size = response.ByteSize()
            attributes: dict[str, str | int] = {
                "gen_ai.conversation.id": _session_of(self.request),
                "agentmsg.delivery.kind": kind,
                "agentmsg.delivery.count": count,
                "agentmsg.delivery.bytes": size,
            }
            assert self.telemetry.tracer is not None
            self.telemetry.tracer.start_span(
                "agentmsg.v1.SessionService/Subscribe deliver",
                trace.set_span_in_context(self.span),
                attributes=attributes,
                start_time=at_ns,
            ).end(end_time=at_ns)
        except Exception:
            _LOG.exception("recording a Subscribe delivery's span failed")


def _extract(metadata: Any) -> Any:
    """The caller's trace context from the call's metadata (binary values are not trace context)."""
    return propagate.extract({key: value for key, value in metadata if isinstance(value, str)})


# --- clients ----------------------------------------------------------------------------------


def _with_context(metadata: Any, span: Any) -> list[tuple[str, str | bytes]]:
    """The call's metadata plus ``span``'s trace context."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier, trace.set_span_in_context(span))
    return [*(metadata or ()), *carrier.items()]


# The last context carried: (the current Context, the propagator, the caller's metadata, the pairs sent).
# One engine turn appends several messages inside one span; its context is injected once, not per call.
_CARRIED: list[tuple[Any, Any, Any, tuple[tuple[str, str | bytes], ...]]] = []


def _current_context(metadata: Any, aio: bool = False) -> Any:
    """The call's metadata plus the current trace context; the metadata alone when there is none to carry.

    For an asyncio call it is a ``grpc.aio.Metadata``, which gRPC takes as it is (a sequence of pairs it
    converts first, at a cost measured in microseconds per call). The pairs are remembered for the current
    context (contexts are immutable: the same object carries the same span and baggage) and reused while it
    stays current and the caller's metadata is the same tuple; each call still gets its own metadata object.
    """
    context = otel_context.get_current()
    propagator = propagate.get_global_textmap()
    last = _CARRIED[0] if _CARRIED else None
    if last is not None and last[0] is context and last[1] is propagator and last[2] is metadata:
        pairs = last[3]
    else:
        if not trace.get_current_span(context).get_span_context().is_valid and not baggage.get_all(context):
            return metadata
        carrier: dict[str, str] = {}
        propagator.inject(carrier, context)
        pairs = (*(metadata or ()), *carrier.items())
        if metadata is None or isinstance(metadata, tuple):  # a list could change before the next call
            _CARRIED[:] = [(context, propagator, metadata, pairs)]
    if aio:
        return grpc.aio.Metadata(*pairs)
    return list(pairs)


def _open_client_span(method: str, request: Any) -> Any:
    attributes = dict(_rpc_attributes(method))
    name = method.lstrip("/")
    if isinstance(request, tool_service_pb2.CallToolRequest):
        attributes.update(_tool_attributes(request.call))
        name = f"{name} {request.call.name}"
        if content_capture():
            attributes["gen_ai.tool.call.arguments"] = request.call.arguments
    session = _session_of(request)
    if session:
        attributes["gen_ai.conversation.id"] = session
    # Not made current: nothing runs inside it but the call, whose metadata gets its context explicitly.
    return _tracer().start_span(name, kind=trace.SpanKind.CLIENT, attributes=attributes)


def _close_client_span(span: Any, code: Any, response: Any) -> None:
    """Record the call's outcome on its CLIENT span and end it."""
    if not span.is_recording():
        span.end()
        return
    name = _code_name(code)
    span.set_attribute("rpc.grpc.status_code", grpc.StatusCode[name].value[0])
    if name != "OK":
        span.set_attribute("error.type", name)
        span.set_status(trace.Status(trace.StatusCode.ERROR, name))
    elif isinstance(response, tool_service_pb2.CallToolResponse):
        if response.result.is_error:
            span.set_attribute("error.type", "tool_error")
        if content_capture():
            span.set_attribute("gen_ai.tool.call.result", _result_json(response.result))
    span.end()


def _failure_code(error: BaseException) -> Any:
    if isinstance(error, grpc.RpcError):
        return error.code()
    return grpc.StatusCode.CANCELLED if not isinstance(error, Exception) else grpc.StatusCode.UNKNOWN


class _SyncUnary:
    """A blocking unary method of a stub: a CLIENT span, the trace context in the metadata."""

    def __init__(self, inner: Any, method: str) -> None:
        self.inner = inner
        self.method = method

    def __call__(self, request: Any, *, metadata: Any = None, **kwargs: Any) -> Any:
        span = _open_client_span(self.method, request)
        try:
            response = self.inner(request, metadata=_with_context(metadata, span), **kwargs)
        except BaseException as exc:
            _close_client_span(span, _failure_code(exc), None)
            raise
        _close_client_span(span, grpc.StatusCode.OK, response)
        return response


class _AioUnary:
    """An asyncio unary method of a stub: a CLIENT span and the trace context (when tracing); forward metrics."""

    def __init__(self, inner: Any, method: str, tracing: bool, node: ServerTelemetry | None) -> None:
        self.inner = inner
        self.method = method
        self.tracing = tracing
        self.node = node

    async def __call__(self, request: Any, *, metadata: Any = None, **kwargs: Any) -> Any:
        start = time.perf_counter()
        code = grpc.StatusCode.OK
        try:
            if not self.tracing:
                return await self.inner(request, metadata=metadata, **kwargs)
            span = _open_client_span(self.method, request)
            try:
                response = await self.inner(request, metadata=_with_context(metadata, span), **kwargs)
            except BaseException as exc:
                _close_client_span(span, _failure_code(exc), None)
                raise
            _close_client_span(span, code, response)
            return response
        except grpc.RpcError as exc:
            code = exc.code()
            raise
        finally:
            if self.node is not None:
                self.node.forwarded(_code_name(code), time.perf_counter() - start)


class _Carrying:
    """A method of a stub whose calls carry the current trace context, and nothing more (the call object is the
    real one): streaming calls, and session RPCs, whose span the server makes as a child of the caller's."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.aio = isinstance(inner, _AIO)

    def __call__(self, *args: Any, metadata: Any = None, **kwargs: Any) -> Any:
        return self.inner(*args, metadata=_current_context(metadata, self.aio), **kwargs)

    def future(self, *args: Any, metadata: Any = None, **kwargs: Any) -> Any:
        """A blocking unary call started without waiting (the client asks for its next page this way)."""
        return self.inner.future(*args, metadata=_current_context(metadata, self.aio), **kwargs)


_UNARY_AIO = grpc.aio.UnaryUnaryMultiCallable
_AIO = (
    grpc.aio.UnaryUnaryMultiCallable,
    grpc.aio.UnaryStreamMultiCallable,
    grpc.aio.StreamUnaryMultiCallable,
    grpc.aio.StreamStreamMultiCallable,
)
_STREAMING = (
    grpc.UnaryStreamMultiCallable,
    grpc.StreamUnaryMultiCallable,
    grpc.StreamStreamMultiCallable,
    grpc.aio.UnaryStreamMultiCallable,
    grpc.aio.StreamUnaryMultiCallable,
    grpc.aio.StreamStreamMultiCallable,
)


def _wrap_callable(value: Any, method: str, tracing: bool, node: ServerTelemetry | None) -> Any:
    """A multi-callable of ``method`` instrumented, or ``value`` itself when there is nothing to record.

    Unary tool RPCs get a CLIENT span: the caller waits there for work done elsewhere (a runner, another
    node). Other calls carry the caller's current context: a session RPC is the server's span, a child of
    whatever span the caller is in (its own would repeat the server's).
    """
    if isinstance(value, _UNARY_AIO) and (node is not None or (tracing and method.startswith(_CLIENT_SPANS))):
        return _AioUnary(value, method, tracing, node)
    if not tracing:
        return value
    if isinstance(value, grpc.UnaryUnaryMultiCallable) and method.startswith(_CLIENT_SPANS):
        return _SyncUnary(value, method)
    if isinstance(value, (_UNARY_AIO, grpc.UnaryUnaryMultiCallable, *_STREAMING)):
        return _Carrying(value)
    return value


def _instrument(stub: S, tracing: bool, node: ServerTelemetry | None = None) -> S:
    # Generated stubs hold one multi-callable per method; the service is named by the stub's module and class.
    service = f"{type(stub).__module__.rpartition('.')[0]}.{type(stub).__name__.removesuffix('Stub')}"
    for name, value in list(vars(stub).items()):
        wrapped = _wrap_callable(value, f"/{service}/{name}", tracing, node)
        if wrapped is not value:
            setattr(stub, name, wrapped)
    return stub


def instrument_stub(stub: S, service_name: str = "agentmsg-client") -> S:
    """A generated agentmsg stub whose calls carry the trace context (and unary calls a CLIENT span).

    Returned unchanged when the process does not trace (no extra, or no ``OTEL_*`` configuration).
    """
    return _instrument(stub, True) if configure_tracing(service_name) else stub


def instrument_call(call: C, method: str, service_name: str = "agentmsg-client") -> C:
    """A multi-callable made on the channel itself (``channel.unary_unary(method)``), instrumented as a stub's.

    The client sends AppendMessage as bytes it encodes itself (:func:`agentmsg.service.frames.append_request`),
    through such a callable rather than the stub. Returned unchanged when the process does not trace.
    """
    return cast(C, _wrap_callable(call, method, True, None)) if configure_tracing(service_name) else call


# --- the runner -------------------------------------------------------------------------------


@contextlib.contextmanager
def tool_execution(call: ToolCallContent, trace_context: Any) -> Iterator[Callable[[ToolResultContent], None]]:
    """The runner's ``execute_tool {name}`` span, child of the server's span (from ``RunToolCall.trace_context``).

    Yields a function to record the result with. No span when the runner does not trace.
    """
    if not tracing_enabled():
        yield _ignore
        return
    parent = propagate.extract(dict(trace_context))
    attributes = _tool_attributes(call.pb.tool_call)
    if content_capture():
        attributes["gen_ai.tool.call.arguments"] = call.arguments
    tracer = _tracer()
    with tracer.start_as_current_span(f"execute_tool {call.name}", parent, attributes=attributes) as span:

        def record(result: ToolResultContent) -> None:
            if result.is_error:
                span.set_attribute("error.type", "tool_error")
                span.set_status(trace.Status(trace.StatusCode.ERROR, "the tool returned an error"))
            if content_capture():
                span.set_attribute("gen_ai.tool.call.result", _result_json(result.pb.tool_result))

        yield record


def _ignore(result: ToolResultContent) -> None:
    del result


def flush_tracing(timeout: float = 5.0) -> bool:
    """Export the spans the tracer provider still holds (a batch processor's, within its delay), within ``timeout``
    seconds; whether all went. A stopping runner calls it before it exits. True when the process does not trace.
    """
    if not tracing_enabled():
        return True
    flush = getattr(trace.get_tracer_provider(), "force_flush", None)  # the SDK's provider has it, the API's not
    return True if flush is None else bool(flush(int(timeout * 1000)))
