"""(being written)"""

from __future__ import annotations

EXPORTS: dict[str, list[str]] = {"numpy": [], "lax": [], "nn": []}
