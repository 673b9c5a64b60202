"""One OpenTelemetry trace across three processes: an engine's tool call through the server to the runner.

The server (``agentmsg serve``), the tool runner and the engine each run in their own
process, configured only by the standard ``OTEL_*`` environment to export over OTLP/gRPC
to a collector this test hosts. The spans they export must form one trace with the right
parents and the GenAI attributes, and carry no message content unless capture is turned on.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import fresh_database
from otlp_collector import Collector, Span, collecting, otlp_environment
from prometheus_client.parser import text_string_to_metric_families
from serverproc import ServerProcess

from agentmsg.service.localpg import LocalPostgres

SECRET_ARGUMENT = "Reykjavik-7d1f"
SECRET_RESULT = "sleet-and-wind-92ac"
SECRET_TEXT = "the assistant said 4c0ffee"


@pytest.fixture
def collector() -> Iterator[tuple[Collector, int]]:
    with collecting() as found:
        yield found


RUNNER = textwrap.dedent(
    """
    import signal, sys
    from agentmsg.service import ToolRunner

    # The test stops it with SIGINT: a suite started in the background (`make test &`) hands SIGINT down ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    runner = ToolRunner(sys.argv[1], name="weather-runner", max_backoff=0.5)

    @runner.tool
    def weather(city: str) -> str:
        return "sleet-and-wind-92ac in " + city

    runner.start()  # the reconnecting runner, in its own thread and event loop
    print("registered", flush=True)
    try:
        signal.pause()
    except KeyboardInterrupt:
        runner.stop()
    """
)

ENGINE = textwrap.dedent(
    """
    import asyncio, sys
    import agentmsg as am
    from agentmsg.service import AsyncClient, Client
    from agentmsg.streaming import events_from_message

    reply = am.AssistantMessage(
        [am.TextContent("the assistant said 4c0ffee")],
        stop_reason="tool_calls",
        provenance=am.Provenance(provider="anthropic", api="messages", model="claude-test-1", response_id="r-1"),
    )
    call = am.ToolCallContent("call-9", "weather", {"city": "Reykjavik-7d1f"})

    streamed = am.AssistantMessage([am.TextContent("streamed")], stop_reason="stop")
    follow_up = am.UserMessage.text("and tomorrow?")

    def turn():  # the engine's own span (made once a client has set tracing up)
        from opentelemetry import trace
        return trace.get_tracer("engine").start_as_current_span("turn")

    async def main():
        async with AsyncClient(sys.argv[1]) as client:
            await client.append("trip-42", reply)
            with turn():
                await client.append("trip-42", follow_up)
            result = await client.call_tool(call)
            await client.publish_stream("trip-42", events_from_message(streamed))
            async for _ in client.subscribe("trip-42"):
                break
            return result

    if sys.argv[2] == "async":
        result = asyncio.run(main())
    else:
        with Client(sys.argv[1]) as client:
            client.append("trip-42", reply)
            with turn():
                client.append("trip-42", follow_up)
            result = client.call_tool(call)
            client.publish_stream("trip-42", events_from_message(streamed))
            subscription = client.subscribe("trip-42")
            next(subscription)
            subscription.close()
    print(result.text, flush=True)
    """
)


CALL_WHEN_SERVED = textwrap.dedent(
    """
    import json, sys, time
    import agentmsg as am
    from agentmsg.service import Client

    target, tool, call_id, arguments = sys.argv[1:5]
    with Client(target, timeout=10) as client:
        deadline = time.monotonic() + 30
        while tool not in [t.tool.name for t in client.list_tools()]:
            assert time.monotonic() < deadline, "the runner did not register (again)"
            time.sleep(0.05)
        print(client.call_tool(am.ToolCallContent(call_id, tool, json.loads(arguments))).text, flush=True)
    """
)


def _start_runner(target: str, port: int, capture: bool) -> subprocess.Popen[str]:
    """The ToolRunner process (tracing as ``test-runner``); it prints ``registered`` once its tools are served."""
    return subprocess.Popen(
        [sys.executable, "-c", RUNNER, target],
        env=otlp_environment(port, "test-runner", capture),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize(
    ("capture", "client"), [(False, "blocking"), (True, "async")], ids=["default-blocking", "capture-on-async"]
)
def test_one_trace_from_engine_through_server_to_runner(
    collector: tuple[Collector, int], monkeypatch: pytest.MonkeyPatch, capture: bool, client: str
) -> None:
    receiver, port = collector
    for key, value in otlp_environment(port, "test-server", capture).items():
        monkeypatch.setenv(key, value)  # ServerProcess passes the test's environment on
    server = ServerProcess("--memory")
    runner = _start_runner(server.target, port, capture)
    try:
        assert runner.stdout is not None
        assert runner.stdout.readline().strip() == "registered"
        engine = subprocess.run(
            [sys.executable, "-c", ENGINE, server.target, client],
            env=otlp_environment(port, "test-engine", capture),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert engine.returncode == 0, engine.stderr
        assert engine.stdout.strip() == f"{SECRET_RESULT} in {SECRET_ARGUMENT}"

        def complete(spans: list[Span]) -> bool:
            names = {(s.service, s.name) for s in spans}
            appended = [s for s in spans if s.name == "agentmsg.v1.SessionService/AppendMessage"]
            return (
                len(appended) >= 2
                and {
                    ("test-engine", "agentmsg.v1.ToolService/CallTool weather"),
                    ("test-server", "agentmsg.v1.ToolService/CallTool weather"),
                    ("test-runner", "execute_tool weather"),
                    ("test-engine", "turn"),
                    ("test-server", "agentmsg.v1.SessionService/AppendMessage"),
                    ("test-server", "agentmsg.v1.SessionService/PublishStream"),
                    ("test-server", "agentmsg.v1.SessionService/Subscribe"),
                }
                <= names
            )

        spans = receiver.wait_for(complete)
    finally:
        runner.send_signal(signal.SIGINT)
        runner.communicate(timeout=20)
        server.stop()

    def one(service: str, name: str) -> Span:
        (found,) = [s for s in spans if s.service == service and s.name == name]
        return found

    engine_span = one("test-engine", "agentmsg.v1.ToolService/CallTool weather")
    server_span = one("test-server", "agentmsg.v1.ToolService/CallTool weather")
    runner_span = one("test-runner", "execute_tool weather")
    # One trace: engine (root, CLIENT) -> server (SERVER) -> runner (execute_tool).
    assert engine_span.trace_id == server_span.trace_id == runner_span.trace_id
    assert engine_span.parent_id == ""
    assert server_span.parent_id == engine_span.span_id
    assert runner_span.parent_id == server_span.span_id
    assert (engine_span.kind, server_span.kind) == (3, 2)  # SPAN_KIND_CLIENT, SPAN_KIND_SERVER
    for span in (engine_span, server_span, runner_span):
        assert span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert span.attributes["gen_ai.tool.name"] == "weather"
        assert span.attributes["gen_ai.tool.call.id"] == "call-9"
    assert server_span.attributes["rpc.system"] == "grpc"
    assert server_span.attributes["rpc.method"] == "CallTool"

    # An append is the server's span (no CLIENT span repeats it), a child of the span the engine is in: the
    # first was made outside any span (a root of its own), the second inside the engine's "turn".
    assert not [s for s in spans if s.service == "test-engine" and s.name.startswith("agentmsg.v1.SessionService")]
    appends = [s for s in spans if s.service == "test-server" and s.name == "agentmsg.v1.SessionService/AppendMessage"]
    assert len(appends) == 2
    append, follow_up = sorted(appends, key=lambda s: "gen_ai.provider.name" not in s.attributes)
    assert append.parent_id == ""
    assert append.trace_id not in (engine_span.trace_id, follow_up.trace_id)
    assert append.attributes["gen_ai.conversation.id"] == "trip-42"
    assert append.attributes["gen_ai.provider.name"] == "anthropic"
    assert append.attributes["gen_ai.response.model"] == "claude-test-1"
    turn = one("test-engine", "turn")
    assert (follow_up.trace_id, follow_up.parent_id) == (turn.trace_id, turn.span_id)
    assert follow_up.kind == 2  # SPAN_KIND_SERVER
    assert follow_up.attributes["gen_ai.conversation.id"] == "trip-42"
    assert 0 < follow_up.start_ns <= follow_up.end_ns  # the times it was served, recorded after the response

    # PublishStream and each Subscribe delivery are spans too.
    assert one("test-server", "agentmsg.v1.SessionService/PublishStream").attributes["gen_ai.conversation.id"] == (
        "trip-42"
    )
    subscribe = one("test-server", "agentmsg.v1.SessionService/Subscribe")
    delivery = one("test-server", "agentmsg.v1.SessionService/Subscribe deliver")
    assert (delivery.trace_id, delivery.parent_id) == (subscribe.trace_id, subscribe.span_id)
    assert delivery.attributes["gen_ai.conversation.id"] == "trip-42"
    assert delivery.attributes["agentmsg.delivery.kind"] == "messages"
    assert delivery.attributes["agentmsg.delivery.count"] == 3  # the two appended messages and the streamed one

    recorded = json.dumps([s.attributes for s in spans])
    if not capture:
        for secret in (SECRET_ARGUMENT, SECRET_RESULT, SECRET_TEXT):
            assert secret not in recorded
        assert "gen_ai.input.messages" not in recorded
        assert "gen_ai.output.messages" not in recorded
        assert "gen_ai.tool.call.arguments" not in recorded
    else:
        assert json.loads(runner_span.attributes["gen_ai.tool.call.arguments"]) == {"city": SECRET_ARGUMENT}
        assert json.loads(runner_span.attributes["gen_ai.tool.call.result"]) == f"{SECRET_RESULT} in {SECRET_ARGUMENT}"
        output = json.loads(append.attributes["gen_ai.output.messages"])
        assert output == [
            {"role": "assistant", "parts": [{"type": "text", "content": SECRET_TEXT}], "finish_reason": "tool_call"}
        ]


def _engine_output(script: str, port: int, *args: str) -> str:
    """Run ``script`` with ``args`` as the engine process (tracing as ``test-engine``); what it printed."""
    engine = subprocess.run(
        [sys.executable, "-c", script, *args],
        env=otlp_environment(port, "test-engine", False),
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert engine.returncode == 0, engine.stderr
    return engine.stdout.strip()


def _call_trace(receiver: Collector, runner_service: str, tool: str) -> tuple[Span, Span, Span]:
    """The engine's, the server's and the runner's spans of the one call of ``tool``: one trace, parent to child."""
    name = f"agentmsg.v1.ToolService/CallTool {tool}"
    executed = f"execute_tool {tool}"

    def complete(spans: list[Span]) -> bool:
        names = {(s.service, s.name) for s in spans}
        return {("test-engine", name), ("test-server", name), (runner_service, executed)} <= names

    spans = receiver.wait_for(complete)
    (engine_span,) = [s for s in spans if s.service == "test-engine" and s.name == name]
    (server_span,) = [s for s in spans if s.service == "test-server" and s.name == name]
    (runner_span,) = [s for s in spans if s.service == runner_service and s.name == executed]
    assert engine_span.trace_id == server_span.trace_id == runner_span.trace_id
    assert (server_span.parent_id, runner_span.parent_id) == (engine_span.span_id, server_span.span_id)
    return engine_span, server_span, runner_span


