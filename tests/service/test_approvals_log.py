"""agentmsg.service.approvals over a store: which decision counts, the wait, and what an append may decide on."""

from __future__ import annotations

import asyncio

import pytest

import agentmsg as am
from agentmsg.service.approvals import check_decisions, first_decision, last_call_offset, wait_for_decision
from agentmsg.service.stores import MemoryStore
from agentmsg.v1 import content_pb2

S = "s"


def call(call_id: str) -> am.AssistantMessage:
    return am.AssistantMessage([am.ToolCallContent(call_id, "rm", {"path": call_id})])


def decide(call_id: str, approved: bool = True) -> am.UserMessage:
    block = am.ToolApprovalContent.approve(call_id) if approved else am.ToolApprovalContent.deny(call_id, "no")
    return am.UserMessage([block])


def test_the_first_decision_in_the_log_counts() -> None:
    async def run() -> None:
        store = MemoryStore()
        await store.append(S, [call("c1").pb, call("c10").pb, decide("c10", False).pb, decide("c1").pb])
        await store.append(S, [decide("c1", False).pb])
        found, _ = await first_decision(store, S, "c1")
        assert found is not None
        assert found.decision == content_pb2.TOOL_APPROVAL_DECISION_APPROVED
        assert (await first_decision(store, S, "c2"))[0] is None

    asyncio.run(run())


def test_a_waiter_whose_change_event_was_dropped_still_sees_the_decision() -> None:
    """A subscriber leaving drops the session's pending change event (Store.forget): the waiter re-reads anyway."""

    async def run() -> None:
        store = MemoryStore()
        await store.append(S, [call("c1").pb])
        waiting = asyncio.ensure_future(wait_for_decision(store, S, "c1", 30))
        for _ in range(200):  # until the waiter holds the session's change event
            if S in store._waiters:
                break
            await asyncio.sleep(0.01)
        assert S in store._waiters
        store.forget(S)
        await store.append(S, [decide("c1", False).pb])
        decision = await asyncio.wait_for(waiting, 10)
        assert decision.reason == "no"

    asyncio.run(run())


def test_a_waiter_that_ends_releases_the_sessions_change_event_at_once() -> None:
    """A waiter that ends (its deadline, a cancellation, a decision found) leaves no change event registered for
    the session, with no append in between: before, the registration stayed until the session's next append."""

    async def run() -> None:
        store = MemoryStore()
        await store.append(S, [call("c1").pb, call("c2").pb, decide("c2").pb])
        assert S not in store._waiters
        with pytest.raises(TimeoutError):  # the deadline
            await wait_for_decision(store, S, "c1", 0.05)
        assert S not in store._waiters
        waiting = asyncio.ensure_future(wait_for_decision(store, S, "c1", 30))  # a cancellation
        for _ in range(200):  # until the waiter holds the session's change event
            if S in store._waiters:
                break
            await asyncio.sleep(0.01)
        assert S in store._waiters
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert S not in store._waiters
        decision = await wait_for_decision(store, S, "c2", 30)  # a decision, already in the log
        assert decision.decision == content_pb2.TOOL_APPROVAL_DECISION_APPROVED
        assert S not in store._waiters
        assert store._watching == {}

    asyncio.run(run())


def test_a_waiter_leaving_keeps_the_event_another_follower_waits_on() -> None:
    """The session's change event is shared: a waiter that ends releases only its own hold on it, so a subscriber
    still following the session is woken by the next append."""

    async def run() -> None:
        store = MemoryStore()
        await store.append(S, [call("c1").pb])
        with store.watching(S):  # a subscriber
            changed = store.changed(S)
            with pytest.raises(TimeoutError):
                await wait_for_decision(store, S, "c1", 0.05)
            assert store._waiters.get(S) is changed
            await store.append(S, [am.UserMessage.text("next").pb])
            assert changed.is_set()
        assert store._watching == {}

    asyncio.run(run())


def test_no_decision_within_the_timeout() -> None:
    async def run() -> None:
        store = MemoryStore()
        await store.append(S, [call("c1").pb])
        with pytest.raises(TimeoutError):
            await wait_for_decision(store, S, "c1", 0.05)

    asyncio.run(run())


def test_an_append_may_decide_only_on_the_sessions_calls() -> None:
    async def run() -> None:
        store = MemoryStore()
        await store.append(S, [call("c1").pb])
        await check_decisions(store, S, [decide("c1").pb])
        await check_decisions(store, S, [call("c2").pb, decide("c2").pb])  # earlier in the same batch
        with pytest.raises(am.ValidationError) as caught:
            await check_decisions(store, S, [decide("c2").pb, call("c2").pb])  # the call comes after its decision
        assert [(v.field, v.rule_id) for v in caught.value.violations] == [
            ("messages[0].user.content[0].approval.call_id", "session.approval.call")
        ]
        hosted = am.AssistantMessage([am.HostedToolCallContent("mcpr_1", "ask", "{}", status="awaiting_approval")])
        await store.append(S, [hosted.pb])
        await check_decisions(store, S, [decide("mcpr_1").pb], "message")
        with pytest.raises(am.ValidationError):
            await check_decisions(store, "other", [decide("c1").pb], "message")

    asyncio.run(run())


def test_a_reused_call_id_needs_its_own_decision() -> None:
    async def run() -> None:
        store = MemoryStore()
        await store.append(S, [call("c1").pb, decide("c1").pb, call("c1").pb])
        offset = await last_call_offset(store, S, "c1")
        assert offset == 3
        with pytest.raises(TimeoutError):  # the approval of the first c1 does not approve the second
            await wait_for_decision(store, S, "c1", 0.05, after=offset)
        await store.append(S, [decide("c1", False).pb])
        assert (await wait_for_decision(store, S, "c1", 10, after=offset)).reason == "no"
        assert await last_call_offset(store, S, "ghost") is None

    asyncio.run(run())
