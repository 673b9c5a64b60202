"""Message timestamps: the contract's range (0001-01-01..9999-12-31, nanos 0..999,999,999) is enforced by the
server with INVALID_ARGUMENT naming the field, and a value stored before the rule never crashes a reader."""

from __future__ import annotations

import grpc
import pytest
from conftest import ServerThread

import agentmsg as am
from agentmsg.cli import main
from agentmsg.service import Client, status
from agentmsg.v1 import message_pb2, session_service_pb2, session_service_pb2_grpc

BAD = [
    pytest.param(-(2**62), 0, "timestamp.gte_lte", id="seconds=-2^62"),
    pytest.param(253_402_300_800, 0, "timestamp.gte_lte", id="year-10000"),
    pytest.param(1_700_000_000, -5, "timestamp.nanos", id="nanos=-5"),
    pytest.param(1_700_000_000, 2_000_000_000, "timestamp.nanos", id="nanos=2e9"),
]


def with_time(seconds: int, nanos: int, message_id: str = "m") -> message_pb2.Message:
    pb = am.UserMessage.text("hi", id=message_id).pb
    pb.timestamp.seconds, pb.timestamp.nanos = seconds, nanos
    return pb


@pytest.mark.parametrize(("seconds", "nanos", "rule"), BAD)
def test_a_bad_timestamp_is_refused_naming_the_field(server: ServerThread, seconds: int, nanos: int, rule: str) -> None:
    with grpc.insecure_channel(server.target) as channel:
        stub = session_service_pb2_grpc.SessionServiceStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            stub.AppendMessage(
                session_service_pb2.AppendMessageRequest(session_id="t", message=with_time(seconds, nanos)), timeout=10
            )
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        error = status.from_rpc_error(caught.value)
        assert isinstance(error, am.ValidationError)
        assert [(v.field, v.rule_id) for v in error.violations] == [("message.timestamp", rule)]
        request = session_service_pb2.AppendMessagesRequest(
            session_id="t", messages=[with_time(1, 0, "ok"), with_time(seconds, nanos)]
        )
        with pytest.raises(grpc.RpcError) as caught:
            stub.AppendMessages(request, timeout=10)
        error = status.from_rpc_error(caught.value)
        assert isinstance(error, am.ValidationError)
        assert [v.field for v in error.violations] == ["messages[1].timestamp"]
        with pytest.raises(grpc.RpcError) as caught:  # nothing was stored: there is no session
            stub.ListMessages(session_service_pb2.ListMessagesRequest(session_id="t"), timeout=10)
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND


def test_the_library_refuses_them_too() -> None:
    for seconds, nanos in [(-(2**62), 0), (253_402_300_800, 0), (0, -5), (0, 2_000_000_000)]:
        with pytest.raises(am.ValidationError) as caught:
            am.BaseMessage.from_proto(with_time(seconds, nanos), validate=True)
        assert [v.field for v in caught.value.violations] == ["timestamp"]
    edges = [(-62_135_596_800, 0), (253_402_300_799, 999_999_999)]  # 0001-01-01 and the last instant of 9999
    for seconds, nanos in edges:
        am.BaseMessage.from_proto(with_time(seconds, nanos), validate=True)


@pytest.mark.parametrize(("seconds", "nanos", "rule"), BAD)
def test_a_value_stored_before_the_rule_never_crashes_a_reader(
    server: ServerThread, capsys: pytest.CaptureFixture[str], seconds: int, nanos: int, rule: str
) -> None:
    # Written to the store directly, as a server before the rule would have accepted it.
    server.run(server.running.store.append("old", [with_time(seconds, nanos, "old-1"), with_time(1, 0, "old-2")]))
    with Client(server.target, timeout=10) as client:
        logged = list(client.history("old"))
        assert [item.message.id for item in logged] == ["old-1", "old-2"]
        old = logged[0].message
        assert isinstance(old.timestamp, float)
        with pytest.raises(am.ValidationError):
            old.to_json()  # ProtoJSON has no form for it: a clear error, not a ValueError from deep inside
        assert old.to_dict()["id"] == "old-1"
        assert [m.id for m in client.build_context("old")] == ["old-1", "old-2"]
        followed = []
        for item in client.subscribe("old", timeout=10):
            followed.append(item.message.id)  # type: ignore[union-attr]
            if len(followed) == 2:
                break
        assert followed == ["old-1", "old-2"]
    assert main(["tail", "old", "--target", server.target]) == 0
    out = capsys.readouterr().out
    assert "invalid time" in out
    assert "#2" in out
