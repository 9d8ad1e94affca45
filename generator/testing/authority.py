"""A self-contained test Sigstore authority: Fulcio-like CA, CT log, Rekor-like log, optional TSA.

Its bundles are accepted by the real `sigstore.verify.Verifier` when it is given this authority's
trusted root (`trusted_root_json`). Formats follow sigstore-offline.md sections 5.1-5.8:

- CA: P-384 root and intermediate; leaves are short-lived keyless-style P-256 certificates with an
  empty subject, a critical SAN (one email or one URI), both issuer extensions (.1.1 raw bytes,
  .1.8 DER UTF8String) and one embedded precert SCT signed by the authority's CT key.
- Rekor v1 shape (default): a `dsse` 0.0.1 entry, RFC 8785 body, a real multi-leaf RFC 6962 tree,
  a signed checkpoint and a SET; the entry-level `logIndex` is `shard_offset + tree index`.
- Rekor v2 shape (`rekor_v2=True`): a `hashedrekord` 0.0.2 entry with no SET, timed by an RFC 3161
  timestamp from the authority's TSA.

Everything long-lived (keys, CA and TSA certificates) is derived from `seed`, so the trust root is
byte-stable across regenerations. Ephemeral keys are derived from the signing inputs and all ECDSA
signatures are deterministic (RFC 6979), so a fresh authority given the same calls in the same order
produces the same bundles. Time is always a parameter; the wall clock is never read.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import rfc8785
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

from generator.model import SignerIdentity
from generator.testing.merkle import MerkleTree, leaf_hash

BUNDLE_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"
TRUSTED_ROOT_MEDIA_TYPE = "application/vnd.dev.sigstore.trustedroot+json;version=0.1"
TRUST_CONFIG_MEDIA_TYPE = "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json"
SIGNING_CONFIG_MEDIA_TYPE = "application/vnd.dev.sigstore.signingconfig.v0.2+json"
IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"

OID_ISSUER_V1 = ObjectIdentifier("1.3.6.1.4.1.57264.1.1")
OID_ISSUER_V2 = ObjectIdentifier("1.3.6.1.4.1.57264.1.8")
OID_PRECERT_SCTS = ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")
OID_TSA_POLICY = "1.3.6.1.4.1.57264.2"

DEFAULT_EPOCH = datetime(2020, 1, 1, tzinfo=UTC)
"""When the default authority's CAs and keys start being valid (must be in the past)."""

_FAR_FUTURE = datetime(2099, 12, 31, tzinfo=UTC)
_ECDSA256 = ec.ECDSA(hashes.SHA256(), deterministic_signing=True)
_ORDERS = {
    "secp256r1": 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
    "secp384r1": int(
        "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973",
        16,
    ),
}
_URI_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


# --------------------------------------------------------------------------- small encoders


def b64(data: bytes) -> str:
    """Standard base64 text, as protobuf JSON writes `bytes` fields."""
    return base64.b64encode(data).decode("ascii")


def _derive_key(seed: str, label: str, curve: ec.EllipticCurve) -> ec.EllipticCurvePrivateKey:
    """A private key fully determined by (seed, label): the trust root stays stable."""
    order = _ORDERS[curve.name]
    material = hashlib.sha512(f"{seed}\x00{label}".encode()).digest()
    material += hashlib.sha512(material).digest()
    scalar = int.from_bytes(material, "big") % (order - 1) + 1
    return ec.derive_private_key(scalar, curve)


def _serial(*parts: str) -> int:
    """A positive, 20-byte-safe serial number derived from `parts`."""
    return int.from_bytes(hashlib.sha256("\x00".join(parts).encode()).digest()[:19], "big") | 1


def spki_der(key: ec.EllipticCurvePublicKey) -> bytes:
    """SubjectPublicKeyInfo DER of a public key."""
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def key_id(key: ec.EllipticCurvePublicKey) -> bytes:
    """RFC 6962-style key ID: SHA-256 of the SPKI DER."""
    return hashlib.sha256(spki_der(key)).digest()


def _der_length(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(raw)]) + raw


def der_utf8string(text: str) -> bytes:
    """DER UTF8String (tag 0x0C)."""
    raw = text.encode()
    return b"\x0c" + _der_length(len(raw)) + raw


