"""Who else may read an ``Array``'s buffer, and how a donation takes it safely.

A donation overwrites an argument's buffer in place, so the runtime must know when
something besides the Array reads that memory: another Array holding the same buffer
(a function returned its argument, or one value twice: ``SHARED``), a zero-copy host
view (``np.asarray`` of a large CPU result, and DLPack 1.0 exports, which hand out that
view: seen by its reference count) or an IREE DLPack capsule (its holders are invisible,
so the array is marked shared for good). ``take_donated`` makes the decision and the
deletion one step under ``VIEWS``, the lock host views are made under, so a thread
reading an Array another thread donates sees its old values entirely or raises
``DeletedArrayError``. It works on the Array's private fields: it is part of the Array.
"""

from __future__ import annotations

import sys
import threading
import weakref
from typing import Any

# Arrays whose buffer another array may hold too (a function returned an argument, or
# one value twice): id -> weak reference. Kept outside the arrays so that creating one
# costs nothing extra (Arrays are unhashable, as numpy arrays are: no WeakSet).
SHARED: dict[int, weakref.ref] = {}


def mark_shared(array: Any) -> None:
    """Another array may hold ``array``'s buffer: a donation must copy it first instead
    of overwriting it in place."""
    key = id(array)
    SHARED[key] = weakref.ref(array, lambda _ref, key=key: SHARED.pop(key, None))


def is_shared(array: Any) -> bool:
    ref = SHARED.get(id(array))
    return ref is not None and ref() is array


# Held while a host view of an Array's buffer is made (its first read, a DLPack export)
# and while a donation takes the buffer (``take_donated``): a thread reading an array
# another thread donates sees the old values entirely, or raises DeletedArrayError.
# Reads of a cached host view take no lock.
VIEWS = threading.Lock()


def take_donated(arrays: list[tuple[Any, str]]) -> list[tuple[Any, bool]]:
    """Takes the buffers of the Arrays a call donates (with the reason each is deleted),
    all or none: from here on each reads as deleted, so no thread gets a new view of a
    buffer the call overwrites. For each, its buffer and whether something else may still
    read it, in which case the call must work on a copy: another array sharing it
    (``SHARED``), a DLPack export IREE made, or a host view someone holds (the array
    ``np.asarray`` returned, a slice of it, a DLPack consumer of it, a thread reading it:
    seen by its reference count). The bytes stay in the ledger until ``_give_back``.
    Raises ``DeletedArrayError`` (taking none) if one was deleted meanwhile."""
    with VIEWS:
        for array, _ in arrays:
            if array._bv is None:
                array._live()  # raises, naming why it was deleted
        out = []
        for array, reason in arrays:
            bv = array._bv
            array._deleted = reason
            array._bv = None
            host = array._host
            shared = False
            if host is not None:
                array._host = None
                # References to the host view now: this frame's and getrefcount's
                # argument. A host copy (small arrays) owns its data: nothing to protect.
                shared = host.base is not None and sys.getrefcount(host) > 2
            if not shared:
                ref = SHARED.get(id(array))
                shared = ref is not None and ref() is array
            out.append((bv, shared))
        return out
