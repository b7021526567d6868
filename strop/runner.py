"""Running generated code: compiled or not, with its errors reported at the user's line.

A ``Staged`` holds one generated function and what runs it.  On the CPU backend a statement
Numba refuses whose results only Python reads runs in an object-mode island
(codegen/objmode.py), and a function Numba cannot compile otherwise runs as Python, each after a
JitFallbackWarning naming the line; an exception raised by
compiled code (which has no Python traceback) is re-raised by running the same code as Python,
so that it names the user line; with ``debug_nans``/``debug_infs`` a non-finite output is
traced to the line that made it the same way.
"""
import dataclasses
import glob
import logging
import os
import re
import shutil
import traceback
import warnings

import numpy as np

from .codegen import emit as emitter
from .codegen.cpu import compile_function, lower, number_params, resolver, weaken
from .codegen.fpchecks import flag_warnings, hidden, python_warnings, with_fp_checks
from .codegen.fuse import fuse
from .codegen.inplace import make_inplace
from .codegen.loops import loop_chains
from .codegen.native import INT64, Native
from .codegen.outer import defer_outer_products
from .codegen.reuse import reuse_dead
from .codegen.objmode import island_at, refused_statement, with_islands
from .codegen.squeeze import squeeze_known_axes
from .codegen.tapes import arrays_for_tapes, kept_shapes, records_for_tapes, shapes_for_tapes
from .transformer.flat_results import rebuild
from .transformer.ir import guards_check
from .transformer.ranks import scalar_names
from .codegen.load import LINEMAPS, load
from .config import config
from .dtypes import canonicalize, canonicalize_globals
from .errors import (DonationWarning, IslandResultError, JitFallbackWarning, LaxTypeError,
                     PerformanceWarning, StropError, user_stacklevel)
from .runtime import fpstatus
from .runtime.trips import NoTrip
from .runtime import lax as runtime_lax
from .runtime.numba import islands as numba_islands
from .tree_util import tree_leaves

log = logging.getLogger("strop")
_RAISED = fpstatus.RAISED    # (read after every compiled call)


class Rerun(Exception):
    """The machine code Staged.run_direct called raised: the call is run as run() runs it."""


