"""Modeled on the UvA Deep Learning tutorials, JAX version, Tutorial 6 "Transformers and
Multi-Head Attention"
(https://uvadlc-notebooks.readthedocs.io/en/latest/tutorial_notebooks/JAX/tutorial6/Transformers_and_MHAttention.html).

Kept: `scaled_dot_product(q, k, v, mask=None)` with `np.matmul(q, np.swapaxes(k, -2, -1))`,
scaling by sqrt(d_k), `np.where(mask == 0, -9e15, attn_logits)` and `nn.softmax(...,
axis=-1)`, returning `(values, attention)`; multi-head attention projecting with one
`qkv_proj` of width 3 * embed_dim, reshaping to (batch, seq, heads, 3 * head_dim),
`transpose(0, 2, 1, 3)`, `np.array_split(qkv, 3, axis=-1)`, and an output projection
`o_proj`; a residual connection and layer normalization as in the tutorial's encoder block.
Changed: the Flax modules written as functions over a dict of dicts {'qkv_proj':
{'kernel', 'bias'}, 'o_proj': {...}, 'ln': {'scale', 'bias'}}; embed_dim 4, 2 heads,
sequences of 3 tokens, a causal mask; a regression loss on the block's output.
"""
import numpy as np
import numpy as onp
from strop import grad, jit, nn

ORIGIN = "jax"
NUM_HEADS = 2


def scaled_dot_product(q, k, v, mask=None):
    d_k = q.shape[-1]
    attn_logits = np.matmul(q, np.swapaxes(k, -2, -1))
    attn_logits = attn_logits / np.sqrt(d_k)
    if mask is not None:
        attn_logits = np.where(mask == 0, -9e15, attn_logits)
    attention = nn.softmax(attn_logits, axis=-1)
    values = np.matmul(attention, v)
    return values, attention


def dense(p, x):
    return x @ p['kernel'] + p['bias']


def multihead_attention(params, x, mask=None):
    batch_size, seq_length, embed_dim = x.shape
    qkv = dense(params['qkv_proj'], x)
    # Separate Q, K, V from linear output
    qkv = qkv.reshape(batch_size, seq_length, NUM_HEADS, -1)
    qkv = qkv.transpose(0, 2, 1, 3)  # [Batch, Head, SeqLen, Dims]
    q, k, v = np.array_split(qkv, 3, axis=-1)
    values, attention = scaled_dot_product(q, k, v, mask=mask)
    values = values.transpose(0, 2, 1, 3)  # [Batch, SeqLen, Head, Dims]
    values = values.reshape(batch_size, seq_length, embed_dim)
    o = dense(params['o_proj'], values)
    return o, attention


def layer_norm(p, x, eps=1e-6):
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * p['scale'] + p['bias']


def encoder_block(params, x, mask):
    attn_out, _ = multihead_attention(params, x, mask=mask)
    return layer_norm(params['ln'], x + attn_out)


def loss(params, x, y):
    seq_length = x.shape[1]
    mask = np.tril(np.ones((seq_length, seq_length)))
    return np.mean((encoder_block(params, x, mask) - y) ** 2)


def example_loss(params, x, y):
    return loss(params, x[None], y[None])


@jit
def train_step(params, x, y):
    grads = grad(loss)(params, x, y)
    return {layer: {name: params[layer][name] - 0.1 * grads[layer][name]
                    for name in params[layer]}
            for layer in params}


def train(params, x, y):
    for _ in range(2):
        params = train_step(params, x, y)
    return params


def init():
    rng = onp.random.RandomState(25)
    embed_dim = 4
    params = {
        'qkv_proj': {'kernel': 0.5 * rng.randn(embed_dim, 3 * embed_dim),
                     'bias': onp.zeros(3 * embed_dim)},
        'o_proj': {'kernel': 0.5 * rng.randn(embed_dim, embed_dim), 'bias': onp.zeros(embed_dim)},
        'ln': {'scale': onp.ones(embed_dim), 'bias': onp.zeros(embed_dim)},
    }
    x = rng.randn(2, 3, embed_dim)
    y = rng.randn(2, 3, embed_dim)
    return params, (x, y)
