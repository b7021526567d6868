"""Modeled on HIPS/autograd examples/fluidsim/fluidsim.py (optimizing the initial velocity of
a Stam-style smoke simulation to reach a target image).

Kept: project (divergence from np.roll differences, 10 Gauss-Seidel-like sweeps of np.roll
averages, then `vx -= ...` and `vy -= ...` on the helper's arguments, as written); advect (cell
centres from np.meshgrid, np.floor(...).astype(int) source indices, np.mod wrap-around, the
bilinear blend of four fancy-indexed reads f[left_ix, top_ix] ...); simulate's time loop
advecting vx, vy and the smoke; the objective: convert the flat parameter vector to (vx, vy)
with np.reshape of slices, simulate, mean squared distance to the target.  Changed: a 5x5 grid
and 3 time steps (the original: an image and 100 steps); the initial smoke and the target are
random arrays passed in the batch instead of PNG files; the initial velocities are small
random values (not zeros) so that the floors are away from integers; no plotting and no CG
minimization.
"""
import numpy as np
import numpy as onp

ORIGIN = "autograd"
ROWS = COLS = 5
SIMULATION_TIMESTEPS = 3


def project(vx, vy):
    p = np.zeros(vx.shape)
    h = 1.0 / vx.shape[0]
    div = -0.5 * h * (np.roll(vx, -1, axis=0) - np.roll(vx, 1, axis=0)
                      + np.roll(vy, -1, axis=1) - np.roll(vy, 1, axis=1))

    for k in range(10):
        p = (div + np.roll(p, 1, axis=0) + np.roll(p, -1, axis=0)
             + np.roll(p, 1, axis=1) + np.roll(p, -1, axis=1)) / 4.0

    vx -= 0.5 * (np.roll(p, -1, axis=0) - np.roll(p, 1, axis=0)) / h
    vy -= 0.5 * (np.roll(p, -1, axis=1) - np.roll(p, 1, axis=1)) / h
    return vx, vy


def advect(f, vx, vy):
    rows, cols = f.shape
    cell_ys, cell_xs = np.meshgrid(np.arange(rows), np.arange(cols))
    center_xs = (cell_xs - vx).ravel()
    center_ys = (cell_ys - vy).ravel()

    left_ix = np.floor(center_xs).astype(int)
    top_ix = np.floor(center_ys).astype(int)
    rw = center_xs - left_ix
    bw = center_ys - top_ix
    left_ix = np.mod(left_ix, rows)
    right_ix = np.mod(left_ix + 1, rows)
    top_ix = np.mod(top_ix, cols)
    bot_ix = np.mod(top_ix + 1, cols)

    flat_f = (1 - rw) * ((1 - bw) * f[left_ix, top_ix] + bw * f[left_ix, bot_ix]) \
        + rw * ((1 - bw) * f[right_ix, top_ix] + bw * f[right_ix, bot_ix])
    return np.reshape(flat_f, (rows, cols))


def simulate(vx, vy, smoke, num_time_steps):
    for t in range(num_time_steps):
        vx_updated = advect(vx, vx, vy)
        vy_updated = advect(vy, vx, vy)
        vx, vy = project(vx_updated, vy_updated)
        smoke = advect(smoke, vx, vy)
    return smoke


def distance_from_target_image(smoke, target):
    return np.mean((target - smoke) ** 2)


def convert_param_vector_to_matrices(params):
    vx = np.reshape(params[:(ROWS * COLS)], (ROWS, COLS))
    vy = np.reshape(params[(ROWS * COLS):], (ROWS, COLS))
    return vx, vy


def loss(params, init_smoke, target):
    init_vx, init_vy = convert_param_vector_to_matrices(params)
    final_smoke = simulate(init_vx, init_vy, init_smoke, SIMULATION_TIMESTEPS)
    return distance_from_target_image(final_smoke, target)


def init():
    rs = onp.random.RandomState(5)
    init_dx_and_dy = 0.3 * rs.randn(2 * ROWS * COLS)
    init_smoke = rs.rand(ROWS, COLS)
    target = rs.rand(ROWS, COLS)
    return init_dx_and_dy, (init_smoke, target)
