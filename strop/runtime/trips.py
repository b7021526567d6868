"""The check of a loop whose first trip is written apart (transformer/peel.py)."""
import numpy as np

__all__ = ["first_trip"]


class NoTrip(Exception):
    """A loop split at its first trip runs none in this call: the call runs code made without
    the split (transformed.py catches it; never seen by users)."""


def first_trip(runs):
    """Raises NoTrip unless the loop runs (``runs``: a bool; under vmap, one per lane)."""
    if not np.all(runs):
        raise NoTrip()
