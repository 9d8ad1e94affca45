"""Safe, in-memory extraction of an evidence layer (a gzip tar) into bundle-relative files.

Only regular files and directories are accepted; absolute paths, `..`, links, devices, FIFOs and
duplicate members are refused. The gzip stream is decompressed incrementally and counted, so a
gzip bomb or an oversized tar stops as soon as a cap is passed. Nothing is written to disk.
"""

from __future__ import annotations

import gzip
import io
import re
import tarfile
import zlib

from .types import Limits, cap_error, integrity_error

PREFIX = "summary-bundle"
MARKERS = ("recipe.yaml", "manifest.json")
WHERE = "evidence layer"

RATIO_FLOOR = 1024 * 1024
"""The ratio cap applies once the stream passes this size: tar padding of tiny layers is fine."""

_KINDS = {
    tarfile.SYMTYPE: "a symbolic link",
    tarfile.LNKTYPE: "a hard link",
    tarfile.CHRTYPE: "a character device",
    tarfile.BLKTYPE: "a block device",
    tarfile.FIFOTYPE: "a FIFO",
}


class _CountingReader(io.RawIOBase):
    """Decompresses on demand and refuses to yield more than the unpacked/ratio caps allow."""

    def __init__(self, blob: bytes, limits: Limits) -> None:
        self._gzip = gzip.GzipFile(fileobj=io.BytesIO(blob), mode="rb")
        self._limits = limits
        self._compressed = max(len(blob), 1)
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._gzip.read(len(buffer))
        self.count += len(data)
        limits = self._limits
        if self.count > limits.unpacked_total:
            raise cap_error(
                "the uncompressed layer",
                "unpacked_total",
                limits.unpacked_total,
                where=WHERE,
                found=f"more than {limits.unpacked_total} bytes",
            )
        if self.count > RATIO_FLOOR and self.count > limits.unpack_ratio * self._compressed:
            raise cap_error(
                "the layer's compression ratio",
                "unpack_ratio",
                limits.unpack_ratio,
                where=WHERE,
                found=f"{self.count} bytes from {self._compressed} compressed",
            )
        buffer[: len(data)] = data
        return len(data)


def _member_path(member: tarfile.TarInfo) -> str:
    """The member's normalised relative path, or raise for an absolute or escaping one."""
    return _normalised_path(member.name)


def _normalised_path(raw: str) -> str:
    if raw.startswith("/") or "\\" in raw or (len(raw) > 1 and raw[1] == ":"):
        raise integrity_error(
            "layer has a member with an absolute path",
            where=WHERE,
            expected="relative paths only",
            found=repr(raw),
        )
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise integrity_error(
            "layer has a member whose path contains '..'",
            where=WHERE,
            expected="paths inside the bundle",
            found=repr(raw),
        )
    if not parts or any("\x00" in p for p in parts):
        raise integrity_error(
            "layer has a member with an empty or invalid path", where=WHERE, found=repr(raw)
        )
    return "/".join(parts)


def _kind_check(member: tarfile.TarInfo) -> None:
    if member.isreg() or member.isdir():
        return
    kind = _KINDS.get(member.type, f"an entry of tar type {member.type!r}")
    raise integrity_error(
        f"layer holds {kind}, which is not allowed",
        where=WHERE,
        expected="regular files and directories only",
        found=f"{member.name!r} is {kind}",
    )


def _read_members(blob: bytes, limits: Limits) -> tuple[dict[str, bytes], set[str]]:
    """The layer's files and directories: the fast reader when it applies, else `tarfile`."""
    found = _read_plain_members(blob, limits)
    if found is not None:
        return found
    return _read_members_tarfile(blob, limits)


def _gunzip_plain(blob: bytes, limits: Limits) -> bytes | None:
    """The whole layer decompressed, or None unless it is one clean gzip member within the caps.

    None sends the layer to the streaming `tarfile` reader, which gives the exact outcome
    (including the cap errors) for everything unusual; the bound keeps a bomb cheap here.
    """
    bound = min(limits.unpacked_total, max(RATIO_FLOOR, limits.unpack_ratio * max(len(blob), 1)))
    decompressor = zlib.decompressobj(wbits=31)  # gzip wrapper, CRC and length checked
    try:
        data = decompressor.decompress(blob, bound + 1)
    except zlib.error:
        return None
    if (
        len(data) > bound
        or not decompressor.eof
        or decompressor.unused_data
        or decompressor.unconsumed_tail
    ):
        return None
    return data


