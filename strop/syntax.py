"""Parsing Python source, one thread at a time.

CPython 3.11 keeps the depth of the AST it is building per interpreter, not per thread, so two
threads parsing at once can fail with ``SystemError: AST constructor recursion depth
mismatch`` (CPython issue gh-106905; seen here when threads transform functions at once).
Every parse strop makes goes through this lock.
"""
import ast
import threading

import gast

_LOCK = threading.RLock()


def parse(source, mode="exec"):
    """``ast.parse(source, mode=mode)``."""
    with _LOCK:
        return ast.parse(source, mode=mode)


def gast_parse(source, mode="exec"):
    """``gast.parse(source, mode=mode)``."""
    with _LOCK:
        return gast.parse(source, mode=mode)
