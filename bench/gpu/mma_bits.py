"""Prints the mma probe's table (bench/gpu/special_bits.py mma): per row of A, the bits of
D for the first five columns (B's scales 1, 2^100, 0, -1, 1), rounded form / truncating form.
Test tooling, not part of the product."""
import struct
import sys

NAMES = ["NaN, payload bit 0", "qNaN 7fc00000", "NaN, payload bit 12", "NaN, payload bit 13", "+Inf", "-Inf",
         "denormal 1", "denormal 2000", "denormal 400000", "-0", "1 + low bits", "-(1 + low bits)",
         "FLT_MAX", "denormal 1fff", "-largest denormal", "-0 row, C = -0"]


def words(path):
    data = open(path, "rb").read()
    header_len = struct.unpack("<H", data[8:10])[0]
    body = data[10 + header_len :]
    return [struct.unpack("<I", body[i : i + 4])[0] for i in range(0, len(body), 4)]


rn, rz = words(sys.argv[1]), words(sys.argv[2])
print("row  A[row][0]             D[row][n] for n = 0..4 (x1, x2^100, x0, x-1, x1): rounded / truncated")
for r in range(16):
    print(f"{r:2}  {NAMES[r]:22}", " ".join(f"{rn[8 * r + n]:08x}/{rz[8 * r + n]:08x}" for n in range(5)))
