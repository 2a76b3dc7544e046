#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/).

One small file per input class: each valid form and each defect the readers
must refuse (docs/RELIABILITY.md lists them). Re-run after adding a class;
files are named after what they hold so a failing replay says which class.
Needs numpy (/usr/bin/python3 on Debian).
"""
import copy
import glob
import hashlib
import io
import json
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
    cache_corpus()
    survey_corpus()


def cache_entry(payload, key=b"\x11" * 32, fmt=1, header=512, length=None, checksum=None,
                device=b"pthread-haswell-AMD EPYC", platform=b"Portable Computing Language",
                source=b"seed.cl"):
    """A binary-cache entry laid out as src/cache/cache.h describes."""
    h = bytearray(512)
    h[0:8] = b"BCLCACHE"
    h[8:12] = struct.pack("<I", fmt)
    h[12:16] = struct.pack("<I", header)
    h[16:48] = key
    h[48:56] = struct.pack("<Q", len(payload) if length is None else length)
    h[56:88] = hashlib.sha256(payload).digest() if checksum is None else checksum
    h[88:88 + len(device)] = device
    h[248:248 + len(platform)] = platform
    h[376:376 + len(source)] = source
    return bytes(h) + payload


def cache_corpus():
    body = bytes(range(256)) * 4
    good = cache_entry(body)
    save("cache", "ok", good)
    save("cache", "ok-one-byte", cache_entry(b"\x7f"))
    save("cache", "empty", b"")
    save("cache", "header-truncated", good[:100])
    save("cache", "header-only", good[:512])
    save("cache", "bad-magic", b"BCLCACHX" + good[8:])
    save("cache", "format-2", cache_entry(body, fmt=2))
    save("cache", "header-size-256", cache_entry(body, header=256))
    save("cache", "payload-truncated", good[:700])
    save("cache", "payload-extra", good + b"\0" * 7)
    save("cache", "length-huge", cache_entry(body, length=1 << 62))
    save("cache", "length-zero", cache_entry(b"", length=0))
    save("cache", "checksum-flipped", good[:600] + bytes([good[600] ^ 0x55]) + good[601:])
    save("cache", "labels-unprintable", cache_entry(body, device=b"\x1b[31mred\x1b[0m",
                                                    platform=b"\xff" * 127, source=b"x" * 64))


def survey_corpus():
    """The committed surveys, and each defect the reader must refuse."""
    docs = os.path.join(HERE, "..", "..", "..", "docs", "surveys")
    files = sorted(glob.glob(os.path.join(docs, "*.json")))
    for f in files:
        save("survey", "ok-" + os.path.basename(f), open(f, "rb").read())
    text = open(files[0]).read()
    doc = json.loads(text)
    save("survey", "empty", b"")
    save("survey", "truncated", text[: len(text) // 2])
    save("survey", "garbage", b"\x89PNG\r\n\x1a\n\x00\x00")
    # A version 1 file relabelled 2 or 3 lacks the keys those versions
    # require; 4 is a version the reader does not know.
    save("survey", "schema-2", text.replace('"ballcl-survey/1"', '"ballcl-survey/2"', 1))
    save("survey", "schema-3", text.replace('"ballcl-survey/1"', '"ballcl-survey/3"', 1))
    save("survey", "schema-4", text.replace('"ballcl-survey/1"', '"ballcl-survey/4"', 1))
    save("survey", "schema-bench", json.dumps({"schema": "ballcl-bench/1"}))
    save("survey", "array", "[]")
    save("survey", "schema-not-string", json.dumps({"schema": 1}))
    d = copy.deepcopy(doc)
    del d["devices"][0]["measured"]
    save("survey", "missing-measured", json.dumps(d))
    d = copy.deepcopy(doc)
    d["devices"][0]["limits"] = "none"
    save("survey", "wrong-type-limits", json.dumps(d))
    d = copy.deepcopy(doc)
    d["devices"] = []
    save("survey", "no-devices", json.dumps(d))
    save("survey", "duplicate-key", text.replace("{", '{"schema": "x", ', 1))
    save("survey", "nan-literal", text.replace('"schema"', '"nan": NaN, "schema"', 1))
    save("survey", "huge-int", text.replace('"schema"', '"big": 1' + "0" * 40 + ', "schema"', 1))
    save("survey", "bad-utf8", text.replace('"schema"', '"x": "\xff", "schema"', 1).encode(
        "latin-1", errors="replace"))
    save("survey", "deep", "[" * 5000 + "]" * 5000)


if __name__ == "__main__":
    main()