class Staged:
    """One generated function: its IR, its module, and what runs it."""
    branches_checked = False   # Transformed.check_branches ran for it

    def __init__(self, fn, origin, backend, reason="first call", donated=(), ranks=(),
                 weak=(), array_tapes=True, islands=()):
        """``ranks``: (parameter, rank) the call gave; ``weak``: the parameters it passed
        Python ints (NumPy types them as weak)."""
        self.fn, self.backend, self.origin = fn, backend, origin
        self.guards_hold = guards_check(fn.guards)   # (checked before every call)
        self.made = (fn, origin, backend, reason, donated, ranks, weak)
        self.islands = tuple(islands)   # (path, length) of statements run in object mode
        self.with_array_tapes = array_tapes
        refs = dict(fn.refs)
        node = lower(squeeze_known_axes(fn.node, ranks, fn.callee), refs, _compiled_variant) \
            if backend == "cpu" else fn.node
        companions = tuple(lower(c, refs, _compiled_variant) for c in fn.companions) \
            if backend == "cpu" else fn.companions
        if backend == "device":   # on a GPU, launch by launch (raises Unsupported)
            from .codegen.cuda_program import device_program, twin_refs
            node = device_program(fn.node, refs, weak)
            companions = tuple(device_program(c, refs, number_params(fn.node, c, refs))
                               for c in fn.companions)
            twin_refs(refs)
        self.array_tapes = set()
        if backend == "cpu" and array_tapes:
            params = [a.id for a in fn.node.args.args]     # found before lowering renames
            numbers = scalar_names(fn.node.body, {p: r for p, r in dict(ranks).items()
                                                  if p in params}, fn.callee)
            self.array_tapes = arrays_for_tapes(node, refs, numbers)
            shapes_for_tapes(node, refs)    # (before in-place: a shape read is no escape)
        self.inplace = make_inplace(node, refs, donated) if backend == "cpu" else set()
        if backend == "cpu":
            defer_outer_products(node, refs)
        params = [a.id for a in node.args.args]
        overwritten = sorted(self.inplace & {params[i] for i in donated if i < len(params)})
        self.overwrites = bool(overwritten)
        if overwritten:
            warnings.warn(DonationWarning(
                f"donate_argnums of {origin}: {', '.join(map(repr, overwritten))} is updated "
                f"in place by the compiled code, so the array passed for it is overwritten by "
                f"each call, unless the 64-bit policy converted it to a copy first (JAX "
                f"deletes a donated buffer and raises if it is used again; a NumPy array "
                f"cannot be deleted)",
                fix="do not read the donated array after the call (rebind the name to the "
                    "result: x = f(x)), or do not donate it"),
                stacklevel=user_stacklevel())
        if backend == "cpu" and array_tapes:
            companions = tuple(reuse_dead(loop_chains(fuse(weaken(
                c, refs, set(weak) | number_params(node, c, refs)), refs), refs), refs)
                for c in companions)
            lowered = scalar_names(node.body, {p: r for p, r in dict(ranks).items()
                                               if p in params}, resolver(node, refs))
            node = loop_chains(fuse(weaken(node, refs, weak, numbers | lowered), refs), refs)
            node = reuse_dead(node, refs, numbers | lowered)
        if backend == "cpu":
            kept_shapes(node, refs)
            records_for_tapes(node)     # (last: the passes before read one tape at a time)
        # (not for vmap's wide loops: they run trips of lanes that are done, whose flags
        # say nothing of the user's code; run as Python they would warn the same)
        wide = any(getattr(c, "unchecked", False) for c in fn.companions)
        checks = with_fp_checks(node, refs) if backend == "cpu" and not wide else None
        if self.islands:    # (their paths count the checks' statement)
            node = with_islands(node, refs, self.islands)
        self.node = node
        shown = dataclasses.replace(fn, node=node, refs=refs, companions=companions)
        text, linemap, injected = emitter.emit(shown, origin)

        self.generated = load(fn.name, text, linemap, injected)
        self.shown = hidden(text, checks) if checks else text    # what strop.source shows
        self.runner = self.generated.function
        self.python = None   # what runs after a fallback, if not this code as Python
        self.pending = []    # the fallback's (or islands') warnings, given once a run succeeds
        self.slow_warned = set()   # helpers run in object mode that a warning has named
        self.uncached = False  # compiled without Numba's cache, after a fault in it
        self.fp_seen = {}      # flags compiled code raised -> the warnings Python gave for them
        self.fp_registry = {}  # (the warnings module's record of those shown once)
        if config.read("log_compiles"):
            log.warning("strop: transformed %s into %s for the %s backend (%s)", origin, fn.name,
                        backend, reason)
        # code with debug.print/callback calls those objects of this process: never from
        # a cache (a cached copy would call a pickled copy of the user's callback)
        self.effects = any(getattr(o, "__strop_effect__", False) for o in fn.refs.values())
        # (an object-mode island's code holds pointers to this process's objects: not cached)
        self.effects = self.effects or bool(self.islands)
        if backend == "cpu":
            self.runner = Native(self.compile, self.generated.path, save=not self.effects)

    def compile(self, cache=True):
        return compile_function(self.generated.function, cache and not self.effects,
                                tuple((c.name, not getattr(c, "unchecked", False))
                                      for c in self.fn.companions))

    def run(self, args):
        free = canonicalize_globals([v.read() for v in self.fn.free.values()])
        compiled = self.backend == "cpu"
        values = config._values
        logging_ = values["log_compiles"]
        before = self.runner.compiled if compiled and logging_ else 0
        runs = numba_islands.RUNS[0]
        try:
            if compiled and self.fn.split is not None:
                out = self.fn.split(self.runner, args, free)
            else:
                out = self.runner(*args, *free)
        except (StropError, NoTrip):
            raise
        except Exception as e:
            if compiled and _is_numba_error(e):
                branches = runtime_lax.compile_error_message(str(e))
                if branches is not None:   # a cond's branches differ in type: JAX's error
                    error = LaxTypeError(branches, numba_location(e, self.generated))
                    error.compiled_branches = True
                    raise error from None
            if compiled and self.array_tapes and _is_numba_error(e) and "tape_put" in str(e):
                # an integer before a loop, a float in it: its tapes stay lists, as in Python
                self.remake(array_tapes=False)
                return self.run(args)
            if compiled and _is_numba_error(e) and self.make_island(e):
                return self.run(args)   # compiled again, the statement in object mode
            if compiled and (_is_numba_error(e) or isinstance(e, IslandResultError)):
                self.fall_back(e)
                return self.run(args)   # the warning waits for the Python run's success
            if compiled and _from_numba_cache(e) and not self.uncached:
                self.recompile()    # a truncated, corrupted or unreadable Numba cache file
                return self.run(args)
            if compiled:   # compiled code has no traceback: run it as Python to find the line
                self.rerun_as_python(args, free, e)
            raise mapped(e, self.generated) from None
        if numba_islands.RUNS[0] != runs and compiled:   # helpers run in object mode
            self.pending += self.slow_helpers(
                [n for n, k in numba_islands.LAST_RUN.items() if k > runs])
        while self.pending:
            warnings.warn(self.pending.pop(0), stacklevel=user_stacklevel())
        if _RAISED[0] and compiled:
            self.fp_warnings(args, free)
        if compiled and logging_ and self.runner.compiled > before:
            log.warning("strop: compiled %s for a new signature %s", self.fn.name,
                        self.runner.signatures[-1])
        if values["debug_nans"] or values["debug_infs"]:
            self.check_finite(out, args, free)
        if self.fn.result_tree is not None:   # returned as leaves (transformer/flat_results)
            out = rebuild(self.fn.result_tree, out)
        return out

    def direct(self, args, narrowed):
        """The machine code that calls of arguments typed as ``args`` (as the code takes them:
        ``narrowed``, the positions of those canonicalized) run, to be called with nothing
        around it (run_direct), where a call needs nothing else run() does: code that reads no
        global's value, calls no Python object, runs no statement in object mode, overwrites no
        argument and returns its results as they are.  None otherwise."""
        if self.backend != "cpu" or self.effects or self.islands or self.overwrites or \
                self.fn.free or self.fn.split is not None or self.fn.result_tree is not None \
                or self.runner.literal:
            return None
        fingerprints = tuple(map(self.runner._fingerprint, args))
        entry = self.runner.entries.get(fingerprints)
        if entry is None:
            return None
        # a number of the user's is converted to the type it was narrowed to by the machine
        # code's own unboxing (as a C cast: as NumPy's); an array must be copied; a big Python
        # int is typed by value (as uint64)
        arrays = tuple(i for i in sorted(narrowed) if isinstance(args[i], np.ndarray))
        return entry, arrays, tuple(i for i, f in enumerate(fingerprints) if f == b"i")

    def run_direct(self, direct, args):
        """The machine code ``direct`` gave run on the user's ``args``, then what run() does
        after a compiled call: NumPy's warnings for the floating-point flags it raised, a
        warning for a helper it ran in object mode for the first time, debug_nans and
        debug_infs.  Raises Rerun where the code raised (or an int is too big for it): run()
        runs it again (the code is pure), and its error names the user's line."""
        entry, arrays, ints = direct
        for i in ints:
            if args[i] not in INT64:
                raise Rerun
        if arrays:
            args = list(args)
            for i in arrays:
                args[i] = canonicalize(args[i])
        runs = numba_islands.RUNS[0]
        try:
            out = entry(*args)
        except Exception:
            raise Rerun from None
        values = config._values
        if _RAISED[0] or values["debug_nans"] or values["debug_infs"]:
            args = [canonicalize(a) for a in args]    # (run as Python: its numbers as NumPy's)
            if _RAISED[0]:
                self.fp_warnings(args, ())
            if values["debug_nans"] or values["debug_infs"]:
                self.check_finite(out, args, ())
        if numba_islands.RUNS[0] != runs:
            for warning in self.slow_helpers(
                    [n for n, k in numba_islands.LAST_RUN.items() if k > runs]):
                warnings.warn(warning, stacklevel=user_stacklevel())
        return out

    def slow_helpers(self, names):
        """A PerformanceWarning for each helper a call ran in object mode (an island,
        runtime/numba/islands.py, or NumPy's on small arrays, _common._through_numpy), once
        each, naming the first line calling it."""
        out = []
        for name in [n for n in names if n not in self.slow_warned]:
            self.slow_warned.add(name)
            lines = [i for i, text in enumerate(self.generated.source.splitlines(), 1)
                     if re.search(rf"\b{re.escape(name)}\(", text)]
            loc = next((loc for loc in (emitter.user_location(self.generated.linemap, i)
                                        for i in lines) if loc is not None), None)
            if loc is None:   # (a helper another compiled function called)
                continue
            out.append(PerformanceWarning(
                f"compiled code runs strop's helper {name}() at Python's speed here "
                f"({numba_islands.WHY.get(name, 'in object mode')})",
                loc, fix="the results are right; strop.source(...) shows the call, and an issue "
                         "with it helps: this is a gap in strop, not in your code"))
        return out

    def remake(self, array_tapes=True, islands=()):
        """This function's code made again (its warnings still to give, what runs it after a
        fallback kept)."""
        python, pending = self.python, self.pending
        self.__init__(*self.made, array_tapes=array_tapes, islands=islands)
        self.python, self.pending = python, pending

    def make_island(self, error):
        """Numba refused a statement whose results only Python code reads (``print(type(x))``):
        make the code again with it in an object-mode island (codegen/objmode.py), the rest
        compiled, and warn naming its line once a run succeeds.  False where there is none."""
        lineno = _generated_line(error, self.generated)
        if lineno is None or len(self.islands) >= MAX_ISLANDS:
            return False
        path = refused_statement(self.generated.source, self.node.name, lineno)
        length = island_at(self.node, path) if path is not None else None
        if length is None:
            return False
        loc = numba_location(error, self.generated)
        self.remake(self.with_array_tapes, self.islands + ((path, length),))
        self.pending.append(JitFallbackWarning(
            f"jit could not compile this line with Numba ({numba_reason(error)}); it runs as "
            f"Python in an object-mode island, and the rest of the function stays compiled",
            loc, fix="nothing is needed (the results are the same); to compile the line too, "
                     "write it with what Numba supports (strop.source(...) shows the code "
                     "Numba was given)"))
        return True

    def recompile(self):
        """Drop this function's Numba cache files (for the next process) and compile it
        afresh, without Numba's cache: what failed there cannot fail again."""
        try:
            from numba.core.caching import FunctionCache
            files = FunctionCache(self.generated.function)._cache_file
            data = glob.escape(files._data_name_pattern).replace("{number:d}", "*")
            stale = [files._index_path,
                     *glob.glob(os.path.join(glob.escape(files._cache_path), data))]
        except Exception:     # Numba's layout changed: nothing to remove
            stale = []
        for path in stale:
            shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else _remove(path)
        self.uncached = True
        self.runner = Native(lambda: self.compile(cache=False), self.generated.path,
                             save=not self.effects)

    def rerun_as_python(self, args, free, error):
        try:
            self.generated.function(*args, *free)
        except Exception as e:
            if type(e) is type(error) or isinstance(e, runtime_lax.LaxCheckError) and \
                    isinstance(error, TypeError):
                raise mapped(e, self.generated) from None
        # the Python run did not fail the same way: report what the compiled code said

    def fp_warnings(self, args, free):
        """The compiled call raised floating-point flags (runtime/fpstatus.py): NumPy's
        warnings, or under ``np.errstate(...="raise")`` its FloatingPointError, as the code run
        as Python gives them, at the user's lines.  Warnings for the same flags are given again
        without running it again (flags LLVM raised computing a guarded division ahead of its
        branch, which Python does not compute, give none)."""
        bits, _RAISED[0] = _RAISED[0], 0
        state = np.geterr()
        kinds = [k for bit, k in fpstatus.NAMES.items() if bits & bit and state[k] != "ignore"]
        if not kinds:
            return
        if not all(state[k] == "warn" for k in kinds):
            given = self.fp_rerun(args, free, kinds)    # raises, prints or calls
        elif bits in self.fp_seen:
            given = self.fp_seen[bits]
        else:
            given = self.fp_seen[bits] = self.fp_rerun(args, free, kinds)
        for message, category, filename, lineno in given:
            warnings.warn_explicit(message, category, filename, lineno,
                                   registry=self.fp_registry)

    def fp_rerun(self, args, free, kinds):
        """The RuntimeWarnings (message, category, file, line) the code run as Python gives, at
        user lines; code that runs effects or overwrote a donated argument is not run again:
        a warning per flag, at the function's first line."""
        if self.effects or self.overwrites:
            return flag_warnings(kinds, self.generated.linemap)
        given, error = python_warnings(self.generated.function, (*args, *free))
        if error is not None:
            raise mapped(error, self.generated) from None
        return given

    def check_finite(self, out, args, free):
        """``debug_nans``/``debug_infs``: on a non-finite output, run the code as Python with
        NumPy raising, so the error names the user line that made it."""
        nans, infs = config.read("debug_nans"), config.read("debug_infs")
        if self.backend == "device":   # (checked on the host; run again there as Python)
            from .runtime.cuda.arrays import to_host
            out, args, free = to_host(out), to_host(args), to_host(free)
            python = Staged(self.fn, self.origin, "python").generated
        else:
            python = self.generated
        bad = [leaf for leaf in tree_leaves(out)
               if isinstance(leaf, (float, np.floating, np.ndarray))
               and np.issubdtype(np.result_type(leaf), np.inexact)
               and ((nans and np.isnan(leaf).any()) or (infs and np.isinf(leaf).any()))]
        if not bad:
            return
        kinds = {"invalid": "raise" if nans else "ignore",
                 "divide": "raise" if infs else "ignore", "over": "raise" if infs else "ignore"}
        with np.errstate(**kinds):
            try:
                python.function(*args, *free)
            except FloatingPointError as e:
                raise mapped(FloatingPointError(
                    f"{'NaN' if nans and any(np.isnan(b).any() for b in bad) else 'inf'} "
                    f"produced ({e})"), python, e.__traceback__) from None
        raise FloatingPointError(f"the output of {self.origin} has "
                                 f"{'NaN' if nans else 'inf'} values, but no NumPy operation "
                                 f"raised when the code was run again as Python")

    def fall_back(self, error):
        """Run as Python from now on.  The warning waits for a Python run that succeeds: code
        that fails as Python too (a string argument, a wrong type at the user's line) gets
        that error alone, not a warning blaming Numba first."""
        loc = numba_location(error, self.generated)
        self.pending = [JitFallbackWarning(
            f"jit could not compile this function with Numba ({numba_reason(error)}); it "
            f"runs on the python backend, with the same results", loc, fix=_fallback_fix(loc))]
        self.backend = "python"
        self.runner = self.python() if self.python else self.generated.function


