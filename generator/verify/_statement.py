"""Step 3, `predicate-parse`: the statement (signed, or unsigned when pending) and its predicate."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator import strictjson
from generator.model import Pointer, PredicateType, SubRow
from generator.verify._run import MAX_STATEMENT_BYTES, _Run
from generator.verify._signed import predicate_type_problem
from generator.verify.signature import SignatureOk


def _step3(
    run: _Run, pointer: Pointer, files: Mapping[str, bytes], ok: SignatureOk | None
) -> tuple[PredicateType, Mapping[str, Any]] | None:
    if ok is not None:
        statement: Mapping[str, Any] = ok.statement
        origin = "from verified DSSE payload"
    else:
        origin = "from unsigned statement.intoto.json"
        raw = files.get("statement.intoto.json")
        if raw is None:
            run.fail(3, "statement.intoto.json missing from the unsigned bundle")
            return None
        if len(raw) > MAX_STATEMENT_BYTES:
            run.fail(3, f"statement.intoto.json exceeds {MAX_STATEMENT_BYTES} bytes")
            return None
        try:
            doc = strictjson.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            run.fail(3, f"statement.intoto.json {strictjson.problem(exc)}")
            return None
        if not isinstance(doc, dict):
            run.fail(3, "statement.intoto.json is not a JSON object")
            return None
        statement = doc
        problem = predicate_type_problem(doc.get("predicateType"), doc.get("predicate"))
        if problem:
            run.fail(3, problem)
            return None
    ptype = PredicateType(statement["predicateType"])
    predicate = statement.get("predicate")
    if not isinstance(predicate, dict):
        run.fail(3, "statement has no predicate object")
        return None
    recipe = predicate.get("recipe")
    name = recipe.get("name") if isinstance(recipe, dict) else None
    if pointer.recipe != name:
        run.fail(
            3, f"pointer recipe {pointer.recipe!r} does not match predicate recipe.name {name!r}"
        )
        return None
    rows = [
        SubRow("predicateType", ptype.value),
        SubRow("recipe.name", str(name)),
    ]
    if pointer.bundle.predicate_type is not ptype:
        run.fail(
            3,
            f"pointer bundle.predicateType {pointer.bundle.predicate_type.value} does "
            f"not equal the statement's {ptype.value}",
            rows=[*rows, SubRow("pointer predicateType", "mismatch", beyond_aicr=True)],
        )
        return None
    rows.append(SubRow("pointer predicateType", "equals statement", beyond_aicr=True))
    version = predicate.get("schemaVersion")
    said = f"predicate {version}" if isinstance(version, str) and version else "predicate"
    run.passed(3, f"{said} for recipe {name} ({origin})", rows)
    return ptype, predicate
