"""passgate's version, in the lowest layer: reports record it, and every layer may need it."""

__all__ = ["__version__"]

__version__ = "0.1.0"