def _compiled_variant(obj):
    """strop.random's functions as compiled for the current dtype policy and stream; a
    debug.print/callback site as its object-mode island."""
    if getattr(obj, "__strop_effect__", False):
        from .runtime.numba.effects import compiled
        return compiled(obj)
    if not (getattr(obj, "__module__", "") or "").startswith("strop.rng") or not callable(obj):
        return None
    from .rng.compiled import variant
    new = variant(obj, config.read("enable_x64"), config.read("threefry_partitionable"))
    return new if new is not obj else None


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _from_numba_cache(e):
    return any("numba/core/caching" in frame.f_code.co_filename.replace("\\", "/")
               for frame, _ in traceback.walk_tb(e.__traceback__))


def _is_numba_error(e):
    """An error of Numba's compiler (typing, lowering, or an overload's own TypeError), as
    opposed to one the compiled code raised while running."""
    try:
        from numba.core.errors import NumbaError
    except ImportError:
        return False
    if isinstance(e, NumbaError):
        return True
    if isinstance(e, TypeError) and str(e).startswith("cannot convert native"):
        return True   # a result Numba computes but cannot box (a dict of mixed values)
    return any(part in frame.f_code.co_filename.replace("\\", "/")
               for frame, _ in traceback.walk_tb(e.__traceback__)
               for part in ("numba/core/typing", "numba/core/typeinfer", "numba/core/compiler",
                            "numba/core/lowering", "numba/core/base.py"))


