"""``aotc.scipy``: functions with scipy's (and ``jax.scipy``'s) names for traced arrays."""

from . import linalg  # noqa: F401
