"""What one verified bundle says, as facts the site shows: pure functions over `Evidence`.

Hardware and cluster facts record where each value came from; bandwidth readings never invent
a number a minimal bundle does not carry.
"""

from generator.facts.bandwidth import NCCL_CHECKS, bandwidth, redacted, skip_reason
from generator.facts.hardware import hardware_facts, snapshot_data
from generator.facts.models import (
    FINGERPRINT,
    RECIPE,
    SNAPSHOT,
    BandwidthReading,
    Component,
    Criteria,
    CriteriaMatch,
    DimensionMatch,
    HardwareFact,
    ValidatorImage,
)
from generator.facts.recipe_facts import components, criteria, criteria_match, validator_images

__all__ = [
    "FINGERPRINT",
    "NCCL_CHECKS",
    "RECIPE",
    "SNAPSHOT",
    "BandwidthReading",
    "Component",
    "Criteria",
    "CriteriaMatch",
    "DimensionMatch",
    "HardwareFact",
    "ValidatorImage",
    "bandwidth",
    "components",
    "criteria",
    "criteria_match",
    "hardware_facts",
    "redacted",
    "skip_reason",
    "snapshot_data",
    "validator_images",
]
