"""The package version (one place: setup.cfg reads it, provenance records it)."""

from __future__ import annotations

__version__ = "0.1.0"
