"""Prints the corpus table: each program's checks run under strop, with the first line of
what failed, as a Markdown table (the source of KNOWN_FAILURES and of README.md's table).

    STROP_CACHE_DIR=$(mktemp -d) python tests/corpus/_status.py [name ...]
"""
import os
import sys
import tempfile
import traceback
import warnings

os.environ.setdefault("STROP_CACHE_DIR", tempfile.mkdtemp(prefix="strop-corpus-status-"))
os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(os.environ["STROP_CACHE_DIR"], "numba"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import strop  # noqa: E402
import test_corpus as tc  # noqa: E402

CHECKS = ["value", "grad", "jit", "vmap", "train"]


def run(name, check):
    with strop.config.override(enable_x64=True, threefry_partitionable=True):
        with warnings.catch_warnings():
            warnings.simplefilter("error", tc.JitFallbackWarning)
            if tc.PerformanceWarning is not None:
                warnings.simplefilter("error", tc.PerformanceWarning)
            tc.test_corpus(name, check, None)  # the fixture's work is done just above


def first_line(e):
    text = f"{type(e).__name__}: {e}".strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    where = ""
    for ln in lines[1:]:
        if ln.strip().startswith("File "):
            where = " @ " + ln.strip()[5:].replace(os.getcwd() + "/", "")
            break
    if isinstance(e, AssertionError):
        return " ".join(ln.strip() for ln in lines[:4])[:300]
    return (lines[0] + where)[:300]


def main(names):
    names = names or tc.program_names()
    print("| program | " + " | ".join(CHECKS) + " |")
    print("|---|" + "---|" * len(CHECKS))
    details = []
    for name in names:
        row = []
        try:
            checks = tc.checks_of(name)
        except Exception as e:
            print(f"| {name} | import failed: {first_line(e)} |")
            continue
        for check in CHECKS:
            if check not in checks:
                row.append("-")
                continue
            try:
                run(name, check)
                row.append("ok")
            except BaseException as e:  # noqa: B902 - pytest.fail raises a BaseException
                if isinstance(e, KeyboardInterrupt):
                    raise
                row.append("FAIL")
                details.append((name, check, first_line(e)))
                if os.environ.get("CORPUS_TRACEBACK"):
                    traceback.print_exc()
        print(f"| {name} | " + " | ".join(row) + " |", flush=True)
    print()
    for name, check, why in details:
        print(f'    ("{name}", "{check}"): {why!r},')


if __name__ == "__main__":
    main(sys.argv[1:])
