"""Modeled on HIPS/autograd examples/gmm.py (a Gaussian mixture fit by gradient methods).

Kept: the parameter dict {"log proportions", "means", "lower triangles"} (the triangles
start as identity matrices); log_normalize; unpack_gmm_params returning a tuple that
gmm_log_likelihood iterates as `zip(*unpack_gmm_params(params))`; cov = cov_sqrt.T @ cov_sqrt;
the list of per-cluster log likelihoods stacked with np.vstack and reduced with logsumexp over
axis 0; the objective -gmm_log_likelihood.  Changed: 3 components, D = 2, 8 data points (two
pinwheel-like blobs made with RandomState); scipy.special.logsumexp and
scipy.stats.multivariate_normal.logpdf are written as NumPy expressions (max-shifted log-sum-exp;
the Gaussian log density through np.linalg.solve and np.linalg.slogdet); the Newton-CG
minimization through scipy.optimize is not kept (train is not defined).
"""
import numpy as np
import numpy as onp

ORIGIN = "autograd"


def logsumexp(x, axis=None):
    max_x = np.max(x, axis=axis, keepdims=True)
    out = max_x + np.log(np.sum(np.exp(x - max_x), axis=axis, keepdims=True))
    return np.squeeze(out, axis=axis) if axis is not None else np.squeeze(out)


def mvn_logpdf(x, mean, cov):
    D = mean.shape[0]
    diffs = x - mean
    maha = np.sum(diffs * np.linalg.solve(cov, diffs.T).T, axis=1)
    sign, logdet = np.linalg.slogdet(cov)
    return -0.5 * (D * np.log(2 * np.pi) + logdet + maha)


def init_gmm_params(num_components, D, scale, rs):
    return {"log proportions": rs.randn(num_components) * scale,
            "means": rs.randn(num_components, D) * scale,
            "lower triangles": onp.zeros((num_components, D, D)) + onp.eye(D)}


def log_normalize(x):
    return x - logsumexp(x)


def unpack_gmm_params(params):
    normalized_log_proportions = log_normalize(params["log proportions"])
    return normalized_log_proportions, params["means"], params["lower triangles"]


def gmm_log_likelihood(params, data):
    cluster_lls = []
    for log_proportion, mean, cov_sqrt in zip(*unpack_gmm_params(params)):
        cov = np.dot(cov_sqrt.T, cov_sqrt)
        cluster_lls.append(log_proportion + mvn_logpdf(data, mean, cov))
    return np.sum(logsumexp(np.vstack(cluster_lls), axis=0))


def loss(params, data):
    return -gmm_log_likelihood(params, data)


def example_loss(params, point):
    return loss(params, point[None, :])


def init():
    rs = onp.random.RandomState(3)
    params = init_gmm_params(3, 2, 0.5, rs)
    params["lower triangles"] = params["lower triangles"] + 0.1 * rs.randn(3, 2, 2)
    data = onp.concatenate([rs.randn(4, 2) * 0.3 + [1.0, 0.0],
                            rs.randn(4, 2) * 0.3 + [-0.5, 1.0]])
    return params, (data,)
