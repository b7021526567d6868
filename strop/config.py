"""Global options: ``config.update(name, value)``, ``config.read(name)``, ``config.override(**values)``.

Each option also reads the environment variable ``STROP_<NAME>`` once, at import.
"""
import contextlib
import os

# name: (default, parser of the environment variable's text)
_BOOL = lambda s: s.strip().lower() in ("1", "true", "yes", "on")  # noqa: E731
_OPTIONS = {
    "enable_x64": (False, _BOOL),
    "debug_nans": (False, _BOOL),
    "debug_infs": (False, _BOOL),
    # JAX's current default stream (jax_threefry_partitionable: True since JAX 0.5); False is
    # the original stream, whose values the Sharp Bits and older documents print
    "threefry_partitionable": (True, _BOOL),
    "log_compiles": (False, _BOOL),
    "cache_dir": (None, str),
    "default_backend": ("cpu", str),
}
_BACKENDS = ("cpu", "cuda", "python")


class Config:
    def __init__(self):
        self._values = {}
        for name, (default, parse) in _OPTIONS.items():
            text = os.environ.get("STROP_" + name.upper())
            self._values[name] = default if text is None else parse(text)
        self.update("default_backend", self._values["default_backend"])

    @staticmethod
    def _name(name):
        name = name[len("jax_"):] if name.startswith("jax_") else name  # JAX's spelling works too
        if name not in _OPTIONS:
            raise KeyError(f"strop.config has no option {name!r}; the options are: "
                           + ", ".join(_OPTIONS))
        return name

    def update(self, name, value):
        name = self._name(name)
        if name == "default_backend" and value not in _BACKENDS:
            raise ValueError(f"default_backend must be one of {_BACKENDS}, got {value!r}")
        self._values[name] = bool(value) if isinstance(_OPTIONS[name][0], bool) else value

    def read(self, name):
        return self._values[self._name(name)]

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self.read(name)
        except KeyError as e:
            raise AttributeError(str(e)) from None

    @contextlib.contextmanager
    def override(self, **values):
        """Set options for the duration of a ``with`` block, then restore them."""
        saved = {name: self.read(name) for name in values}
        try:
            for name, value in values.items():
                self.update(name, value)
            yield self
        finally:
            self._values.update(saved)

    def __repr__(self):
        return "strop.config(" + ", ".join(f"{k}={v!r}" for k, v in self._values.items()) + ")"


config = Config()
