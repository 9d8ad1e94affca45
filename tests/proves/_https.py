"""A site folder served over HTTPS on 127.0.0.1 by `http.server`, with a throw-away test CA.

`serve_https(folder, ca)` yields the base URL; the client trusts the CA only through
`--site-ca-bundle` (or `SiteFetcher(ca_bundle=...)`) and reaches the loopback address only
through `--allow-private-site`. `Faults` lets a test make the server misbehave on one path:
drop the connection half-way, send more bytes than asked, redirect elsewhere, stream forever.
"""

from __future__ import annotations

import datetime
import http.server
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

_FAR = datetime.datetime(2100, 1, 1, tzinfo=datetime.UTC)
_PAST = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)


@dataclass(frozen=True)
class SiteCA:
    """A CA certificate file and a server certificate + key for 127.0.0.1 it issued."""

    ca_pem: Path
    cert_pem: Path
    key_pem: Path


def make_ca(folder: Path) -> SiteCA:
    folder.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "evidence-dashboard test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(_PAST)
        .not_valid_after(_FAR)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(2)
        .not_valid_before(_PAST)
        .not_valid_after(_FAR)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    out = SiteCA(folder / "ca.pem", folder / "server.pem", folder / "server.key")
    out.ca_pem.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    out.cert_pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    out.key_pem.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return out


@dataclass
class Faults:
    """Per-path misbehaviour: path (as requested, without the leading slash) -> action."""

    drop_half: set[str] = field(default_factory=set)
    """Announce the whole length, send half, close."""
    endless: set[str] = field(default_factory=set)
    """Stream bytes without a length until the client goes away."""
    redirect: dict[str, str] = field(default_factory=dict)
    """Answer 302 to this absolute URL."""
    requested: list[str] = field(default_factory=list)
    """Every path asked for, in order."""
    sent: dict[str, int] = field(default_factory=dict)
    """Bytes the server managed to write per endless path."""


def _handler(root: Path, faults: Faults) -> type[http.server.SimpleHTTPRequestHandler]:
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            path = self.path.split("?", 1)[0].lstrip("/")
            faults.requested.append(path)
            if path in faults.redirect:
                self.send_response(302)
                self.send_header("Location", faults.redirect[path])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if path in faults.endless:
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.end_headers()
                block = b"x" * 65536
                sent = 0
                try:
                    while sent < 1 << 34:
                        self.wfile.write(block)
                        sent += len(block)
                        faults.sent[path] = sent
                except OSError:
                    pass
                self.close_connection = True
                return
            if path in faults.drop_half:
                data = (root / path).read_bytes()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            super().do_GET()

    return Handler


@contextmanager
def serve_https(root: Path, ca: SiteCA, faults: Faults | None = None) -> Iterator[str]:
    """Serve `root` over HTTPS on 127.0.0.1 (a free port); yields `https://127.0.0.1:PORT/`."""
    faults = faults if faults is not None else Faults()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(root, faults))
    server.daemon_threads = True
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(ca.cert_pem), str(ca.key_pem))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, name="https-site", daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
