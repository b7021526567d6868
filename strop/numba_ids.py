"""Numba's function ids drawn apart in every process, so that code compiled by two processes
never shares a symbol name.

Numba names a compiled function by its module, qualified name, argument types and an id from a
counter that starts at 1 in each process.  Two closures of one qualified name (``large`` in
runtime/numba/via_numpy.py, made by one factory for np.sin and for np.tanh) compiled by two
processes in the same order got the same id, so the same symbol; a third process that linked
both (saved machine code, codegen/native.py, or Numba's own disk cache) merged them as one weak
symbol, and its tanh ran sin.  Here the counter starts at a random offset, drawn again in a
forked child, which would otherwise go on with its parent's ids.  ``install()`` runs before
strop compiles anything.
"""
import itertools
import os
import secrets

_installed = []


def install():
    if not _installed:
        _installed.append(True)
        _draw()
        os.register_at_fork(after_in_child=_draw)


def _draw():
    from numba.core.bytecode import FunctionIdentity
    # 2**24 ids a process before two random starts of 64 bits could meet
    FunctionIdentity._unique_ids = itertools.count(secrets.randbits(64) << 24)
