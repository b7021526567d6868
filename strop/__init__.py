"""strop: grad, vmap, jit and a splittable PRNG for plain NumPy functions, by source transformation."""
