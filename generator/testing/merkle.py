"""An append-only RFC 6962 Merkle tree for the test transparency log.

Leaf hash = SHA-256(0x00 || body), node hash = SHA-256(0x01 || left || right). Proofs are the
RFC 6962 audit path, bottom-up. Hashes of complete (power-of-two) subtrees are cached, because a
range of leaves never changes once it exists; that keeps proofs O(log^2 n) for big demo logs.
"""

from __future__ import annotations

import hashlib


def leaf_hash(body: bytes) -> bytes:
    """RFC 6962 leaf hash of one log entry body."""
    return hashlib.sha256(b"\x00" + body).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 6962 interior node hash."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(size: int) -> int:
    """The largest power of two strictly smaller than `size` (size >= 2)."""
    k = 1
    while k * 2 < size:
        k *= 2
    return k


class MerkleTree:
    """A growing list of leaves with root and inclusion-proof queries for any past size."""

    def __init__(self) -> None:
        self._leaves: list[bytes] = []
        self._cache: dict[tuple[int, int], bytes] = {}

    def __len__(self) -> int:
        return len(self._leaves)

    def leaf(self, index: int) -> bytes:
        """The stored leaf hash at `index`."""
        return self._leaves[index]

    def append(self, body: bytes) -> int:
        """Add one entry body and return its index in the tree."""
        self._leaves.append(leaf_hash(body))
        return len(self._leaves) - 1

    def _range_hash(self, start: int, size: int) -> bytes:
        if size == 1:
            return self._leaves[start]
        key = (start, size)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        k = _split(size)
        value = node_hash(self._range_hash(start, k), self._range_hash(start + k, size - k))
        if size & (size - 1) == 0:
            self._cache[key] = value
        return value

    def root(self, size: int | None = None) -> bytes:
        """The Merkle tree hash of the first `size` leaves (default: all)."""
        size = len(self._leaves) if size is None else size
        if not 1 <= size <= len(self._leaves):
            raise ValueError(f"tree size {size} outside 1..{len(self._leaves)}")
        return self._range_hash(0, size)

    def proof(self, index: int, size: int | None = None) -> list[bytes]:
        """The audit path of leaf `index` in the tree of the first `size` leaves, bottom-up."""
        size = len(self._leaves) if size is None else size
        if not 0 <= index < size <= len(self._leaves):
            raise ValueError(f"leaf {index} not inside a tree of size {size}")
        path: list[bytes] = []
        start, width, m = 0, size, index
        # Walk top-down, collecting siblings, then reverse to bottom-up order.
        while width > 1:
            k = _split(width)
            if m < k:
                path.append(self._range_hash(start + k, width - k))
                width = k
            else:
                path.append(self._range_hash(start, k))
                start, width, m = start + k, width - k, m - k
        path.reverse()
        return path


def root_from_proof(leaf: bytes, index: int, size: int, path: list[bytes]) -> bytes:
    """Recompute the root from a leaf hash and its audit path (RFC 9162 2.1.3.2), for self-checks."""
    if index >= size:
        raise ValueError("index outside tree")
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            raise ValueError("proof too long")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ValueError("proof too short")
    return r
