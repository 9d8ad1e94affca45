"""Evidence fakes shared with the other pure-core test folders (tests/_evidence_fakes.py)."""

from tests._evidence_fakes import f

__all__ = ["f"]