def der_octet_string(data: bytes) -> bytes:
    """DER OCTET STRING (tag 0x04)."""
    return b"\x04" + _der_length(len(data)) + data


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE v1 pre-authentication encoding."""
    t = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("times given to the test authority must be timezone-aware")
    return moment.astimezone(UTC).replace(microsecond=0)


def _rfc3339(moment: datetime) -> str:
    return _utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def san_for(identity: str) -> x509.GeneralName:
    """A URI SAN for `scheme://...` identities, an RFC822Name (email) otherwise."""
    if _URI_RE.match(identity):
        return x509.UniformResourceIdentifier(identity)
    return x509.RFC822Name(identity)


# --------------------------------------------------------------------------- options and log


@dataclass(frozen=True)
class SigningOptions:
    """Knobs for negative tests; the defaults give a bundle the real verifier accepts."""

    cert_lifetime: timedelta = timedelta(minutes=10)
    log_delay: timedelta = timedelta(seconds=1)
    """integratedTime (v1) = signed_at + log_delay."""
    timestamp_delay: timedelta = timedelta(seconds=1)
    """TSA genTime (v2) = signed_at + timestamp_delay."""
    embed_sct: bool = True
    leaf: LeafShape | None = None
    """A hostile leaf shape (several or no SANs, missing or repeated issuers); None is Fulcio's."""
    key_label: str | None = None
    """Derive the leaf key from this label alone, so several bundles share one signing key."""


@dataclass(frozen=True)
class LeafShape:
    """What a leaf certificate names, for identity negative tests.

    `sans` None means the one SAN of the signer; a tuple lists every SAN (emails or `scheme://`
    URIs, `san_for` decides), possibly none. `issuer_v1` / `issuers_v2` None mean the signer's
    issuer once; `()` leaves the extension out; two `issuers_v2` repeat the `.1.8` extension
    (which `CertificateBuilder` refuses, so the DER is patched and re-signed).
    """

    sans: tuple[str, ...] | None = None
    issuer_v1: str | None = None
    issuers_v2: tuple[str, ...] | None = None
    omit_issuer_v1: bool = False


@dataclass(frozen=True)
class Window:
    """A `validFor` override for one trust-root component: `start` and optional `end`."""

    start: datetime
    end: datetime | None = None

    def as_json(self) -> dict[str, str]:
        data = {"start": _rfc3339(self.start)}
        if self.end is not None:
            data["end"] = _rfc3339(self.end)
        return data


@dataclass(frozen=True)
class RootWindows:
    """Per-component `validFor` overrides of the trusted root (None keeps the default)."""

    ca: Window | None = None
    tlog: Window | None = None
    ctlog: Window | None = None
    tsa: Window | None = None
    rekor_v1: Window | None = None
    """Overrides `tlog` for the Rekor v1-shaped log only."""


@dataclass
class _Log:
    """One Rekor-like log: key, Merkle tree and naming. Mutable: the tree grows."""

    key: ec.EllipticCurvePrivateKey
    host: str
    tree_id: int
    shard_offset: int
    tree: MerkleTree

    @property
    def log_id(self) -> bytes:
        return key_id(self.key.public_key())

    @property
    def origin(self) -> str:
        return f"{self.host} - {self.tree_id}"

    def checkpoint(self, size: int) -> str:
        """A signed note over (origin, size, root) in Rekor's checkpoint layout."""
        note = f"{self.origin}\n{size}\n{b64(self.tree.root(size))}\n"
        signature = self.key.sign(note.encode(), _ECDSA256)
        return f"{note}\n\u2014 {self.host} {b64(self.log_id[:4] + signature)}\n"

    def inclusion_proof(self, index: int, size: int) -> dict[str, Any]:
        return {
            "logIndex": str(index),
            "rootHash": b64(self.tree.root(size)),
            "treeSize": str(size),
            "hashes": [b64(h) for h in self.tree.proof(index, size)],
            "checkpoint": {"envelope": self.checkpoint(size)},
        }


# --------------------------------------------------------------------------- the authority


def _tlog_json(log: _Log, valid_for: dict[str, str]) -> dict[str, Any]:
    """A transparency log's entry in the trusted root."""
    return {
        "baseUrl": f"https://{log.host}",
        "hashAlgorithm": "SHA2_256",
        "publicKey": {
            "rawBytes": b64(spki_der(log.key.public_key())),
            "keyDetails": "PKIX_ECDSA_P256_SHA_256",
            "validFor": valid_for,
        },
        "logId": {"keyId": b64(log.log_id)},
    }


