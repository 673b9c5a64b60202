"""gRPC server reflection, ``grpc.reflection.v1`` beside ``grpc.reflection.v1alpha``.

grpcio-reflection serves only v1alpha; grpcurl, ``buf curl`` and newer clients
ask for v1 first. The two are one protocol under two package names: v1's
messages are v1alpha's field for field (``grpc/reflection/v1/reflection.proto``).
So one servicer answers both, and v1's file descriptor (v1alpha's, renamed) is
added to the descriptor pool, so that v1 can describe itself like any service.
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

from agentmsg.service.grpc.calls import capture, register

__all__ = ["V1ALPHA_SERVICE", "V1_SERVICE", "enable"]

V1ALPHA_SERVICE = reflection.SERVICE_NAME
V1_SERVICE = "grpc.reflection.v1.ServerReflection"
_V1_FILE = "grpc/reflection/v1/reflection.proto"


def _add_v1_descriptor(pool: descriptor_pool.DescriptorPool) -> None:
    """``grpc/reflection/v1/reflection.proto`` in ``pool``: v1alpha's file with the v1 package."""
    try:
        pool.FindFileByName(_V1_FILE)
        return
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    old, new = f".{proto.package}.", ".grpc.reflection.v1."
    proto.name, proto.package = _V1_FILE, "grpc.reflection.v1"
    proto.options.Clear()  # v1alpha's language options (packages of other languages) are not v1's
    for message in proto.message_type:
        for field in message.field:
            if field.type_name.startswith(old):
                field.type_name = new + field.type_name[len(old) :]
    for service in proto.service:
        for method in service.method:
            method.input_type = new + method.input_type[len(old) :]
            method.output_type = new + method.output_type[len(old) :]
    pool.Add(proto)


def enable(server: grpc.aio.Server, service_names: Sequence[str]) -> None:
    """Serve reflection v1 and v1alpha for ``service_names`` (both reflection services are listed too)."""
    pool = descriptor_pool.Default()
    _add_v1_descriptor(pool)
    servicer = reflection.aio.ReflectionServicer([*service_names, V1_SERVICE, V1ALPHA_SERVICE], pool=pool)
    # Both names served by one handler, made tolerant of undecodable requests like every other service.
    handlers = capture(reflection_pb2_grpc.add_ServerReflectionServicer_to_server, servicer)
    register(server, V1ALPHA_SERVICE, handlers)
    register(server, V1_SERVICE, handlers)
