"""RFC 3161 TimeStampResp construction for the test TSA (sigstore-offline.md 5.6).

cryptography's PKCS7 builder cannot set eContentType to id-ct-TSTInfo, so the CMS structure is
built with asn1crypto. asn1crypto is imported lazily: only the optional Rekor v2 shape needs it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime
from typing import Any


def build_timestamp_response(
    *,
    message_digest: bytes,
    gen_time: datetime,
    serial: int,
    policy: str,
    leaf_cert_der: bytes,
    sign: Callable[[bytes], bytes],
) -> bytes:
    """DER TimeStampResp: status granted, TSTInfo v1 over `message_digest`, ECDSA-SHA256 signer.

    The SignedData carries the TSA leaf; the signed attributes are contentType, messageDigest
    and signingCertificateV2, sorted as DER SET OF requires.
    """
    from asn1crypto import cms, core, tsp
    from asn1crypto import x509 as ax509

    leaf = ax509.Certificate.load(leaf_cert_der)
    tst_info = tsp.TSTInfo(
        {
            "version": "v1",
            "policy": policy,
            "message_imprint": {
                "hash_algorithm": {"algorithm": "sha256"},
                "hashed_message": message_digest,
            },
            "serial_number": serial,
            "gen_time": gen_time,
            "ordering": False,
        }
    )
    tst_der = tst_info.dump()
    signed_attrs = _signed_attributes(tst_der, leaf_cert_der)
    signature = sign(signed_attrs.dump())
    signer_info = _signer_info(leaf, signed_attrs, signature)
    signed_data = cms.SignedData(
        {
            "version": "v3",
            "digest_algorithms": [{"algorithm": "sha256"}],
            "encap_content_info": {
                "content_type": "tst_info",
                "content": core.ParsableOctetString(tst_der),
            },
            "certificates": [leaf],
            "signer_infos": [signer_info],
        }
    )
    token = cms.ContentInfo({"content_type": "signed_data", "content": signed_data})
    response = tsp.TimeStampResp({"status": {"status": "granted"}, "time_stamp_token": token})
    return bytes(response.dump())


def _signed_attributes(tst_der: bytes, leaf_cert_der: bytes) -> Any:
    """contentType, messageDigest and signingCertificateV2, sorted as DER SET OF requires."""
    from asn1crypto import cms

    attributes: list[dict[str, Any]] = [
        {"type": "content_type", "values": ["tst_info"]},
        {"type": "message_digest", "values": [hashlib.sha256(tst_der).digest()]},
        {
            "type": "signing_certificate_v2",
            "values": [
                {
                    "certs": [
                        {
                            "hash_algorithm": {"algorithm": "sha256"},
                            "cert_hash": hashlib.sha256(leaf_cert_der).digest(),
                        }
                    ]
                }
            ],
        },
    ]
    parsed = [cms.CMSAttribute(a) for a in attributes]
    parsed.sort(key=lambda a: a.dump())
    return cms.CMSAttributes(parsed)


def _signer_info(leaf: Any, signed_attrs: Any, signature: bytes) -> Any:
    """The SignerInfo of the TSA leaf (issuer and serial) over `signed_attrs`."""
    from asn1crypto import cms

    return cms.SignerInfo(
        {
            "version": "v1",
            "sid": cms.SignerIdentifier(
                {
                    "issuer_and_serial_number": {
                        "issuer": leaf.issuer,
                        "serial_number": leaf.serial_number,
                    }
                }
            ),
            "digest_algorithm": {"algorithm": "sha256"},
            "signed_attrs": signed_attrs,
            "signature_algorithm": {"algorithm": "sha256_ecdsa"},
            "signature": signature,
        }
    )
