"""What a client in another language relies on: reflection v1 beside v1alpha, and the google/rpc protos of the
error details shipped beside the contract."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from conftest import ServerThread
from google.protobuf import descriptor_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_reflection.v1alpha import reflection_pb2

ROOT = Path(__file__).resolve().parents[2]


def reflect(
    target: str, path: str, *requests: reflection_pb2.ServerReflectionRequest
) -> list[reflection_pb2.ServerReflectionResponse]:
    with grpc.insecure_channel(target) as channel:
        call = channel.stream_stream(
            path,
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )
        return list(call(iter(requests), timeout=10))


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
def test_reflection_is_served_as_v1_and_v1alpha(server: ServerThread, version: str) -> None:
    path = f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo"
    listed, described, itself = reflect(
        server.target,
        path,
        reflection_pb2.ServerReflectionRequest(list_services=""),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="agentmsg.v1.SessionService"),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="grpc.reflection.v1.ServerReflection"),
    )
    names = {service.name for service in listed.list_services_response.service}
    assert {"agentmsg.v1.SessionService", "agentmsg.v1.ToolService", "grpc.health.v1.Health"} <= names
    assert {"grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"} <= names
    files = [
        descriptor_pb2.FileDescriptorProto.FromString(raw)
        for raw in described.file_descriptor_response.file_descriptor_proto
    ]
    assert "agentmsg/v1/session_service.proto" in {f.name for f in files}
    (v1,) = [
        descriptor_pb2.FileDescriptorProto.FromString(raw)
        for raw in itself.file_descriptor_response.file_descriptor_proto
    ]
    assert (v1.name, v1.package) == ("grpc/reflection/v1/reflection.proto", "grpc.reflection.v1")
    assert v1.service[0].method[0].input_type == ".grpc.reflection.v1.ServerReflectionRequest"


def test_the_error_detail_protos_ship_beside_the_contract() -> None:
    """proto/google/rpc/ (fetched by make deps from the pinned sdist) declares the messages the runtime uses."""
    for name, message in (("status.proto", status_pb2.Status), ("error_details.proto", error_details_pb2.BadRequest)):
        text = (ROOT / "proto" / "google" / "rpc" / name).read_text(encoding="utf-8")
        assert "package google.rpc;" in text
        assert f"message {message.DESCRIPTOR.name} {{" in text
    assert "message ErrorInfo {" in (ROOT / "proto" / "google" / "rpc" / "error_details.proto").read_text(
        encoding="utf-8"
    )
