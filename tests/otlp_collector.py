"""An OTLP/gRPC trace collector for the tests: the spans that processes under test export, kept for checking."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from agentmsg.service.telemetry import CAPTURE_ENV


@dataclass(frozen=True)
class Span:
    service: str
    name: str
    kind: int
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, Any]
    start_ns: int = 0
    end_ns: int = 0


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class Collector(trace_service_pb2_grpc.TraceServiceServicer):
    """An OTLP/gRPC trace receiver that keeps every span it is sent."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.lock = threading.Lock()

    def Export(self, request: Any, context: Any) -> Any:  # noqa: N802
        with self.lock:
            for resource_spans in request.resource_spans:
                resource = {kv.key: _value(kv.value) for kv in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        self.spans.append(
                            Span(
                                str(resource.get("service.name")),
                                span.name,
                                span.kind,
                                span.trace_id.hex(),
                                span.span_id.hex(),
                                span.parent_span_id.hex(),
                                {kv.key: _value(kv.value) for kv in span.attributes},
                                span.start_time_unix_nano,
                                span.end_time_unix_nano,
                            )
                        )
        return trace_service_pb2.ExportTraceServiceResponse()

    def wait_for(self, predicate: Any, timeout: float = 20) -> list[Span]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                spans = list(self.spans)
            if predicate(spans):
                return spans
            time.sleep(0.05)
        raise AssertionError(f"the expected spans did not arrive: {[(s.service, s.name) for s in spans]}")


@contextmanager
def collecting() -> Iterator[tuple[Collector, int]]:
    """A collector listening on 127.0.0.1 (a free port): it and its port."""
    receiver = Collector()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(receiver, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield receiver, port
    finally:
        server.stop(0)


def otlp_environment(port: int, service: str, capture: bool = False) -> dict[str, str]:
    """This process's environment for a process that exports its spans to the collector on ``port`` as ``service``
    (``capture``: message content recorded too)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    env.update(
        OTEL_TRACES_EXPORTER="otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{port}",
        OTEL_EXPORTER_OTLP_INSECURE="true",
        OTEL_SERVICE_NAME=service,
        OTEL_BSP_SCHEDULE_DELAY="50",
        OTEL_METRICS_EXPORTER="none",
        PYTHONUNBUFFERED="1",
    )
    if capture:
        env[CAPTURE_ENV] = "true"
    return env
