"""``agentmsg.v1.ToolService``'s logic: tool runners register their tools; engines call them through the server.

Transport-neutral: requests and a :class:`~agentmsg.service.handlers.Caller` in, responses out, failures raised
as :class:`~agentmsg.errors.AgentMsgError`.

A call goes to the runner that serves the tool on this node, or, in a cluster,
is forwarded to the node that has it (:mod:`agentmsg.service.cluster`). A
runner that disconnects, a caller that cancels and a deadline that passes each
end the call with a defined outcome.

Tools can also be served from inside the server's process (:meth:`ToolHandler.host`: the MCP servers the server
hosts, :mod:`agentmsg.mcp.hosted`): registered under the same name rules, listed and claimed in the cluster as a
runner's tools are, and called directly, with no stream between: the caller's deadline bounds the call, and a caller
that cancels (or a deadline that passes) cancels it.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentmsg import _validation
from agentmsg._logtext import loggable
from agentmsg.content import ToolApprovalContent
from agentmsg.errors import (
    ConflictError,
    DeadlineExceededError,
    NotFoundError,
    UnavailableError,
    ValidationError,
    Violation,
)
from agentmsg.service.access import Access
from agentmsg.service.approvals import APPROVAL_RULE, last_call_offset, wait_for_decision
from agentmsg.service.cluster import FORWARDED_HEADER, Cluster
from agentmsg.service.handlers import Caller
from agentmsg.service.rpc import _check
from agentmsg.service.stores.base import Store
from agentmsg.service.telemetry import inject_context
from agentmsg.v1 import content_pb2, tool_pb2, tool_service_pb2

__all__ = ["TOOL_SERVICE", "LocalCall", "ToolHandler"]

log = logging.getLogger("agentmsg.service")

TOOL_SERVICE = "agentmsg.v1.ToolService"


def _error_result(call: content_pb2.ToolCallContent, text: str) -> content_pb2.ToolResultContent:
    result = content_pb2.ToolResultContent(id=call.id, name=call.name, is_error=True, index=call.index)
    result.content.add().text.text = text
    return result


RUN_METADATA_KEY = "agentmsg.run"
"""The key of a tool result's ``metadata`` where ``CallTool`` records the run: ``runner`` (the runner's name),
``runner_id`` and ``latency_ms`` (from the call's hand-off to the runner to its result, as the serving node measured
it). Set on every result a runner gave; the runner's own metadata keys are kept. Never sent to a model."""


def _answer(
    result: content_pb2.ToolResultContent, runner: _Runner, seconds: float
) -> tool_service_pb2.CallToolResponse:
    """The response carrying ``result`` (copied once, into it) with its run recorded in the result's metadata under
    :data:`RUN_METADATA_KEY`."""
    response = tool_service_pb2.CallToolResponse()
    stamped = response.result
    stamped.CopyFrom(result)
    # Field by field: the Struct's dict assignment goes through Python for each value.
    run = stamped.metadata.fields[RUN_METADATA_KEY].struct_value
    run.Clear()
    fields = run.fields
    fields["runner"].string_value = runner.name
    fields["runner_id"].string_value = runner.runner_id
    fields["latency_ms"].number_value = round(max(seconds, 0.0) * 1000, 3)
    return response


# A cancellation that comes this close to the call's deadline is the deadline: the transport (gRPC, Connect) may
# cancel the handler a moment before its own clock says the deadline has passed.
DEADLINE_SLACK = 0.1
# How long a call whose deadline passed waits for its transport to end it before ending it itself.
DEADLINE_WAIT = 1.0


@dataclass
class _Call:
    """A call waiting for its runner: the call as the caller sent it, and where its result goes."""

    call: content_pb2.ToolCallContent
    future: asyncio.Future[content_pb2.ToolResultContent]


