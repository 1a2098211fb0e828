"""Philox-4x32-10 and the dropout keep rule of lib/runtime/philox.hpp, in NumPy.

convbench draws every dropout mask as a pure function of (seed, logical element index), so the
PyTorch peer can reproduce the exact mask and the two results can be compared element by element.
This file mirrors the C++ header operation for operation; tests/torch_peer_test.py checks it
against values printed by that header.
"""

import numpy as np

_MASK32 = np.uint64(0xFFFFFFFF)
_MUL0 = np.uint64(0xD2511F53)
_MUL1 = np.uint64(0xCD9E8D57)
_WEYL0 = np.uint64(0x9E3779B9)
_WEYL1 = np.uint64(0xBB67AE85)
_SHIFT32 = np.uint64(32)


def philox4x32_10(counter, key):
    """The four 32-bit words for each 64-bit counter (array-like) under a 64-bit key.

    As in the header, the counter's low and high halves fill words 0 and 1, words 2 and 3 start
    at zero, and the key's halves are the two key words. All products are 32x32 -> 64 bit, so
    uint64 arithmetic is exact.
    """
    counter = np.asarray(counter, dtype=np.uint64)
    key = int(key) & 0xFFFFFFFFFFFFFFFF
    c0 = counter & _MASK32
    c1 = counter >> _SHIFT32
    c2 = np.zeros_like(counter)
    c3 = np.zeros_like(counter)
    k0 = np.uint64(key & 0xFFFFFFFF)
    k1 = np.uint64(key >> 32)
    for _ in range(10):
        p0 = _MUL0 * c0
        p1 = _MUL1 * c2
        n0 = (p1 >> _SHIFT32) ^ c1 ^ k0
        n2 = (p0 >> _SHIFT32) ^ c3 ^ k1
        c1 = p1 & _MASK32
        c3 = p0 & _MASK32
        c0 = n0
        c2 = n2
        k0 = (k0 + _WEYL0) & _MASK32
        k1 = (k1 + _WEYL1) & _MASK32
    return c0, c1, c2, c3


def philox_uniform(index, seed):
    """Uniform in [0, 1) from the top 24 bits of word 0; exact in float32 and float64."""
    v0 = philox4x32_10(index, seed)[0]
    return (v0 >> np.uint64(8)).astype(np.float64) * (1.0 / 16777216.0)


def dropout_keep(index, seed, p):
    """True where element `index` survives dropout with drop probability p.

    The header compares two floats, so p is rounded to float32 first, as the C++ call does.
    """
    return philox_uniform(index, seed) >= float(np.float32(p))


def dropout_mask(numel, seed, p):
    """Keep mask (bool, flat, logical element order) for a tensor of `numel` elements."""
    return dropout_keep(np.arange(numel, dtype=np.uint64), seed, p)
