"""coursekit: lint, verify and scaffold a multi-book technical course."""

__version__ = "0.1.0"