LocalCall = Callable[[content_pb2.ToolCallContent], Awaitable[content_pb2.ToolResultContent]]
"""Tools served in the server's process: a call in, its result out (an ``is_error`` result for a failure). Its
result is trusted as it is (the tool source validated what it got from outside); cancelling it cancels the call."""


@dataclass
class _Runner:
    runner_id: str
    name: str
    tools: list[Any]
    outbox: asyncio.Queue[tool_service_pb2.ServeToolsResponse]
    # By the handle the service gave each call: call ids are the model's, and two callers may share one.
    pending: dict[str, _Call] = field(default_factory=dict)
    local: LocalCall | None = None  # tools served in this process (ToolHandler.host): called directly
    definitions: dict[str, Any] = field(default_factory=dict)  # the tools by name

    def __post_init__(self) -> None:
        self.definitions = {tool.name: tool for tool in self.tools}

    def find(self, outcome: tool_service_pb2.ToolCallOutcome) -> _Call | None:
        """The call an outcome answers: by its handle, or, from a runner older than handles, by a call id
        that only one of its waiting calls has.

        An outcome without a handle for a call id that several waiting calls share answers none of them:
        each of those calls gets an error result at once and ValidationError is raised (the runner's stream
        ends INVALID_ARGUMENT saying to echo the handle), rather than both callers waiting out their deadline.
        """
        if outcome.handle:
            return self.pending.get(outcome.handle)
        waiting = [p for p in self.pending.values() if p.call.id == outcome.call_id and not p.future.done()]
        if len(waiting) > 1:
            problem = (
                f"an outcome for call id {outcome.call_id!r} has no handle, and {len(waiting)} calls with that id "
                "are waiting: echo RunToolCall.handle in ToolCallOutcome.handle"
            )
            for pending in waiting:
                pending.future.set_result(_error_result(pending.call, f"the runner's result was refused: {problem}"))
            raise ValidationError.single("outcome.handle", "required", problem, "tool call outcome")
        return waiting[0] if waiting else None


