"""`verify`: one pointer file, verified on its own, as aicr's VerifyResult JSON and a line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.evaluate.engine import build_engine
from generator.model import NoVerdict, Pending, PointerLocation, Rejected
from generator.options import ClockOptions, EngineOptions
from generator.tree import read_bounded
from generator.tree.pointer import parse_pointer
from generator.verify.serialize import aicr_result_json
from generator.verify.times import judge_time

__all__ = ["verify_one"]

_WORDS = {0: "valid", 1: "valid, with recorded phase failures", 2: "invalid", 3: "no verdict"}


def verify_one(
    options: EngineOptions, clock: ClockOptions, pointer_path: Path
) -> tuple[dict[str, Any], str]:
    """Verify one pointer file: aicr's VerifyResult JSON and a one-line text verdict (only the
    engine and the clock are needed: nothing is written)."""
    from generator.verify.pipeline import verify_pointer  # sigstore, only when verifying

    data = read_bounded(pointer_path, 1 << 20, display=str(pointer_path))
    pointer = parse_pointer(data, file=str(pointer_path))
    parts = pointer_path.resolve().parts
    folder_source = (
        parts[-2]
        if len(parts) >= 3 and not pointer_path.name.startswith(pointer.recipe + ".")
        else None
    )
    folder_recipe = parts[-3] if folder_source else None
    location = PointerLocation(
        path=pointer_path.name, folder_recipe=folder_recipe, folder_source=folder_source
    )
    engine = build_engine(options)
    verdict = judge_time(
        verify_pointer(pointer, location, engine.source, engine.trust), clock.source_date_epoch
    )
    result = aicr_result_json(verdict, pointer, location)
    text = f"{pointer_path}: {_WORDS[int(verdict.exit)]}"
    if isinstance(verdict, Pending):
        text += " (pending signature)"
    if isinstance(verdict, Rejected | NoVerdict):
        text += f" - {verdict.cause.failure_class}: {verdict.cause.detail}"
        if verdict.cause.hint:
            text += f"\n  next step: {verdict.cause.hint}"
    return result, text
