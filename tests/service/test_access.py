"""Bearer tokens, TLS and mTLS."""

from __future__ import annotations

from collections.abc import Callable

import grpc
import pytest
import trustme
from conftest import ServerThread
from grpc_health.v1 import health_pb2, health_pb2_grpc

import agentmsg as am
from agentmsg.service import Client


def test_tokens_are_required_when_configured(make_server: Callable[..., ServerThread]) -> None:
    server = make_server(tokens=["s3cret", "other"])
    message = am.UserMessage.text("hi", id="u", timestamp=1)
    with Client(server.target) as anonymous, pytest.raises(am.UnauthenticatedError, match="bearer token"):
        anonymous.append("s", message)
    with Client(server.target, token="wrong") as wrong:
        with pytest.raises(am.UnauthenticatedError):
            wrong.append("s", message)
        with pytest.raises(am.UnauthenticatedError):
            list(wrong.subscribe("s", timeout=2))
        with pytest.raises(am.UnauthenticatedError):
            wrong.list_tools()
    for token in ("s3cret", "other"):
        with Client(server.target, token=token) as ok:
            assert ok.append("s", message) == 1
    # Health stays open for probes.
    with grpc.insecure_channel(server.target) as channel:
        response = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert response.status == health_pb2.HealthCheckResponse.SERVING


@pytest.fixture(scope="module")
def certificates() -> tuple[trustme.CA, trustme.LeafCert, trustme.LeafCert]:
    ca = trustme.CA()
    return ca, ca.issue_cert("localhost", "127.0.0.1"), ca.issue_cert("client.agentmsg.test")


def test_tls(
    make_server: Callable[..., ServerThread], certificates: tuple[trustme.CA, trustme.LeafCert, trustme.LeafCert]
) -> None:
    ca, server_cert, _ = certificates
    server = make_server(
        tls_cert=server_cert.cert_chain_pems[0].bytes(), tls_key=server_cert.private_key_pem.bytes(), tokens=["t"]
    )
    root = ca.cert_pem.bytes()
    with Client(server.target, root_certificates=root, token="t") as c:
        assert c.append("s", am.UserMessage.text("over tls", id="u", timestamp=1)) == 1
    with Client(server.target, timeout=2) as plaintext, pytest.raises(am.UnavailableError):
        plaintext.append("s", am.UserMessage.text("x"))


def test_mtls_refuses_a_client_without_a_certificate(
    make_server: Callable[..., ServerThread], certificates: tuple[trustme.CA, trustme.LeafCert, trustme.LeafCert]
) -> None:
    ca, server_cert, client_cert = certificates
    root = ca.cert_pem.bytes()
    server = make_server(
        tls_cert=server_cert.cert_chain_pems[0].bytes(), tls_key=server_cert.private_key_pem.bytes(), tls_client_ca=root
    )
    with Client(server.target, root_certificates=root, timeout=2) as no_cert, pytest.raises(am.UnavailableError):
        no_cert.append("s", am.UserMessage.text("x"))
    with Client(
        server.target,
        root_certificates=root,
        private_key=client_cert.private_key_pem.bytes(),
        certificate_chain=client_cert.cert_chain_pems[0].bytes(),
    ) as c:
        assert c.append("s", am.UserMessage.text("mutual", id="u", timestamp=1)) == 1
