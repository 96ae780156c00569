"""``aotc.numpy.linalg``: numpy.linalg's functions for traced arrays (being written)."""

from __future__ import annotations
