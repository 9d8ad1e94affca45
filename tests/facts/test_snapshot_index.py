"""`_snapshot_index` (one pass for all of hardware_facts) answers exactly like `snapshot_data`."""

from __future__ import annotations

from typing import Any

import pytest

from generator.facts.hardware import _snapshot_index, snapshot_data

SNAPSHOTS: list[Any] = [
    None,
    {},
    {"measurements": "not a list"},
    {
        "measurements": [
            "junk",
            {"type": "K8s", "subtypes": [{"subtype": "server", "data": {"version": "v1"}}]},
            # a second K8s measurement: its node subtype counts, its server subtype does not
            {
                "type": "K8s",
                "subtypes": [
                    {"subtype": "node", "data": {"kernel-version": "6"}},
                    {"subtype": "server", "data": {"version": "v2"}},
                ],
            },
            {"type": "GPU", "subtypes": "no list"},
            {
                "type": "GPU",
                "subtypes": [
                    {"subtype": "smi", "data": ["not", "a", "map"]},
                    {"subtype": "smi", "data": {"gpu.model": "later"}},
                ],
            },
            {"type": ["unhashable"], "subtypes": [{"subtype": "hardware", "data": {"x": 1}}]},
            {
                "type": "OS",
                "subtypes": [
                    {"subtype": {"odd": "name"}},
                    "junk",
                    {"subtype": "release", "data": {"ID": "ubuntu"}},
                ],
            },
        ]
    },
]
QUERIES = [
    ("K8s", "server"),
    ("K8s", "node"),
    ("GPU", "smi"),
    ("GPU", "hardware"),
    ("OS", "release"),
    ("NodeTopology", "label"),
]


@pytest.mark.parametrize("snapshot", SNAPSHOTS)
def test_index_matches_snapshot_data(snapshot: Any) -> None:
    index = _snapshot_index(snapshot)
    for mtype, subtype in QUERIES:
        assert dict(index.get((mtype, subtype), {})) == dict(
            snapshot_data(snapshot, mtype, subtype)
        ), (mtype, subtype)


def test_first_match_wins_even_when_its_data_is_not_a_map() -> None:
    index = _snapshot_index(SNAPSHOTS[-1])
    assert index[("K8s", "server")] == {"version": "v1"}
    assert index[("GPU", "smi")] == {}
