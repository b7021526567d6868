"""strop.random: JAX's splittable Threefry-2x32 PRNG, bit for bit, on NumPy arrays.

Keys are raw uint32 arrays of shape (2,) (batches: (..., 2)), as JAX's legacy PRNGKey.
Every function is pure in its key. ``strop.config.threefry_partitionable`` picks JAX's
current default stream (True, strop's default too, as JAX's since 0.5) or its original stream
(False: the values the Sharp Bits and JAX's older documents print);
``strop.config.enable_x64`` the 64-bit dtype policy.

Modules: threefry (block function), streams (counter layouts), xla_math (elementary
functions as JAX's CPU backend computes them), floats (bits to floats), kernels (one Numba
kernel per public function, and the fills they run), keys and samplers (checked public
wrappers), cache (Numba's disk cache, checked against the whole package's source).

Routing to kernels (for generated code): ``KERNELS[name]`` is the Numba dispatcher that does
the work of the public function ``name``, on already-checked arguments (see each kernel's
docstring and strop.rng.kernels): flat outputs, keys as (2,) uint32 arrays, float types as
np.float32/np.float64 classes, and a final ``partitionable`` bool. The elementwise kernels
run in parallel (prange); the public functions run the same fills, split between threads.
"""
from strop.rng import cache as _cache  # noqa: F401  (first: the disk cache's check, see there)
from strop.rng import kernels as _k, rejection as _r
from strop.rng.keys import PRNGKey, fold_in, key, key_data, split, wrap_key_data
from strop.rng.samplers import bernoulli, beta, bits, categorical, choice, exponential, \
    gamma, gumbel, laplace, loggamma, logistic, multivariate_normal, normal, permutation, \
    poisson, randint, truncated_normal, uniform
from strop.rng.streams import fold_in_key as _fold_in_kernel

__all__ = ["PRNGKey", "key", "key_data", "wrap_key_data", "split", "fold_in", "bits",
           "uniform", "normal", "randint", "bernoulli", "choice", "permutation", "categorical",
           "truncated_normal", "exponential", "gamma", "loggamma", "beta", "poisson", "gumbel",
           "laplace", "logistic", "multivariate_normal", "KERNELS"]

#: public name -> the kernel (or kernels, by case) that computes it; signatures:
#:   split: split_kernel(key, num, partitionable) -> (num, 2) uint32
#:   fold_in: fold_in(key, data: uint32) -> (2,) uint32
#:   bits: bits_kernel(key, n, width (8/16/32), partitionable) -> uint32[n];
#:         bits64_kernel(key, n, partitionable) -> uint64[n]
#:   uniform: uniform_kernel(key, n, lo[F], hi[F], partitionable) -> F[n]
#:   normal/exponential/laplace/logistic: kernel(key, n, F, partitionable) -> F[n]
#:   gumbel: gumbel_kernel(key, n, F, high, partitionable) -> F[n]
#:   truncated_normal: kernel(key, n, lower[F], upper[F], partitionable) -> F[n]
#:   bernoulli: bernoulli_kernel(key, n, p[F], high, partitionable) -> bool[n]
#:   randint: randint_kernel(key, n, lo[i64], hi[i64], hi_out_of_range[bool], nbits,
#:            partitionable) -> uint64[n] (the nbits-bit pattern of the result)
#:   permutation: permutation_kernel(key, n, partitionable) -> int64[n] indices;
#:                shuffle_lanes_kernel(key, outer, n, inner, partitionable) (independent)
#:   choice: randint / permutation_kernel (no p), choice_p_kernel(key, n, p[F], part),
#:           choice_p_noreplace_kernel(key, n, p[F], high, part) -> int64 indices
#:   categorical: categorical_kernel(key, logits(outer,k,inner), prefix, high, part),
#:                categorical_noreplace_kernel(key, logits, n_draws, high, part)
#:   gamma/loggamma: gamma_kernel(key, alpha[F], log_space, partitionable) -> F[n]
#:   beta: beta_kernel(key, a[F], b[F], partitionable) -> F[n]
#:   poisson: poisson_kernel(key, lam[float32], partitionable) -> int64[n]
#:   multivariate_normal: kernel(key, mean(m,d), factor(m,d,d), partitionable) -> (m,d)
#: PRNGKey/key, key_data and wrap_key_data need no kernel (bit manipulation of the seed /
#: identity).
KERNELS = {
    "split": _k.split_kernel,
    "fold_in": _fold_in_kernel,
    "bits": (_k.bits_kernel, _k.bits64_kernel),
    "uniform": _k.uniform_kernel,
    "normal": _k.normal_kernel,
    "exponential": _k.exponential_kernel,
    "laplace": _k.laplace_kernel,
    "logistic": _k.logistic_kernel,
    "gumbel": _k.gumbel_kernel,
    "truncated_normal": _k.truncated_normal_kernel,
    "bernoulli": _k.bernoulli_kernel,
    "randint": _k.randint_kernel,
    "permutation": (_k.permutation_kernel, _k.shuffle_lanes_kernel),
    "choice": (_k.randint_kernel, _k.permutation_kernel, _k.choice_p_kernel,
               _k.choice_p_noreplace_kernel),
    "categorical": (_k.categorical_kernel, _k.categorical_noreplace_kernel),
    "gamma": _r.gamma_kernel,
    "loggamma": _r.gamma_kernel,
    "beta": _r.beta_kernel,
    "poisson": _r.poisson_kernel,
    "multivariate_normal": _r.multivariate_normal_kernel,
}
