"""A remote engine over TLS: the client verifies the certificate by default, against the configured CA; its
credentials come from a file and never appear in an error. Against a local HTTPS endpoint with a private CA."""

from __future__ import annotations

import base64
import http.server
import json
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.engine.gateway import build_client
from service.errors import IndexUnavailable, SearchError
from service.settings import OpenSearchSettings, Settings
from tests.support.tls import make_ca_and_server_cert

USER, SECRET = "stroidok", "pa55-w0rd-секрет"


class Engine(http.server.BaseHTTPRequestHandler):
    """Answers ``GET /`` as a node does, to basic auth with USER/SECRET only."""

    def do_GET(self) -> None:
        expected = "Basic " + base64.b64encode(f"{USER}:{SECRET}".encode()).decode()
        ok = self.headers.get("Authorization") == expected
        body = json.dumps({"cluster_uuid": "tls-test", "version": {"number": "3.6.0"}} if ok else
                          {"error": {"type": "security_exception", "reason": "unauthorized"}, "status": 401})
        self.send_response(200 if ok else 401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body.encode())))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def tls_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    ca, cert, key = make_ca_and_server_cert(tmp_path_factory.mktemp("tls"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Engine)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"https://127.0.0.1:{server.server_address[1]}", ca
    server.shutdown()


def client_for(url: str, tmp_path: Path, **engine: object) -> object:
    password = tmp_path / "password"
    password.write_text(SECRET + "\n", encoding="utf-8")
    return build_client(Settings(opensearch=OpenSearchSettings.model_validate(
        {"url": url, "username": USER, "password_file": password, **engine})))


def test_a_verifying_client_accepts_the_configured_ca(tls_engine: tuple[str, Path], tmp_path: Path) -> None:
    url, ca = tls_engine
    assert client_for(url, tmp_path, ca_certs=ca).info()["cluster_uuid"] == "tls-test"  # type: ignore[attr-defined]


def test_by_default_an_unknown_ca_is_refused_with_its_own_message(tls_engine: tuple[str, Path],
                                                                  tmp_path: Path) -> None:
    url, _ = tls_engine
    with pytest.raises(IndexUnavailable, match="STROIDOK_OPENSEARCH_CA_CERTS"):
        client_for(url, tmp_path).info()  # type: ignore[attr-defined]


def test_wrong_credentials_are_reported_without_echoing_any_secret(tls_engine: tuple[str, Path],
                                                                   tmp_path: Path) -> None:
    url, ca = tls_engine
    wrong = build_client(Settings(opensearch=OpenSearchSettings.model_validate(
        {"url": url, "username": USER, "password": "not-" + SECRET, "ca_certs": ca})))
    with pytest.raises(SearchError) as refused:
        wrong.info()
    text = json.dumps(refused.value.to_dict(), ensure_ascii=False) + str(refused.value)
    assert "credentials" in text and SECRET not in text
    settings = OpenSearchSettings.model_validate({"url": url, "username": USER, "password": "not-" + SECRET})
    assert SECRET not in repr(settings) and SECRET not in str(settings.model_dump())