def numba_reason(error):
    """Numba's reason, whole: its first sentence, with what a sentence ending in ':' announces
    (the signature no implementation matched), object addresses left out."""
    lines = [ln.strip() for ln in str(error).strip().splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith(("Failed in", "During:"))]
    if not lines:
        return "unsupported code"
    reason = lines[0]
    if reason.endswith(":") and len(lines) > 1:
        reason += " " + lines[1].lstrip(">").strip()
    reason = re.sub(r"Function\(<function (\w+) at 0x[0-9a-f]+>\)", r"\1", reason)
    return re.sub(r" at 0x[0-9a-f]+", "", reason)


def _fallback_fix(loc):
    """What to do: rewrite the user's line, unless it is strop's own code or written as strop
    recommends (then strop should have compiled it: report it)."""
    text = loc.line() if loc is not None else ""
    own = loc is not None and os.path.abspath(loc.filename).startswith(
        os.path.dirname(os.path.abspath(__file__)) + os.sep)
    if own or any(m in text for m in (".at[", "lax.", "nn.", "random.", "debug.")):
        return ("this line is " + ("strop's own code" if own else "written as strop "
                                   "recommends") + ", so strop should compile it: please "
                "report it with strop.source(...) of the function; backend='python' runs it "
                "meanwhile")
    return ("see strop.source(...) for the code Numba was given; rewrite the line in plain "
            "NumPy Numba supports, or use backend='python'")


