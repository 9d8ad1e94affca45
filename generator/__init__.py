"""evidence-dashboard: verify signed aicr recipe evidence and render a static corroboration site."""

__version__ = "0.1.0"