def test_an_mcp_runner_joins_the_callers_trace(
    collector: tuple[Collector, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``agentmsg mcp runner`` (an MCP server's tools served through agentmsg) traces its calls as ToolRunner does."""
    receiver, port = collector
    for key, value in otlp_environment(port, "test-server", False).items():
        monkeypatch.setenv(key, value)
    server = ServerProcess("--memory")
    fast_server = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "fast_server.py"
    command = [sys.executable, "-m", "agentmsg", "mcp", "runner", "--target", server.target, "--prefix", "fast."]
    runner = subprocess.Popen(
        [*command, "--", sys.executable, str(fast_server)],  # the runner's options, then the MCP server's command
        env=otlp_environment(port, "test-mcp-runner", False),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        added = _engine_output(CALL_WHEN_SERVED, port, server.target, "fast.add", "call-11", '{"a": 20, "b": 22}')
        assert added == "42"
        _, _, runner_span = _call_trace(receiver, "test-mcp-runner", "fast.add")
    finally:
        runner.send_signal(signal.SIGINT)
        runner.communicate(timeout=20)
        server.stop()
    assert runner_span.attributes["gen_ai.tool.name"] == "fast.add"
    assert runner_span.attributes["gen_ai.tool.call.id"] == "call-11"
    assert "gen_ai.tool.call.arguments" not in runner_span.attributes


def test_a_hosted_mcp_server_joins_the_callers_trace(
    collector: tuple[Collector, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An MCP server the server hosts (``serve --mcp``): its call's ``execute_tool`` span is the server's span's
    child, in the engine's trace, as a runner's is."""
    receiver, port = collector
    for key, value in otlp_environment(port, "test-server", False).items():
        monkeypatch.setenv(key, value)
    fast_server = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "fast_server.py"
    server = ServerProcess("--memory", "--mcp", f"fast={sys.executable} {fast_server}")
    try:
        added = _engine_output(CALL_WHEN_SERVED, port, server.target, "fast.add", "call-12", '{"a": 40, "b": 2}')
        assert added == "42"
        _, _, tool_span = _call_trace(receiver, "test-server", "fast.add")
    finally:
        server.stop()
    assert tool_span.attributes["gen_ai.tool.name"] == "fast.add"
    assert tool_span.attributes["gen_ai.tool.call.id"] == "call-12"
    assert "gen_ai.tool.call.arguments" not in tool_span.attributes


def test_a_runner_that_reconnected_joins_the_callers_trace(
    collector: tuple[Collector, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner (started with ``start()``) loses its server, reconnects to the one restarted on the same port,
    and its span for the next call is still the child of that server's span."""
    receiver, port = collector
    for key, value in otlp_environment(port, "test-server", False).items():
        monkeypatch.setenv(key, value)
    server = ServerProcess("--memory")
    runner = _start_runner(server.target, port, False)
    try:
        assert runner.stdout is not None
        assert runner.stdout.readline().strip() == "registered"
        server.stop()
        server = ServerProcess("--memory", "--port", str(server.port))
        weather = _engine_output(CALL_WHEN_SERVED, port, server.target, "weather", "call-10", '{"city": "Oslo"}')
        assert weather == "sleet-and-wind-92ac in Oslo"
        _, _, runner_span = _call_trace(receiver, "test-runner", "weather")
    finally:
        runner.send_signal(signal.SIGINT)
        runner.communicate(timeout=20)
        server.stop()
    assert runner_span.attributes["gen_ai.tool.call.id"] == "call-10"


def _metrics_port(server: ServerProcess) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for line in server.output:
            if "metrics on http://" in line:
                return int(line.rsplit(":", 1)[1].split("/")[0])
        time.sleep(0.05)
    raise AssertionError(f"no metrics line: {server.output}")


def test_a_forwarded_call_is_one_trace_across_both_nodes(
    collector: tuple[Collector, int], monkeypatch: pytest.MonkeyPatch, postgres: LocalPostgres
) -> None:
    """A call made on the node without the runner: engine -> node B -> (forward) node A -> runner, one trace."""
    receiver, port = collector
    url = fresh_database(postgres)
    for key, value in otlp_environment(port, "node-a", False).items():
        monkeypatch.setenv(key, value)
    node_a = ServerProcess("--store", url, "--pool-size", "4")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "node-b")
    node_b = ServerProcess("--store", url, "--pool-size", "4", "--metrics-port", "0")
    runner = _start_runner(node_a.target, port, False)
    try:
        assert runner.stdout is not None
        assert runner.stdout.readline().strip() == "registered"
        engine = subprocess.run(
            [sys.executable, "-c", ENGINE, node_b.target, "blocking"],
            env=otlp_environment(port, "test-engine", False),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert engine.returncode == 0, engine.stderr
        name = "agentmsg.v1.ToolService/CallTool weather"

        def complete(spans: list[Span]) -> bool:
            names = [(s.service, s.name) for s in spans]
            return ("test-runner", "execute_tool weather") in names and names.count(("node-b", name)) == 2

        spans = receiver.wait_for(complete)
        with urllib.request.urlopen(f"http://127.0.0.1:{_metrics_port(node_b)}/metrics", timeout=5) as response:
            metrics = response.read().decode()
    finally:
        runner.send_signal(signal.SIGINT)
        runner.communicate(timeout=20)
        node_b.stop()
        node_a.stop()

    engine_span = next(s for s in spans if s.service == "test-engine" and s.name == name)
    on_b = {s.kind: s for s in spans if s.service == "node-b" and s.name == name}
    (on_a,) = [s for s in spans if s.service == "node-a" and s.name == name]
    runner_span = next(s for s in spans if s.service == "test-runner")
    assert on_b[2].parent_id == engine_span.span_id  # node B's SERVER span
    assert on_b[3].parent_id == on_b[2].span_id  # node B's CLIENT span: the forward
    assert on_a.parent_id == on_b[3].span_id  # node A's SERVER span
    assert runner_span.parent_id == on_a.span_id
    assert len({engine_span.trace_id, on_b[2].trace_id, on_b[3].trace_id, on_a.trace_id, runner_span.trace_id}) == 1
    assert on_a.attributes["gen_ai.tool.call.id"] == "call-9"

    samples = {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(metrics)
        for sample in family.samples
    }
    assert samples[("agentmsg_cluster_forwards_total", frozenset({("outcome", "ok")}))] == 1
    assert samples[("agentmsg_tool_calls_total", frozenset({("tool", "weather"), ("outcome", "ok")}))] == 1
    assert samples[("agentmsg_store_healthy", frozenset({("store", "postgres")}))] == 1
    assert samples[("agentmsg_store_pool_max", frozenset())] == 4
    assert samples[("agentmsg_runners_connected", frozenset())] == 0  # the runner is on node A


# --- the context a call carries (in this process: no tracer provider is needed to carry one) ---------------


def _carried(span_context: Any, entries: dict[str, str] | None = None) -> tuple[Any, dict[str, str]]:
    """What the clients add to a call's metadata, and what ``propagate.inject`` writes, inside a span context."""
    from opentelemetry import baggage, propagate, trace
    from opentelemetry import context as otel_context

    from agentmsg.service.telemetry import _current_context

    context = trace.set_span_in_context(trace.NonRecordingSpan(span_context))
    for key, value in (entries or {}).items():
        context = baggage.set_baggage(key, value, context)
    token = otel_context.attach(context)
    try:
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        metadata = _current_context((("authorization", "Bearer t"),))
        if metadata[1:]:  # an asyncio call gets the same pairs, as grpc.aio.Metadata
            assert tuple(_current_context((("authorization", "Bearer t"),), aio=True)) == tuple(metadata)
        return metadata, carrier
    finally:
        otel_context.detach(token)


@pytest.mark.parametrize(
    ("sampled", "state", "entries"),
    [(True, [], None), (False, [("vendor", "opaque"), ("other", "1")], None), (True, [], {"user": "ada lovelace"})],
    ids=["sampled", "tracestate", "baggage"],
)
def test_a_call_carries_the_current_context(sampled: bool, state: Any, entries: Any) -> None:
    from opentelemetry.trace import SpanContext, TraceFlags, TraceState

    span_context = SpanContext(
        0x0AF7651916CD43DD8448EB211C80319C,
        0x00F067AA0BA902B7,
        is_remote=False,
        trace_flags=TraceFlags(TraceFlags.SAMPLED if sampled else TraceFlags.DEFAULT),
        trace_state=TraceState(state),
    )
    metadata, injected = _carried(span_context, entries)
    assert metadata[0] == ("authorization", "Bearer t")  # the caller's own metadata kept, first
    assert dict(metadata[1:]) == injected
    assert injected["traceparent"] == f"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-{int(sampled):02x}"


def test_outside_any_span_a_call_carries_nothing_and_the_applications_propagators_are_used() -> None:
    from opentelemetry import propagate
    from opentelemetry.trace import INVALID_SPAN_CONTEXT, SpanContext, TraceFlags
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    metadata, injected = _carried(INVALID_SPAN_CONTEXT)
    assert (metadata, injected) == ((("authorization", "Bearer t"),), {})

    class Prefixed(TraceContextTextMapPropagator):  # a propagator of the application's own
        def inject(self, carrier: Any, context: Any = None, setter: Any = None) -> None:
            inner: dict[str, str] = {}
            super().inject(inner, context)
            carrier.update({f"x-{key}": value for key, value in inner.items()})

    default = propagate.get_global_textmap()
    propagate.set_global_textmap(Prefixed())
    try:
        metadata, injected = _carried(SpanContext(1, 2, is_remote=False, trace_flags=TraceFlags(1)))
    finally:
        propagate.set_global_textmap(default)
    assert (
        dict(metadata[1:]) == injected == {"x-traceparent": "00-00000000000000000000000000000001-0000000000000002-01"}
    )


def test_a_context_is_injected_once_while_it_stays_current() -> None:
    from opentelemetry import context as otel_context
    from opentelemetry import propagate, trace
    from opentelemetry.trace import SpanContext, TraceFlags
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    from agentmsg.service.telemetry import _current_context

    class Counting(TraceContextTextMapPropagator):
        injected = 0

        def inject(self, carrier: Any, context: Any = None, setter: Any = None) -> None:
            Counting.injected += 1
            super().inject(carrier, context)

    def inside(span_id: int) -> Any:
        span = trace.NonRecordingSpan(SpanContext(7, span_id, is_remote=False, trace_flags=TraceFlags(1)))
        return otel_context.attach(trace.set_span_in_context(span))

    own = (("authorization", "Bearer t"),)
    default = propagate.get_global_textmap()
    propagate.set_global_textmap(Counting())
    token = inside(1)
    try:
        first, second = _current_context(own, aio=True), _current_context(own, aio=True)
        assert Counting.injected == 1  # one turn's span: injected once
        assert first is not second
        assert tuple(first) == tuple(second)
        assert tuple(first) == (*own, ("traceparent", "00-00000000000000000000000000000007-0000000000000001-01"))
        assert _current_context((("authorization", "Bearer u"),))[0] == ("authorization", "Bearer u")
        assert Counting.injected == 2  # other metadata: injected again
        changing = [("authorization", "Bearer t")]
        _current_context(changing)
        changing[0] = ("authorization", "Bearer v")  # a list may change between calls: never reused
        assert _current_context(changing)[0] == ("authorization", "Bearer v")
        otel_context.detach(token)
        token = inside(2)  # the next span: its own context
        assert dict(_current_context(own)[1:])["traceparent"].endswith("-0000000000000002-01")
    finally:
        otel_context.detach(token)
        propagate.set_global_textmap(default)
    assert _current_context(own) == own  # outside any span: nothing added, nothing reused
