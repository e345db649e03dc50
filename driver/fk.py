# SPDX-License-Identifier: GPL-3.0-or-later
"""The FK pose a chain blends from, told apart from the driver's own writes.

Each bone a chain writes has a slot ("upper", "lower", "end") with two stored ``matrix_basis``
values on the chain, saved with the file: ``fk_<slot>``, what the user or the animation set, and
``written_<slot>``, what the driver last wrote. A bone whose current ``matrix_basis`` is not what the
driver wrote was changed by the user or the animation, and that becomes the FK pose. So influence,
Remove (restore FK) and snapping never take the driver's own output for the FK pose (case C10).

Reading 16-float properties costs microseconds, and this runs for every chain on every update, so
the values are also cached here per (armature session_uid, chain name), stamped with
``chain.fk_serial``. Every store draws a new serial; undo, redo and file loads bring back older
properties with their older serial, which tells the cache to read them again.
"""

from __future__ import annotations

import random

from mathutils import Matrix

SLOTS = ("upper", "lower", "end")
# Changes below these are float32 noise: skipping them keeps the handler from feeding itself.
# Rotation entries of matrix_basis are unitless; location entries scale with the chain.
ROTATION_EPSILON = 2e-6
LOCATION_EPSILON = 2e-6  # x chain length

_cache: dict[tuple[int, str], tuple[int, dict[str, tuple[Matrix | None, Matrix | None]]]] = {}
_serials = random.Random()


def flat(matrix: Matrix) -> list[float]:
    """A 4x4 matrix as 16 floats, row by row (the storage of ``fk_*`` and ``written_*``)."""
    # A Matrix iterates by rows, which fake-bpy-module does not declare (no __iter__).
    first, second, third, fourth = matrix  # type: ignore[misc]
    return [*first, *second, *third, *fourth]


def matrix_from_flat(values) -> Matrix:
    """The 4x4 matrix stored as 16 floats by :func:`flat`."""
    return Matrix((values[0:4], values[4:8], values[8:12], values[12:16]))


def differs(first: Matrix, second: Matrix, length: float) -> bool:
    """True when two ``matrix_basis`` values differ by more than float32 noise.

    ``length`` is the chain's length (armature units), the scale of the location entries.
    """
    difference = first - second
    first_row, second_row, third_row, _ = difference  # type: ignore[misc]  # rows, as in flat()
    # A row's length bounds each of its entries: cheaper than visiting the nine entries.
    if max(first_row.xyz.length, second_row.xyz.length, third_row.xyz.length) > ROTATION_EPSILON:
        return True
    return difference.translation.length > LOCATION_EPSILON * length


def _has(chain, slot: str) -> bool:
    return chain.has_written_end if slot == "end" else chain.has_written


def _entry(chain) -> tuple[int, dict[str, tuple[Matrix | None, Matrix | None]]]:
    key = (chain.id_data.session_uid, chain.name)
    serial = chain.fk_serial
    entry = _cache.get(key)
    if entry is None or entry[0] != serial:
        slots: dict[str, tuple[Matrix | None, Matrix | None]] = {
            slot: (
                (
                    matrix_from_flat(getattr(chain, f"fk_{slot}")),
                    matrix_from_flat(getattr(chain, f"written_{slot}")),
                )
                if _has(chain, slot)
                else (None, None)
            )
            for slot in SLOTS
        }
        entry = (serial, slots)
        _cache[key] = entry
    return entry


def stored(chain, slot: str) -> tuple[Matrix | None, Matrix | None]:
    """The stored (FK, written) ``matrix_basis`` of a slot; (None, None) before the first solve."""
    return _entry(chain)[1][slot]


def fk_for(chain, slot: str, current: Matrix, length: float) -> Matrix:
    """The FK ``matrix_basis`` of a slot, given the bone's ``current`` one (nothing is stored).

    The stored FK pose, unless the bone is no longer what the driver wrote: then ``current``.
    """
    fk, written = stored(chain, slot)
    if written is None or differs(current, written, length):
        return current.copy()
    assert fk is not None  # stored together with written
    return fk


def update_fk(chain, slot: str, current: Matrix, length: float) -> Matrix:
    """:func:`fk_for`, storing ``current`` as FK (and as written) when the user or animation set it."""
    fk, written = stored(chain, slot)
    if written is None or differs(current, written, length):
        store(chain, fk={slot: current}, written={slot: current})
        return current.copy()
    assert fk is not None  # stored together with written
    return fk


def store(chain, *, fk: dict[str, Matrix] | None = None, written: dict[str, Matrix] | None = None) -> None:
    """Store FK and/or written ``matrix_basis`` values, by slot, on the chain (saved with the file,
    undoable) and in the cache. A slot stored for the first time gets the one value as both."""
    fk, written = fk or {}, written or {}
    serial, slots = _entry(chain)
    for slot in {*fk, *written}:
        new_fk, new_written = fk.get(slot), written.get(slot)
        old_fk, old_written = slots[slot]
        if new_fk is None:
            new_fk = old_fk if old_fk is not None else new_written
        if new_written is None:
            new_written = old_written if old_written is not None else new_fk
        # The slot is a key of fk or written, so one of the two is new and both are set now.
        assert new_fk is not None and new_written is not None
        if new_fk is not old_fk:
            setattr(chain, f"fk_{slot}", flat(new_fk))
        if new_written is not old_written:
            setattr(chain, f"written_{slot}", flat(new_written))
        if not _has(chain, slot):
            setattr(chain, "has_written_end" if slot == "end" else "has_written", True)
        slots[slot] = (new_fk.copy(), new_written.copy())
    serial = _serials.getrandbits(31)
    chain.fk_serial = serial
    _cache[(chain.id_data.session_uid, chain.name)] = (serial, slots)


def clear_cache() -> None:
    """Forget every cached value (they are re-read from the chains on demand)."""
    _cache.clear()
