"""What the demo tree must show: the verdict each pointer must get, and the generation report
(part of `generator.testing.demo`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from generator.model import FailureClass, Freshness

EXPECTED_SCHEMA = "evidence-dashboard-demo-expected/v1"


@dataclass(frozen=True)
class ExpectVerified:
    """The pointer verifies: exit 0 (or 1 with recorded phase failures), with a freshness."""

    exit: int
    freshness: Freshness
    allowlisted: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "exit": self.exit,
            "class": None,
            "pending": False,
            "freshness": str(self.freshness),
            "allowlisted": self.allowlisted,
        }


@dataclass(frozen=True)
class ExpectPending:
    """The pointer is a valid, unsigned pending pointer: exit 0, `pending: true`, never counted."""

    def as_dict(self) -> dict[str, Any]:
        return {"exit": 0, "class": None, "pending": True, "freshness": None, "allowlisted": False}


@dataclass(frozen=True)
class ExpectRejected:
    """The verifier rejects the pointer: exit 2 with this failure class. Whether the rejected
    certificate's signer is allowlisted is not part of the expectation (`allowlisted: null`)."""

    failure_class: FailureClass

    def as_dict(self) -> dict[str, Any]:
        return {
            "exit": 2,
            "class": str(self.failure_class),
            "pending": False,
            "freshness": None,
            "allowlisted": None,
        }


Expectation = ExpectVerified | ExpectPending | ExpectRejected


@dataclass(frozen=True)
class DemoReport:
    """What the generator wrote and what a verifier must conclude about it.

    `expectations` is keyed by pointer path relative to the recipes root (as `data/pointers.json`
    names it); `tree_violations` are the pointer paths the strict tree gate must flag (unlisted
    signers); `files` every file written, relative to the recipes root.
    """

    expectations: Mapping[str, Expectation]
    tree_violations: tuple[str, ...]
    files: tuple[str, ...]

    def as_json(self) -> bytes:
        """`demo/expected.json`: sorted keys, 2-space indent, trailing newline."""
        doc = {
            "schema": EXPECTED_SCHEMA,
            "pointers": {path: e.as_dict() for path, e in sorted(self.expectations.items())},
            "treeViolations": list(self.tree_violations),
        }
        return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
