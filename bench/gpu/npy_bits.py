"""Prints the raw bits of a .npy file's first elements in hex (bench/gpu/session.sh's
probes: NaN payloads, which NumPy's printing hides). Test tooling, not part of the product."""
import struct
import sys

path, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8
data = open(path, "rb").read()
header_len = struct.unpack("<H", data[8:10])[0]
header = data[10 : 10 + header_len].decode("latin1")
size = 8 if "<f8" in header or "<i8" in header or "<u8" in header else 4
body = data[10 + header_len :]
words = [int.from_bytes(body[i : i + size], "little") for i in range(0, min(len(body), count * size), size)]
print(" ".join(f"{w:0{2 * size}x}" for w in words))