def _chain_json(certs: list[x509.Certificate]) -> dict[str, Any]:
    """A certificate chain (leaf first) as the trusted root writes it."""
    return {
        "certificates": [
            {"rawBytes": b64(c.public_bytes(serialization.Encoding.DER))} for c in certs
        ]
    }


class TestAuthority:
    """A Fulcio + CT + Rekor (+ TSA) stand-in whose trust root the real sigstore verifier accepts.

    `seed` fixes every long-lived key and CA certificate. `ct_seed`, `rekor_seed` and `tsa_seed`
    override single components, to build look-alike authorities for negative tests (an unknown CT
    key, an unknown Rekor key, a rogue TSA). `shard_offset` is added to the tree index to form the
    entry-level (global) `logIndex`, as production's sharded Rekor does.
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        seed: str = "evidence-dashboard",
        *,
        name: str = "evidence-dashboard test",
        epoch: datetime = DEFAULT_EPOCH,
        shard_offset: int = 0,
        ct_seed: str | None = None,
        rekor_seed: str | None = None,
        tsa_seed: str | None = None,
    ) -> None:
        self.seed = seed
        self.name = name
        self.epoch = _utc(epoch)
        self.shard_offset = shard_offset
        self._root_key = _derive_key(seed, "ca-root", ec.SECP384R1())
        self._inter_key = _derive_key(seed, "ca-intermediate", ec.SECP384R1())
        self._ct_key = _derive_key(ct_seed or seed, "ct-log", ec.SECP256R1())
        rekor = rekor_seed or seed
        self._v1 = _Log(
            _derive_key(rekor, "rekor-v1", ec.SECP256R1()),
            "rekor.test.invalid",
            _serial(rekor, "tree-v1") % 10**18,
            shard_offset,
            MerkleTree(),
        )
        self._v2 = _Log(
            _derive_key(rekor, "rekor-v2", ec.SECP256R1()),
            "log2.rekor.test.invalid",
            _serial(rekor, "tree-v2") % 10**18,
            0,
            MerkleTree(),
        )
        tsa = tsa_seed or seed
        self._tsa_root_key = _derive_key(tsa, "tsa-root", ec.SECP384R1())
        self._tsa_leaf_key = _derive_key(tsa, "tsa-leaf", ec.SECP256R1())
        self.root_cert = self._build_root()
        self.intermediate_cert = self._build_intermediate()
        self.tsa_root_cert, self.tsa_leaf_cert = self._build_tsa_chain(tsa)
        self._sign_count = 0

    # ------------------------------------------------------------------ certificates

    def _name(self, cn: str) -> x509.Name:
        return x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, self.name),
                x509.NameAttribute(NameOID.COMMON_NAME, cn),
            ]
        )

    def _build_root(self) -> x509.Certificate:
        pub = self._root_key.public_key()
        return (
            x509.CertificateBuilder()
            .subject_name(self._name(f"{self.name} root"))
            .issuer_name(self._name(f"{self.name} root"))
            .public_key(pub)
            .serial_number(_serial(self.seed, "ca-root"))
            .not_valid_before(self.epoch)
            .not_valid_after(_FAR_FUTURE)
            .add_extension(x509.BasicConstraints(ca=True, path_length=1), critical=True)
            .add_extension(_ca_key_usage(), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(pub), critical=False)
            .sign(self._root_key, hashes.SHA384(), ecdsa_deterministic=True)
        )

    def _build_intermediate(self) -> x509.Certificate:
        pub = self._inter_key.public_key()
        return (
            x509.CertificateBuilder()
            .subject_name(self._name(f"{self.name} intermediate"))
            .issuer_name(self.root_cert.subject)
            .public_key(pub)
            .serial_number(_serial(self.seed, "ca-intermediate"))
            .not_valid_before(self.epoch)
            .not_valid_after(_FAR_FUTURE)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(_ca_key_usage(), critical=True)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(pub), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._root_key.public_key()),
                critical=False,
            )
            .sign(self._root_key, hashes.SHA384(), ecdsa_deterministic=True)
        )

    def _build_tsa_chain(self, tsa_seed: str) -> tuple[x509.Certificate, x509.Certificate]:
        root_pub = self._tsa_root_key.public_key()
        root_name = self._name(f"{self.name} TSA root")
        root = (
            x509.CertificateBuilder()
            .subject_name(root_name)
            .issuer_name(root_name)
            .public_key(root_pub)
            .serial_number(_serial(tsa_seed, "tsa-root"))
            .not_valid_before(self.epoch)
            .not_valid_after(_FAR_FUTURE)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(_ca_key_usage(), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(root_pub), critical=False)
            .sign(self._tsa_root_key, hashes.SHA384(), ecdsa_deterministic=True)
        )
        leaf_pub = self._tsa_leaf_key.public_key()
        leaf = (
            x509.CertificateBuilder()
            .subject_name(self._name(f"{self.name} TSA"))
            .issuer_name(root_name)
            .public_key(leaf_pub)
            .serial_number(_serial(tsa_seed, "tsa-leaf"))
            .not_valid_before(self.epoch)
            .not_valid_after(_FAR_FUTURE)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=False,
                    crl_sign=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(leaf_pub), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(root_pub), critical=False
            )
            .sign(self._tsa_root_key, hashes.SHA384(), ecdsa_deterministic=True)
        )
        return root, leaf

    def issue_leaf(
        self,
        signer: SignerIdentity,
        not_before: datetime,
        *,
        lifetime: timedelta = timedelta(minutes=10),
        embed_sct: bool = True,
        key: ec.EllipticCurvePrivateKey | None = None,
        shape: LeafShape | None = None,
    ) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        """A keyless-style leaf for `signer` valid from `not_before` for `lifetime`.

        The SCT is computed over the certificate built without it (the precertificate TBS), and the
        equality with cryptography's `tbs_precertificate_bytes` of the final leaf is asserted.
        """
        start = _utc(not_before)
        self._sign_count += 1
        if key is None:
            key = _derive_key(
                self.seed,
                f"leaf\x00{signer.issuer}\x00{signer.identity}\x00{start.isoformat()}"
                f"\x00{self._sign_count}",
                ec.SECP256R1(),
            )
        serial = _serial(self.seed, "leaf", str(self._sign_count), start.isoformat())
        builder = self._leaf_builder(key.public_key(), serial, start, lifetime)
        builder = _identity_extensions(builder, signer, shape or LeafShape())
        precert = self._sign_leaf(builder)
        if not embed_sct:
            return key, precert
        sct_list = self._sct_list(precert.tbs_certificate_bytes, start)
        leaf = self._sign_leaf(
            builder.add_extension(
                x509.UnrecognizedExtension(OID_PRECERT_SCTS, der_octet_string(sct_list)),
                critical=False,
            )
        )
        repeated = shape is not None and len(shape.issuers_v2 or ()) > 1
        if not repeated:  # cryptography refuses to parse a repeated extension
            assert leaf.tbs_precertificate_bytes == precert.tbs_certificate_bytes, "SCT TBS drift"
        return key, leaf

    def _leaf_builder(
        self, pub: ec.EllipticCurvePublicKey, serial: int, start: datetime, lifetime: timedelta
    ) -> x509.CertificateBuilder:
        """A code-signing leaf under the intermediate, before its identity extensions."""
        return (
            x509.CertificateBuilder()
            .subject_name(x509.Name([]))
            .issuer_name(self.intermediate_cert.subject)
            .public_key(pub)
            .serial_number(serial)
            .not_valid_before(start)
            .not_valid_after(start + lifetime)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=False,
                    crl_sign=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(pub), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._inter_key.public_key()),
                critical=False,
            )
        )

    def _sign_leaf(self, builder: x509.CertificateBuilder) -> x509.Certificate:
        """Sign a leaf; a placeholder OID (a repeated `.1.8`) is patched in and re-signed."""
        cert = builder.sign(self._inter_key, hashes.SHA384(), ecdsa_deterministic=True)
        tbs = cert.tbs_certificate_bytes
        if _PLACEHOLDER_DER not in tbs:
            return cert
        patched = tbs.replace(_PLACEHOLDER_DER, _ISSUER_V2_DER)
        der = cert.public_bytes(serialization.Encoding.DER)
        old_sig = _der_tlv(0x03, b"\x00" + cert.signature)
        body_start = der.index(tbs)
        algorithm = der[body_start + len(tbs) : len(der) - len(old_sig)]
        signature = self._inter_key.sign(
            patched, ec.ECDSA(hashes.SHA384(), deterministic_signing=True)
        )
        new_der = _der_tlv(0x30, patched + algorithm + _der_tlv(0x03, b"\x00" + signature))
        return x509.load_der_x509_certificate(new_der)

    def _sct_list(self, tbs: bytes, when: datetime) -> bytes:
        """One RFC 6962 precert SCT from the CT key, wrapped in a 2-byte-length SCT list."""
        timestamp = int(when.timestamp() * 1000).to_bytes(8, "big")
        issuer_key_hash = key_id(self._inter_key.public_key())
        signed = (
            b"\x00\x00"
            + timestamp
            + b"\x00\x01"
            + issuer_key_hash
            + len(tbs).to_bytes(3, "big")
            + tbs
            + b"\x00\x00"
        )
        signature = self._ct_key.sign(signed, _ECDSA256)
        sct = (
            b"\x00"
            + key_id(self._ct_key.public_key())
            + timestamp
            + b"\x00\x00"
            + b"\x04\x03"
            + len(signature).to_bytes(2, "big")
            + signature
        )
        entry = len(sct).to_bytes(2, "big") + sct
        return len(entry).to_bytes(2, "big") + entry

    # ------------------------------------------------------------------ trust root

    def trusted_root(
        self,
        *,
        include_tsa: bool = True,
        valid_from: datetime | None = None,
        windows: RootWindows | None = None,
    ) -> dict[str, Any]:
        """The trusted root as protobuf-JSON data. `valid_from` defaults to the authority epoch;
        `windows` overrides single components' `validFor` (for validity-window tests)."""
        start = {"start": _rfc3339(valid_from or self.epoch)}
        win = windows or RootWindows()

        def valid(override: Window | None) -> dict[str, str]:
            return override.as_json() if override is not None else start

        def tlog(log: _Log) -> dict[str, Any]:
            return _tlog_json(
                log, valid(win.rekor_v1 if log is self._v1 and win.rekor_v1 else win.tlog)
            )

        root: dict[str, Any] = {
            "mediaType": TRUSTED_ROOT_MEDIA_TYPE,
            "tlogs": [tlog(self._v1), tlog(self._v2)],
            "certificateAuthorities": [
                {
                    "subject": {
                        "organization": self.name,
                        "commonName": f"{self.name} intermediate",
                    },
                    "uri": "https://fulcio.test.invalid",
                    "certChain": _chain_json([self.intermediate_cert, self.root_cert]),
                    "validFor": valid(win.ca),
                }
            ],
            "ctlogs": [self._ctlog_json(valid(win.ctlog))],
        }
        if include_tsa:
            root["timestampAuthorities"] = [
                {
                    "subject": {"organization": self.name, "commonName": f"{self.name} TSA"},
                    "uri": "https://tsa.test.invalid/api/v1/timestamp",
                    "certChain": _chain_json([self.tsa_leaf_cert, self.tsa_root_cert]),
                    "validFor": valid(win.tsa),
                }
            ]
        return root

    def _ctlog_json(self, valid_for: dict[str, str]) -> dict[str, Any]:
        """The trusted root's CT log entry."""
        return {
            "baseUrl": "https://ctfe.test.invalid/test",
            "hashAlgorithm": "SHA2_256",
            "publicKey": {
                "rawBytes": b64(spki_der(self._ct_key.public_key())),
                "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                "validFor": valid_for,
            },
            "logId": {"keyId": b64(key_id(self._ct_key.public_key()))},
        }

    def trusted_root_json(
        self,
        *,
        include_tsa: bool = True,
        valid_from: datetime | None = None,
        windows: RootWindows | None = None,
    ) -> bytes:
        """The trusted root file (`TrustedRoot.from_file` reads it): 2-space JSON plus newline."""
        data = self.trusted_root(include_tsa=include_tsa, valid_from=valid_from, windows=windows)
        return (json.dumps(data, indent=2) + "\n").encode()

    def trust_config_json(
        self, *, include_tsa: bool = True, valid_from: datetime | None = None
    ) -> bytes:
        """A ClientTrustConfig wrapping the trusted root, for `sigstore --trust-config`."""
        data = {
            "mediaType": TRUST_CONFIG_MEDIA_TYPE,
            "trustedRoot": self.trusted_root(include_tsa=include_tsa, valid_from=valid_from),
            "signingConfig": {"mediaType": SIGNING_CONFIG_MEDIA_TYPE},
        }
        return (json.dumps(data, indent=2) + "\n").encode()

    # ------------------------------------------------------------------ signing

    @property
    def log_size(self) -> int:
        """Entries in the Rekor v1-shaped log."""
        return len(self._v1.tree)

    def add_filler_entries(self, count: int, *, rekor_v2: bool = False) -> None:
        """Append `count` unrelated entries, so later entries sit inside a multi-leaf tree."""
        log = self._v2 if rekor_v2 else self._v1
        for _ in range(count):
            log.tree.append(b"filler-%d" % len(log.tree))

    def sign_dsse(
        self,
        payload: bytes,
        *,
        signer: SignerIdentity,
        signed_at: datetime,
        payload_type: str = IN_TOTO_PAYLOAD_TYPE,
        rekor_v2: bool = False,
        options: SigningOptions | None = None,
    ) -> bytes:
        """Sign `payload` as a DSSE envelope and return Sigstore bundle v0.3 JSON bytes."""
        opts = options or SigningOptions()
        start = _utc(signed_at)
        key = None
        if opts.key_label is not None:
            key = _derive_key(self.seed, f"shared-leaf\x00{opts.key_label}", ec.SECP256R1())
        key, leaf = self.issue_leaf(
            signer,
            start,
            lifetime=opts.cert_lifetime,
            embed_sct=opts.embed_sct,
            key=key,
            shape=opts.leaf,
        )
        signature = key.sign(pae(payload_type, payload), _ECDSA256)
        envelope = {
            "payload": b64(payload),
            "payloadType": payload_type,
            "signatures": [{"sig": b64(signature)}],
        }
        leaf_der = leaf.public_bytes(serialization.Encoding.DER)
        material: dict[str, Any] = {"certificate": {"rawBytes": b64(leaf_der)}}
        if rekor_v2:
            material["tlogEntries"] = [self._v2_entry(payload_type, payload, signature, leaf_der)]
            stamp = self.timestamp(signature, start + opts.timestamp_delay)
            material["timestampVerificationData"] = {
                "rfc3161Timestamps": [{"signedTimestamp": b64(stamp)}]
            }
        else:
            material["tlogEntries"] = [
                self._v1_entry(envelope, payload, signature, leaf, start + opts.log_delay)
            ]
        bundle = {
            "mediaType": BUNDLE_MEDIA_TYPE,
            "verificationMaterial": material,
            "dsseEnvelope": envelope,
        }
        return (json.dumps(bundle, indent=2) + "\n").encode()

    def _v1_entry(
        self,
        envelope: dict[str, Any],
        payload: bytes,
        signature: bytes,
        leaf: x509.Certificate,
        integrated: datetime,
    ) -> dict[str, Any]:
        pem = leaf.public_bytes(serialization.Encoding.PEM)
        body = rfc8785.dumps(
            {
                "apiVersion": "0.0.1",
                "kind": "dsse",
                "spec": {
                    "envelopeHash": {
                        "algorithm": "sha256",
                        "value": hashlib.sha256(rfc8785.dumps(envelope)).hexdigest(),
                    },
                    "payloadHash": {
                        "algorithm": "sha256",
                        "value": hashlib.sha256(payload).hexdigest(),
                    },
                    "signatures": [{"signature": b64(signature), "verifier": b64(pem)}],
                },
            }
        )
        log = self._v1
        index = log.tree.append(body)
        global_index = log.shard_offset + index
        integrated_time = int(integrated.timestamp())
        promise = rfc8785.dumps(
            {
                "body": b64(body),
                "integratedTime": integrated_time,
                "logID": log.log_id.hex(),
                "logIndex": global_index,
            }
        )
        return {
            "logIndex": str(global_index),
            "logId": {"keyId": b64(log.log_id)},
            "kindVersion": {"kind": "dsse", "version": "0.0.1"},
            "integratedTime": str(integrated_time),
            "inclusionPromise": {"signedEntryTimestamp": b64(log.key.sign(promise, _ECDSA256))},
            "inclusionProof": log.inclusion_proof(index, index + 1),
            "canonicalizedBody": b64(body),
        }

    def _v2_entry(
        self, payload_type: str, payload: bytes, signature: bytes, leaf_der: bytes
    ) -> dict[str, Any]:
        body = rfc8785.dumps(
            {
                "apiVersion": "0.0.2",
                "kind": "hashedrekord",
                "spec": {
                    "hashedRekordV002": {
                        "data": {
                            "algorithm": "SHA2_256",
                            "digest": b64(hashlib.sha256(pae(payload_type, payload)).digest()),
                        },
                        "signature": {
                            "content": b64(signature),
                            "verifier": {
                                "x509Certificate": {"rawBytes": b64(leaf_der)},
                                "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                            },
                        },
                    }
                },
            }
        )
        log = self._v2
        index = log.tree.append(body)
        return {
            "logIndex": str(index),
            "logId": {"keyId": b64(log.log_id)},
            "kindVersion": {"kind": "hashedrekord", "version": "0.0.2"},
            "inclusionProof": log.inclusion_proof(index, index + 1),
            "canonicalizedBody": b64(body),
        }

    def reprove(self, bundle_json: bytes) -> bytes:
        """Rewrite the bundle's inclusion proof and checkpoint against the log's current size.

        Models fetching a later proof from a grown tree; the SET and everything else stay as signed.
        """
        bundle = json.loads(bundle_json)
        entry = bundle["verificationMaterial"]["tlogEntries"][0]
        log = self._v2 if entry["kindVersion"]["kind"] == "hashedrekord" else self._v1
        index = int(entry["inclusionProof"]["logIndex"])
        body = base64.b64decode(entry["canonicalizedBody"])
        if index >= len(log.tree) or leaf_hash(body) != log.tree.leaf(index):
            raise ValueError("bundle entry is not in this authority's log")
        entry["inclusionProof"] = log.inclusion_proof(index, len(log.tree))
        return (json.dumps(bundle, indent=2) + "\n").encode()

    # ------------------------------------------------------------------ RFC 3161

    def timestamp(self, message: bytes, gen_time: datetime) -> bytes:
        """A DER TimeStampResp (status granted) over SHA-256(`message`), signed by the TSA leaf."""
        from generator.testing.tsa import build_timestamp_response

        return build_timestamp_response(
            message_digest=hashlib.sha256(message).digest(),
            gen_time=_utc(gen_time),
            serial=_serial(self.seed, "tsa", b64(message)),
            policy=OID_TSA_POLICY,
            leaf_cert_der=self.tsa_leaf_cert.public_bytes(serialization.Encoding.DER),
            sign=lambda data: self._tsa_leaf_key.sign(data, _ECDSA256),
        )


_PLACEHOLDER_OID = ObjectIdentifier("1.3.6.1.4.1.57264.1.127")
"""Same DER length as `.1.8`; stands in for a repeated issuer extension until patched."""
_PLACEHOLDER_DER = b"\x06\x0a" + bytes.fromhex("2b0601040183bf30017f")
_ISSUER_V2_DER = b"\x06\x0a" + bytes.fromhex("2b0601040183bf300108")


def _der_tlv(tag: int, content: bytes) -> bytes:
    return bytes([tag]) + _der_length(len(content)) + content


def _identity_extensions(
    builder: x509.CertificateBuilder, signer: SignerIdentity, shape: LeafShape
) -> x509.CertificateBuilder:
    """The SAN and OIDC issuer extensions `shape` asks for (Fulcio's by default)."""
    sans: Sequence[str] = (signer.identity,) if shape.sans is None else shape.sans
    if sans:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([san_for(s) for s in sans]), critical=True
        )
    if not shape.omit_issuer_v1:
        v1 = signer.issuer if shape.issuer_v1 is None else shape.issuer_v1
        builder = builder.add_extension(
            x509.UnrecognizedExtension(OID_ISSUER_V1, v1.encode()), critical=False
        )
    v2s = (signer.issuer,) if shape.issuers_v2 is None else shape.issuers_v2
    for position, issuer in enumerate(v2s):
        oid = OID_ISSUER_V2 if position == 0 else _PLACEHOLDER_OID
        if position > 1:
            raise ValueError("at most two .1.8 issuer extensions are supported")
        builder = builder.add_extension(
            x509.UnrecognizedExtension(oid, der_utf8string(issuer)), critical=False
        )
    return builder


def _ca_key_usage() -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=False,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=True,
        crl_sign=True,
        encipher_only=False,
        decipher_only=False,
    )