class ToolHandler:
    """``agentmsg.v1.ToolService``'s logic: runners register; engines call through (any transport)."""

    def __init__(self, access: Access | None = None, store: Store | None = None) -> None:
        self.store = store  # the session log, where the decisions on calls that require approval are
        self.runners: dict[str, _Runner] = {}
        self.by_tool: dict[str, _Runner] = {}
        self.access = access if access is not None else Access()
        self.cluster: Cluster | None = None  # set when the node shares a PostgreSQL with others
        self._leaving: set[asyncio.Task[None]] = set()

    def _allow(self, caller: Caller, *, serve: bool) -> None:
        if self.access.enabled:
            self.access.check_tools(caller.metadata, serve=serve)

    async def ServeTools(  # noqa: N802
        self,
        request_iterator: AsyncIterator[tool_service_pb2.ServeToolsRequest],
        caller: Caller,
    ) -> AsyncIterator[tool_service_pb2.ServeToolsResponse]:
        requests = request_iterator.__aiter__()
        try:
            first = await requests.__anext__()
        except StopAsyncIteration:
            return
        self._allow(caller, serve=True)
        _check(first)
        if first.WhichOneof("kind") != "register":
            raise ValidationError([Violation("register", "required", "the first message must register tools")])
        runner = self._register(first.register)
        if self.cluster is not None:
            try:
                await self.cluster.claim(runner)
            except BaseException:
                self._unregister(runner)
                raise
        reader = asyncio.ensure_future(self._read_outcomes(runner, requests))
        getter: asyncio.Future[tool_service_pb2.ServeToolsResponse] | None = None
        try:
            yield tool_service_pb2.ServeToolsResponse(
                registered=tool_service_pb2.Registered(runner_id=runner.runner_id)
            )
            while True:
                getter = asyncio.ensure_future(runner.outbox.get())
                done, _ = await asyncio.wait({getter, reader}, return_when=asyncio.FIRST_COMPLETED)
                if getter not in done:
                    failure = reader.exception()
                    if failure is not None:  # e.g. an outcome whose bytes do not decode: the call ends with it
                        raise failure
                    break  # the runner closed its side
                response, getter = getter.result(), None
                yield response
        finally:
            self._unregister(runner)
            if self.cluster is not None:
                leaving = asyncio.ensure_future(self.cluster.release(runner))
                self._leaving.add(leaving)
                leaving.add_done_callback(self._leaving.discard)
            pending = [task for task in (getter, reader) if task is not None and not task.done()]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    def _register(self, register: tool_service_pb2.RegisterTools) -> _Runner:
        names = [tool.name for tool in register.tools]
        taken = sorted({n for n in names if n in self.by_tool} | {n for n in names if names.count(n) > 1})
        if taken:
            raise ConflictError(f"tool name(s) already served: {', '.join(taken)}")
        runner = _Runner(str(uuid.uuid4()), register.runner_name, list(register.tools), asyncio.Queue())
        self.runners[runner.runner_id] = runner
        for name in names:
            self.by_tool[name] = runner
        log.info(
            "runner %s (%s) registered %s",
            loggable(runner.name),
            runner.runner_id,
            ", ".join(loggable(n) for n in names),
        )
        return runner

    async def host(
        self, name: str, tools: Sequence[tool_pb2.ToolDefinition], call: LocalCall
    ) -> tool_service_pb2.Registered:
        """Serve ``tools`` from this process under the runner name ``name``: registered as a runner's tools are (a
        name already served is a ConflictError; in a cluster, claimed for every node), listed by ListTools, and
        each call handed to ``call`` with no hop between. Returns the registration, whose ``runner_id``
        :meth:`unhost` takes."""
        runner = self._register(tool_service_pb2.RegisterTools(runner_name=name, tools=tools))
        runner.local = call
        if self.cluster is not None:
            try:
                await self.cluster.claim(runner)
            except BaseException:
                self._unregister(runner)
                raise
        return tool_service_pb2.Registered(runner_id=runner.runner_id)

    def unhost(self, runner_id: str) -> None:
        """Stop serving the tools :meth:`host` registered (nothing when they are gone already)."""
        runner = self.runners.get(runner_id)
        if runner is None:
            return
        self._unregister(runner)
        if self.cluster is not None:
            leaving = asyncio.ensure_future(self.cluster.release(runner))
            self._leaving.add(leaving)
            leaving.add_done_callback(self._leaving.discard)

    def _unregister(self, runner: _Runner) -> None:
        self.runners.pop(runner.runner_id, None)
        for tool in runner.tools:
            if self.by_tool.get(tool.name) is runner:
                del self.by_tool[tool.name]
        for pending in runner.pending.values():
            if not pending.future.done():
                pending.future.set_result(
                    _error_result(pending.call, f"tool runner {runner.name!r} disconnected before answering")
                )
        log.info("runner %s (%s) left", loggable(runner.name), runner.runner_id)

    def _drain(self, runner: _Runner) -> None:
        """A stopping runner: its tools are taken off (a replacement may register them) and no call goes to it;
        the calls it has keep waiting for their outcomes until it closes its side."""
        self.runners.pop(runner.runner_id, None)  # serving nothing: not re-claimed by a cluster rejoin either
        for tool in runner.tools:
            if self.by_tool.get(tool.name) is runner:
                del self.by_tool[tool.name]
        if self.cluster is not None:
            leaving = asyncio.ensure_future(self.cluster.release(runner))
            self._leaving.add(leaving)
            leaving.add_done_callback(self._leaving.discard)
        # Queued behind every call already sent to it: the runner knows no call follows.
        runner.outbox.put_nowait(tool_service_pb2.ServeToolsResponse(draining=tool_service_pb2.Draining()))
        log.info(
            "runner %s (%s) is draining: %d call(s) in flight",
            loggable(runner.name),
            runner.runner_id,
            len(runner.pending),
        )

    async def _read_outcomes(
        self, runner: _Runner, requests: AsyncIterator[tool_service_pb2.ServeToolsRequest]
    ) -> None:
        async for request in requests:
            kind = request.WhichOneof("kind")
            if kind == "drain":
                self._drain(runner)
                continue
            if kind != "outcome":
                log.warning("runner %s sent %s after registering; ignored", loggable(runner.name), kind)
                continue
            outcome = request.outcome
            pending = runner.find(outcome)
            if pending is None or pending.future.done():
                continue  # answered after a cancel or a deadline: nobody waits for it
            found = _validation.violations_of(outcome)
            if found or outcome.result.id != pending.call.id or outcome.call_id != pending.call.id:
                problem = "; ".join(str(v) for v in found) or "its id does not match the call"
                pending.future.set_result(_error_result(pending.call, f"the runner's result was invalid: {problem}"))
            else:
                pending.future.set_result(outcome.result)

    async def ListTools(  # noqa: N802
        self,
        request: tool_service_pb2.ListToolsRequest,
        caller: Caller,
    ) -> tool_service_pb2.ListToolsResponse:
        self._allow(caller, serve=False)
        listed: dict[str, tool_service_pb2.RegisteredTool] = {}
        if self.cluster is not None:
            for tool, runner_name, runner_id in await self.cluster.remote_tools():
                listed[tool.name] = tool_service_pb2.RegisteredTool(
                    tool=tool, runner_name=runner_name, runner_id=runner_id
                )
        for name, runner in self.by_tool.items():
            tool = runner.definitions[name]
            listed[name] = tool_service_pb2.RegisteredTool(
                tool=tool, runner_name=runner.name, runner_id=runner.runner_id
            )
        return tool_service_pb2.ListToolsResponse(tools=[listed[name] for name in sorted(listed)])

    async def CallTool(  # noqa: N802
        self,
        request: tool_service_pb2.CallToolRequest,
        caller: Caller,
    ) -> tool_service_pb2.CallToolResponse:
        self._allow(caller, serve=False)
        _check(request)
        call = request.call
        runner = self.by_tool.get(call.name)
        if runner is None:
            metadata = caller.metadata
            forwarded = any(key == FORWARDED_HEADER for key, _ in metadata)
            address = await self.cluster.locate(call.name) if self.cluster is not None and not forwarded else None
            if address is None or self.cluster is None:
                raise NotFoundError(f"no runner serves the tool {call.name!r}")
            # The runner is on another node: call it there as the caller, within the caller's deadline.
            return await self.cluster.forward(address, request, metadata, caller.time_remaining())
        definition = runner.definitions[call.name]
        if definition.requires_approval or call.requires_approval:
            decision = await self._decision(request, caller)
            if not decision.approved:
                return tool_service_pb2.CallToolResponse(result=_error_result(call, decision.denial_text()))
            # The runner may have left while the call waited for a person.
            runner = self.by_tool.get(call.name)
            if runner is None:
                raise NotFoundError(f"no runner serves the tool {call.name!r} now that the call is approved")
        # The run's latency on the monotonic clock (uvloop's loop.time() is in whole milliseconds).
        started = time.monotonic()
        if runner.local is not None:
            local = runner.local
            # A transport that enforces the deadline cancels this handler then itself: the call is made here.
            result = await (local(call) if caller.enforced else self._call_here(local, call, caller))
            return _answer(result, runner, time.monotonic() - started)
        loop = asyncio.get_running_loop()
        # The runner knows the call by this handle; the call id goes to it unchanged (the model's, not unique).
        handle = uuid.uuid4().hex
        pending = _Call(call, loop.create_future())
        runner.pending[handle] = pending
        run = tool_service_pb2.RunToolCall(call=call, handle=handle)
        inject_context(run.trace_context)  # the runner's span joins this call's trace
        remaining = caller.time_remaining()
        deadline = None if remaining is None else loop.time() + remaining
        if remaining is not None:
            run.timeout.FromNanoseconds(int(remaining * 1e9))
        runner.outbox.put_nowait(tool_service_pb2.ServeToolsResponse(run=run))

        def stop(reason: str) -> None:
            cancel = tool_service_pb2.CancelToolCall(call_id=call.id, reason=reason, handle=handle)
            runner.outbox.put_nowait(tool_service_pb2.ServeToolsResponse(cancel=cancel))

        try:
            result = await asyncio.wait_for(asyncio.shield(pending.future), remaining)
        except TimeoutError:
            stop("deadline_exceeded")
            # The transport ends the call DEADLINE_EXCEEDED itself at this same moment, and cancels this handler
            # (over gRPC an abort racing it fails inside gRPC: ExecuteBatchError, logged with a traceback). Its
            # cancellation ends the wait; the error below is for a call the transport has not ended by then.
            await asyncio.sleep(DEADLINE_WAIT)
            raise DeadlineExceededError(f"the tool call {call.id!r} ({call.name}) overran its deadline") from None
        except asyncio.CancelledError:
            late = deadline is not None and loop.time() >= deadline - DEADLINE_SLACK
            stop("deadline_exceeded" if late else "cancelled")
            raise
        finally:
            runner.pending.pop(handle, None)
        return _answer(result, runner, time.monotonic() - started)

    async def _decision(self, request: tool_service_pb2.CallToolRequest, caller: Caller) -> ToolApprovalContent:
        """The first decision on the call in its session's log, waiting (within the caller's deadline) for one."""
        call, session_id = request.call, request.session_id
        if not session_id:
            raise ValidationError.single(
                "session_id",
                "required",
                f"the tool {call.name!r} requires approval: the call must name the session where it is decided",
                "tool call",
            )
        if self.access.enabled:
            self.access.check_session(caller.metadata, session_id)
        if self.store is None:
            raise UnavailableError("this server keeps no session log to read approvals from")
        offset = await last_call_offset(self.store, session_id, call.id)
        if offset is None:
            raise ValidationError.single(
                "call.id",
                APPROVAL_RULE,
                f"session {session_id!r} holds no tool call {call.id!r}: append the model's message before calling",
                "tool call",
            )
        try:
            # A decision after the session's last call with this id: an id reused in a later turn is a new call.
            decision = await wait_for_decision(self.store, session_id, call.id, caller.time_remaining(), after=offset)
        except TimeoutError:
            # As for a runner that overruns: the transport ends the call at its deadline and cancels this wait.
            await asyncio.sleep(DEADLINE_WAIT)
            raise DeadlineExceededError(
                f"no decision on the tool call {call.id!r} ({call.name}) in session {session_id!r} before its deadline"
            ) from None
        log.info(
            "tool call %s (%s) in session %s %s",
            loggable(call.id),
            loggable(call.name),
            loggable(session_id),
            "approved" if decision.decision == content_pb2.TOOL_APPROVAL_DECISION_APPROVED else "denied",
        )
        return ToolApprovalContent._wrap(content_pb2.Content(approval=decision))

    async def _call_here(
        self, local: LocalCall, call: content_pb2.ToolCallContent, caller: Caller
    ) -> content_pb2.ToolResultContent:
        """A call to tools served in this process, within the caller's deadline (past it, the call is cancelled:
        what it was doing hears so, as a runner would). A transport that enforces the deadline cancels this handler
        then itself: no timer is armed per call for it."""
        remaining = caller.time_remaining()
        if remaining is None or caller.enforced:
            return await local(call)
        try:
            async with asyncio.timeout(remaining):
                return await local(call)
        except TimeoutError:
            # As for a runner's call: the transport ends the call DEADLINE_EXCEEDED itself at this moment.
            await asyncio.sleep(DEADLINE_WAIT)
            raise DeadlineExceededError(f"the tool call {call.id!r} ({call.name}) overran its deadline") from None
