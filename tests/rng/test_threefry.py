"""The Threefry-2x32 block function against the known-answer vectors of Random123
(Salmon et al., SC 2011; file examples/kat_vectors of the Random123 distribution, lines
"threefry2x32 20 <ctr0> <ctr1> <key0> <key1> <out0> <out1>")."""
import numpy as np
import pytest

from strop.rng.threefry import threefry2x32, threefry2x32_blocks, threefry2x32_reference

KAT = [  # counter, key, expected output (20 rounds)
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6b200159, 0x99ba4efe)),
    ((0xffffffff, 0xffffffff), (0xffffffff, 0xffffffff), (0x1cb996fc, 0xbb002be7)),
    ((0x243f6a88, 0x85a308d3), (0x13198a2e, 0x03707344), (0xc4923a9c, 0x483df7a0)),
]


@pytest.mark.parametrize("ctr,key,expected", KAT)
def test_known_answers(ctr, key, expected):
    got = threefry2x32(np.uint32(key[0]), np.uint32(key[1]), np.uint32(ctr[0]), np.uint32(ctr[1]))
    assert tuple(int(v) for v in got) == expected


def test_blocks_and_plain_python_agree():
    key = np.array(KAT[2][1], np.uint32)
    x0 = np.array([c[0][0] for c in KAT], np.uint32)
    x1 = np.array([c[0][1] for c in KAT], np.uint32)
    y0, y1 = threefry2x32_blocks(key, x0, x1)
    assert (int(y0[2]), int(y1[2])) == KAT[2][2]
    py = threefry2x32_reference(key[0], key[1], x0[2], x1[2])   # plain Python: same bits
    assert (int(py[0]), int(py[1])) == KAT[2][2]