MAX_ISLANDS = 8   # statements refused one after another: past that, the function runs as Python


def _generated_line(error, gen):
    """The first line of ``gen``'s module a Numba error names."""
    for match in re.finditer(r'File "([^"]+)", line (\d+)', str(error)):
        if os.path.basename(match.group(1)) == os.path.basename(gen.path):
            return int(match.group(2))
    return None


def numba_location(error, gen):
    """The user line of the first generated line a Numba error mentions."""
    for match in re.finditer(r'File "([^"]+)", line (\d+)', str(error)):
        if os.path.basename(match.group(1)) == os.path.basename(gen.path):
            loc = emitter.user_location(gen.linemap, int(match.group(2)))
            if loc is not None:
                return loc
    return None


def mapped(e, gen, tb=None):
    """The same exception, its message naming the user's line the failing code came from
    (``gen``'s, or another generated module's: after a fallback, vmap runs vmap(f)'s code)."""
    loc = None
    for frame, lineno in traceback.walk_tb(tb or e.__traceback__):
        path = frame.f_code.co_filename
        linemap = gen.linemap if path == gen.path else LINEMAPS.get(path)
        if linemap is not None:
            loc = emitter.user_location(linemap, lineno) or loc
    if isinstance(e, runtime_lax.LaxCheckError):   # a check of strop.lax: its error
        return LaxTypeError(str(e), loc)
    if loc is None:
        return e
    message = f"{e}\n{loc.show()}"
    try:
        new = type(e)(message)
    except Exception:
        e.add_note(loc.show())
        return e
    new.location = loc
    return new
