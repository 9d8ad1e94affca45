"""Safe, in-memory extraction of an evidence layer (a gzip tar) into bundle-relative files.

Only regular files and directories are accepted; absolute paths, `..`, links, devices, FIFOs and
duplicate members are refused. The gzip stream is decompressed incrementally and counted, so a
gzip bomb or an oversized tar stops as soon as a cap is passed. Nothing is written to disk.
"""

from __future__ import annotations

import gzip
import io
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
            raise cap_error("the uncompressed layer", "unpacked_total", limits.unpacked_total,
                            where=WHERE, found=f"more than {limits.unpacked_total} bytes")
        if self.count > RATIO_FLOOR and self.count > limits.unpack_ratio * self._compressed:
            raise cap_error("the layer's compression ratio", "unpack_ratio", limits.unpack_ratio,
                            where=WHERE,
                            found=f"{self.count} bytes from {self._compressed} compressed")
        buffer[: len(data)] = data
        return len(data)


def _member_path(member: tarfile.TarInfo) -> str:
    """The member's normalised relative path, or raise for an absolute or escaping one."""
    raw = member.name
    if raw.startswith("/") or "\\" in raw or (len(raw) > 1 and raw[1] == ":"):
        raise integrity_error("layer has a member with an absolute path", where=WHERE,
                              expected="relative paths only", found=repr(raw))
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise integrity_error("layer has a member whose path contains '..'", where=WHERE,
                              expected="paths inside the bundle", found=repr(raw))
    if not parts or any("\x00" in p for p in parts):
        raise integrity_error("layer has a member with an empty or invalid path", where=WHERE,
                              found=repr(raw))
    return "/".join(parts)


def _kind_check(member: tarfile.TarInfo) -> None:
    if member.isreg() or member.isdir():
        return
    kind = _KINDS.get(member.type, f"an entry of tar type {member.type!r}")
    raise integrity_error(f"layer holds {kind}, which is not allowed", where=WHERE,
                          expected="regular files and directories only",
                          found=f"{member.name!r} is {kind}")


def _read_members(blob: bytes, limits: Limits) -> tuple[dict[str, bytes], set[str]]:
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
                    raise cap_error("the layer's tar", "tar_entries", limits.tar_entries,
                                    where=WHERE, found=f"more than {limits.tar_entries} entries")
                _kind_check(member)
                path = _member_path(member)
                if path in files or path in dirs:
                    raise integrity_error("layer has a duplicate member", where=WHERE,
                                          expected="each path once", found=repr(path))
                if member.isdir():
                    dirs.add(path)
                    continue
                total += member.size
                if total > limits.unpacked_total:
                    raise cap_error("the layer's files", "unpacked_total", limits.unpacked_total,
                                    where=WHERE, found=f"more than {limits.unpacked_total} bytes")
                handle = tar.extractfile(member)
                files[path] = handle.read() if handle is not None else b""
    except (tarfile.TarError, zlib.error, EOFError, gzip.BadGzipFile) as exc:
        raise integrity_error("layer is not a valid gzip tar", where=WHERE,
                              expected="application/vnd.oci.image.layer.v1.tar+gzip",
                              found=f"{type(exc).__name__}: {exc}") from exc
    for path in files:
        parent = path.rpartition("/")[0]
        while parent:
            if parent in files:
                raise integrity_error("layer has a file that is also a directory", where=WHERE,
                                      found=repr(parent))
            parent = parent.rpartition("/")[0]
    return files, dirs


def _resolve_root(files: dict[str, bytes]) -> dict[str, bytes]:
    """Files at the root, or under one `summary-bundle/` prefix, as bundle-relative paths."""
    if all(m in files for m in MARKERS):
        return files
    if all(f"{PREFIX}/{m}" in files for m in MARKERS):
        outside = sorted(p for p in files if not p.startswith(PREFIX + "/"))
        if outside:
            raise integrity_error(f"layer has files outside {PREFIX}/", where=WHERE,
                                  expected=f"every file under {PREFIX}/ (or all at the root)",
                                  found=", ".join(outside[:5]))
        return {p[len(PREFIX) + 1:]: data for p, data in files.items()}
    raise integrity_error(
        "layer holds no evidence bundle", where=WHERE,
        expected=f"recipe.yaml and manifest.json at the root or under {PREFIX}/",
        found=", ".join(sorted(files)[:5]) or "no files")


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
            raise cap_error(f"bundle file {path}", name, cap, where=WHERE,
                            found=f"{len(data)} bytes")


def extract_layer(blob: bytes, limits: Limits) -> dict[str, bytes]:
    """Unpack a digest-checked gzip tar layer into `{bundle-relative path: bytes}`, sorted.

    Raises `BundleFetchError` (`integrity`) for unsafe members, a missing bundle root, a broken
    archive or any exceeded cap.
    """
    files, _dirs = _read_members(blob, limits)
    resolved = _resolve_root(files)
    _file_caps(resolved, limits)
    return dict(sorted(resolved.items()))
