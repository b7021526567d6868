"""``python -m strop demo``: a short tour.  ``python -m strop show file.py:func --grad``: print
the generated source of a function's transform."""
import argparse
import importlib.util
import os
import sys


def demo():
    from . import demo as tour
    tour.run()


def show(target, transform):
    import strop
    path, _, func = target.rpartition(":")
    if not path or not func:
        raise SystemExit("usage: python -m strop show path/to/file.py:function [--grad]")
    if not os.path.isfile(path):
        raise SystemExit(f"python -m strop show: no file {path!r}")
    spec = importlib.util.spec_from_file_location(
        os.path.splitext(os.path.basename(path))[0], path)
    if spec is None:
        raise SystemExit(f"python -m strop show: {path!r} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)   # (an error in the user's file: its own traceback)
    fn = module
    for part in func.split("."):
        if not hasattr(fn, part):
            names = sorted(n for n, v in vars(module).items()
                           if callable(v) and getattr(v, "__module__", None) == module.__name__)
            raise SystemExit(f"python -m strop show: {path} has no function {func!r}"
                             + (f"; its functions: {', '.join(names)}" if names else ""))
        fn = getattr(fn, part)
    fn = {"grad": strop.grad, "value_and_grad": strop.value_and_grad}[transform](fn)
    try:
        strop.show(fn)
    except strop.errors.StropError as e:   # not strop's fault: the message says what to do
        raise SystemExit(f"{type(e).__name__}: {e}") from None


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m strop")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="a short tour of what strop does")
    p = sub.add_parser("show", help="print the generated source of a transformed function")
    p.add_argument("target", help="path/to/file.py:function")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--grad", dest="transform", action="store_const", const="grad")
    group.add_argument("--value-and-grad", dest="transform", action="store_const",
                       const="value_and_grad")
    p.set_defaults(transform="grad")
    sub.add_parser("rules", help="list the NumPy functions strop differentiates")
    args = parser.parse_args(argv)
    if args.command == "demo":
        demo()
    elif args.command == "show":
        show(args.target, args.transform)
    elif args.command == "rules":
        from .transformer.rules.docs import markdown
        print(markdown())


if __name__ == "__main__":
    main()
