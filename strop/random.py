"""strop.random: the splittable Threefry-2x32 PRNG (see strop.rng)."""
from strop.rng import *  # noqa: F401,F403
from strop.rng import __all__  # noqa: F401
