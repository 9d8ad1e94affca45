"""evidence-dashboard: verify signed aicr recipe evidence and render a static corroboration site."""

__all__ = ["__version__"]

__version__ = "0.1.0"