_OCTAL_FIELD = re.compile(rb" *[0-7]* *(?:\0.*)?", re.DOTALL)
"""A number field `tarfile` reads as octal (stricter than it: base-256 and odd spacing excluded)."""
_NUMBER_FIELDS = (
    (100, 108),
    (108, 116),
    (116, 124),
    (124, 136),
    (136, 148),
    (148, 156),
    (329, 337),
    (337, 345),
)
_PLAIN_TYPES = (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE)


def _octal(header: bytes, start: int, end: int) -> int:
    """The value of a number field that matched `_OCTAL_FIELD` (as `tarfile.nti` reads it)."""
    return int(header[start:end].split(b"\0", 1)[0].strip() or b"0", 8)


def _read_plain_members(blob: bytes, limits: Limits) -> tuple[dict[str, bytes], set[str]] | None:
    """`_read_members_tarfile` for the common layer: one gzip member, plain ustar/GNU headers.

    Only regular files and directories with ASCII names, valid (unsigned) checksums and octal
    numbers, ending in a zero block, are read here; anything else (pax or GNU long-name headers,
    links, truncation, ...) returns None so that `tarfile` decides, which keeps every refusal
    and every accepted layout exactly as before. The member checks are the same, in order.
    """
    data = _gunzip_plain(blob, limits)
    if data is None:
        return None
    files: dict[str, bytes] = {}
    dirs: set[str] = set()
    total = 0
    entries = 0
    offset = 0
    size_of_data = len(data)
    while True:
        header = data[offset : offset + 512]
        if len(header) != 512:
            return None
        if header.count(0) == 512:
            break  # end-of-archive block: tarfile stops here too
        parsed = _plain_header(header)
        if parsed is None:
            return None
        name, size, is_dir = parsed
        offset += 512
        entries += 1
        if entries > limits.tar_entries:
            raise cap_error(
                "the layer's tar",
                "tar_entries",
                limits.tar_entries,
                where=WHERE,
                found=f"more than {limits.tar_entries} entries",
            )
        path = _normalised_path(name)
        if path in files or path in dirs:
            raise integrity_error(
                "layer has a duplicate member",
                where=WHERE,
                expected="each path once",
                found=repr(path),
            )
        if is_dir:
            dirs.add(path)  # tarfile skips no data blocks after a directory header
            continue
        total += size
        if total > limits.unpacked_total:
            raise cap_error(
                "the layer's files",
                "unpacked_total",
                limits.unpacked_total,
                where=WHERE,
                found=f"more than {limits.unpacked_total} bytes",
            )
        if offset + size > size_of_data:
            return None
        files[path] = data[offset : offset + size]
        offset += (size + 511) // 512 * 512
    _check_no_file_parents(files)
    return files, dirs


def _plain_header(header: bytes) -> tuple[str, int, bool] | None:
    """(name, size, is a directory) of a plain ustar/GNU header, or None for anything else."""
    kind = header[156:157]
    if kind not in _PLAIN_TYPES:
        return None
    for start, end in _NUMBER_FIELDS:
        if _OCTAL_FIELD.fullmatch(header, start, end) is None:
            return None
    if _octal(header, 148, 156) != sum(header) - sum(header[148:156]) + 256:
        return None  # tarfile also accepts the signed sum: let it decide
    size = _octal(header, 124, 136)
    raw_name, raw_prefix = header[0:100], header[345:500]
    name_end, prefix_end = raw_name.find(b"\0"), raw_prefix.find(b"\0")
    raw_name = raw_name if name_end < 0 else raw_name[:name_end]
    raw_prefix = raw_prefix if prefix_end < 0 else raw_prefix[:prefix_end]
    if not (raw_name.isascii() and raw_prefix.isascii()):
        return None
    name, prefix = raw_name.decode("ascii"), raw_prefix.decode("ascii")
    is_dir = kind == tarfile.DIRTYPE or (kind == tarfile.AREGTYPE and name.endswith("/"))
    if is_dir:
        name = name.rstrip("/")
    if prefix:
        name = prefix + "/" + name
    if is_dir:
        name = name.rstrip("/")
    return name, size, is_dir


