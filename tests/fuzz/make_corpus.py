#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/).

One small file per input class: each valid form and each defect the readers
must refuse (docs/RELIABILITY.md lists them). Re-run after adding a class;
files are named after what they hold so a failing replay says which class.
Needs numpy (/usr/bin/python3 on Debian).
"""
import io
import os
import struct

import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def save(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def npy(arr):
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


def raw(dict_text, data=b"", major=1, minor=0, hlen=None):
    """A .npy file with the given header dict, padded as NumPy pads."""
    unpadded = len(dict_text) + 1  # the dict and its final newline
    h = dict_text.encode() + b" " * ((64 - (10 + unpadded) % 64) % 64) + b"\n"
    n = len(h) if hlen is None else hlen
    return b"\x93NUMPY" + bytes([major, minor]) + struct.pack("<H", n) + h + data


def good(n):
    return "{'descr': '<f4', 'fortran_order': False, 'shape': (%s, 4), }" % n


def main():
    f4 = np.arange(12, dtype="<f4").reshape(3, 4)
    save("npy", "ok-3x4", npy(f4))
    save("npy", "ok-1x4", npy(np.ones((1, 4), "<f4")))
    save("npy", "ok-keys-reordered", raw("{'shape': (1, 4), 'fortran_order': False, "
                                         "'descr': '<f4'}", bytes(16)))
    save("npy", "empty", b"")
    save("npy", "magic-only", b"\x93NUMPY")
    save("npy", "bad-magic", b"\x93NUMPZ\x01\x00" + npy(f4)[8:])
    save("npy", "version-2.0", raw(good(1), bytes(16), major=2))
    save("npy", "version-1.1", raw(good(1), bytes(16), minor=1))
    save("npy", "dtype-f8", npy(f4.astype("<f8")))
    save("npy", "dtype-big-endian", npy(f4.astype(">f4")))
    save("npy", "dtype-int32", npy(f4.astype("<i4")))
    save("npy", "dtype-structured", npy(np.zeros(2, dtype=[("x", "<f4"), ("y", "<f4")])))
    save("npy", "fortran-order", npy(np.asfortranarray(f4)))
    save("npy", "shape-1d", npy(np.arange(4, dtype="<f4")))
    save("npy", "shape-3x5", npy(np.zeros((3, 5), "<f4")))
    save("npy", "shape-3d", npy(np.zeros((1, 1, 4), "<f4")))
    save("npy", "shape-0x4", npy(np.zeros((0, 4), "<f4")))
    save("npy", "shape-int-not-tuple", raw("{'descr': '<f4', 'fortran_order': False, "
                                           "'shape': (1), }", bytes(16)))
    save("npy", "shape-leading-zero", raw(good("01"), bytes(16)))
    save("npy", "shape-negative", raw(good("-1"), bytes(16)))
    save("npy", "shape-huge", raw(good(10**19), bytes(16)))
    save("npy", "shape-overflow", raw(good("9" * 30), bytes(16)))
    save("npy", "data-truncated", npy(f4)[:-5])
    save("npy", "data-extra", npy(f4) + b"\0\0\0\0")
    save("npy", "header-longer-than-file", raw(good(1), major=1, hlen=60000))
    save("npy", "header-no-newline", raw(good(1), bytes(16))[:-17] + b" " + bytes(16))
    save("npy", "header-unknown-key", raw("{'descr': '<f4', 'fortran_order': False, "
                                          "'shape': (1, 4), 'x': 1}", bytes(16)))
    save("npy", "header-duplicate-key", raw("{'descr': '<f4', 'descr': '<f4', "
                                            "'fortran_order': False, 'shape': (1, 4)}",
                                            bytes(16)))
    save("npy", "header-missing-key", raw("{'descr': '<f4', 'shape': (1, 4)}", bytes(16)))
    save("npy", "header-escape", raw("{'descr': '<f\\x34', 'fortran_order': False, "
                                     "'shape': (1, 4)}", bytes(16)))
    save("npy", "header-not-a-dict", raw("[1, 2, 3]", bytes(16)))
    save("npy", "value-nan", npy(np.array([[0, 0, np.nan, 0]], "<f4")))
    save("npy", "value-inf", npy(np.array([[0, 0, 0, -np.inf]], "<f4")))

    for name, text in [("default", ""), ("index", "0:0"), ("index-2", "1:1"),
                       ("index-out-of-range", "9:9"), ("index-huge", "999999:999999"),
                       ("index-too-long", "1234567:0"), ("index-half", "1:"),
                       ("index-no-platform", ":1"), ("index-three", "0:0:0"),
                       ("type-gpu", "gpu"), ("type-cpu-upper", "CPU"),
                       ("type-accelerator", "accelerator"), ("name", "h200"),
                       ("name-platform", "pocl"), ("name-ambiguous", "o"),
                       ("name-unknown", "nosuchdevice"), ("name-colon", "a:b"),
                       ("name-space", " "), ("name-long", "x" * 300)]:
        save("selector", name, text)

    for name, text in [("int", "10"), ("zero", "0"), ("negative", "-1"), ("exp", "1e99"),
                       ("int-overflow", "99999999999999999999"), ("trailing", "10x"),
                       ("empty", ""), ("space", " 10"), ("plus", "+5"), ("hex", "0x10"),
                       ("nan", "nan"), ("inf", "inf"), ("underflow", "1e-50"),
                       ("denormal", "1e-40"), ("float", "3.5"), ("local-auto", "auto"),
                       ("local-driver", "driver"), ("local-tuned", "tuned"),
                       ("local-too-big", "1048577"), ("pair", "1.5,2"), ("triple", "1,2,3"),
                       ("pair-empty", ","), ("float-overflow", "1e39")]:
        save("options", name, text)


if __name__ == "__main__":
    main()
