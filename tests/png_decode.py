"""A small PNG decoder for tests (8-bit RGB, not interlaced: what
ballcl writes), written
from the PNG specification with the standard library only, so pictures are
checked by code that shares nothing with the libpng writer."""
import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode(data):
    """Returns (width, height, rows): rows[r][3*c:3*c+3] is pixel (c, r) as RGB
    bytes. Raises ValueError on anything malformed (bad CRC, truncated data)."""
    if data[:8] != SIGNATURE:
        raise ValueError("not a PNG signature")
    pos, idat, ihdr, seen_end = 8, b"", None, False
    while pos < len(data):
        if pos + 8 > len(data):
            raise ValueError("truncated chunk header")
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if len(body) != length or pos + 12 + length > len(data):
            raise ValueError("truncated chunk")
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(kind + body) != crc:
            raise ValueError(f"bad CRC in {kind!r}")
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            seen_end = True
            break
        pos += 12 + length
    if ihdr is None or not seen_end:
        raise ValueError("IHDR or IEND missing")
    width, height, depth, colour, _, _, interlace = ihdr
    if depth != 8 or colour != 2 or interlace != 0:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}")
    bpp = 3
    raw = zlib.decompress(idat)
    stride = width * bpp
    if len(raw) != height * (stride + 1):
        raise ValueError("image data of the wrong length")
    rows, prev = [], bytearray(stride)
    for r in range(height):
        f = raw[r * (stride + 1)]
        cur = bytearray(raw[r * (stride + 1) + 1:(r + 1) * (stride + 1)])
        for i in range(stride):
            a = cur[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                cur[i] = (cur[i] + a) & 255
            elif f == 2:
                cur[i] = (cur[i] + b) & 255
            elif f == 3:
                cur[i] = (cur[i] + (a + b) // 2) & 255
            elif f == 4:
                cur[i] = (cur[i] + _paeth(a, b, c)) & 255
            elif f != 0:
                raise ValueError(f"unknown filter {f}")
        rows.append(bytes(cur))
        prev = cur
    return width, height, rows