def _check_no_file_parents(files: dict[str, bytes]) -> None:
    for path in files:
        parent = path.rpartition("/")[0]
        while parent:
            if parent in files:
                raise integrity_error(
                    "layer has a file that is also a directory", where=WHERE, found=repr(parent)
                )
            parent = parent.rpartition("/")[0]


def _read_members_tarfile(blob: bytes, limits: Limits) -> tuple[dict[str, bytes], set[str]]:
    """Every member through `tarfile`'s streaming reader, with the caps counted as it reads."""
    reader = _CountingReader(blob, limits)
    files: dict[str, bytes] = {}
    dirs: set[str] = set()
    total = 0
    entries = 0
    try:
        with tarfile.open(fileobj=io.BufferedReader(reader), mode="r|") as tar:
            for member in tar:
                entries += 1
                if entries > limits.tar_entries:
                    raise cap_error(
                        "the layer's tar",
                        "tar_entries",
                        limits.tar_entries,
                        where=WHERE,
                        found=f"more than {limits.tar_entries} entries",
                    )
                _kind_check(member)
                path = _member_path(member)
                if path in files or path in dirs:
                    raise integrity_error(
                        "layer has a duplicate member",
                        where=WHERE,
                        expected="each path once",
                        found=repr(path),
                    )
                if member.isdir():
                    dirs.add(path)
                    continue
                total += member.size
                if total > limits.unpacked_total:
                    raise cap_error(
                        "the layer's files",
                        "unpacked_total",
                        limits.unpacked_total,
                        where=WHERE,
                        found=f"more than {limits.unpacked_total} bytes",
                    )
                handle = tar.extractfile(member)
                files[path] = handle.read() if handle is not None else b""
    except (tarfile.TarError, zlib.error, EOFError, gzip.BadGzipFile) as exc:
        raise integrity_error(
            "layer is not a valid gzip tar",
            where=WHERE,
            expected="application/vnd.oci.image.layer.v1.tar+gzip",
            found=f"{type(exc).__name__}: {exc}",
        ) from exc
    _check_no_file_parents(files)
    return files, dirs


def _resolve_root(files: dict[str, bytes]) -> dict[str, bytes]:
    """Files at the root, or under one `summary-bundle/` prefix, as bundle-relative paths."""
    if all(m in files for m in MARKERS):
        return files
    if all(f"{PREFIX}/{m}" in files for m in MARKERS):
        outside = sorted(p for p in files if not p.startswith(PREFIX + "/"))
        if outside:
            raise integrity_error(
                f"layer has files outside {PREFIX}/",
                where=WHERE,
                expected=f"every file under {PREFIX}/ (or all at the root)",
                found=", ".join(outside[:5]),
            )
        return {p[len(PREFIX) + 1 :]: data for p, data in files.items()}
    raise integrity_error(
        "layer holds no evidence bundle",
        where=WHERE,
        expected=f"recipe.yaml and manifest.json at the root or under {PREFIX}/",
        found=", ".join(sorted(files)[:5]) or "no files",
    )


def _file_caps(files: dict[str, bytes], limits: Limits) -> None:
    for path, data in files.items():
        if path == "recipe.yaml":
            cap, name = limits.recipe_yaml, "recipe_yaml"
        elif path == "manifest.json":
            cap, name = limits.manifest_file, "manifest_file"
        elif path.startswith("ctrf/") and path.endswith(".json"):
            cap, name = limits.ctrf_file, "ctrf_file"
        else:
            continue
        if len(data) > cap:
            raise cap_error(
                f"bundle file {path}", name, cap, where=WHERE, found=f"{len(data)} bytes"
            )


def extract_layer(blob: bytes, limits: Limits) -> dict[str, bytes]:
    """Unpack a digest-checked gzip tar layer into `{bundle-relative path: bytes}`, sorted.

    Raises `BundleFetchError` (`integrity`) for unsafe members, a missing bundle root, a broken
    archive or any exceeded cap.
    """
    files, _dirs = _read_members(blob, limits)
    resolved = _resolve_root(files)
    _file_caps(resolved, limits)
    return dict(sorted(resolved.items()))
