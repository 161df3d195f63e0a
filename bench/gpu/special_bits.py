"""Writes the special-value inputs of bench/gpu/session.sh's probes as .npy files (the bits
that matter, which no `--arg` generator makes). Test tooling, not part of the product.

  special_bits.py nan16 DIR   DIR/x.npy: 32 floats for probes.prism's `nan16`
  special_bits.py nanhalf DIR DIR/fs.npy: NANHALF_F (floats), DIR/ds.npy: NANHALF_D (doubles)
                              for probes.prism's `nan_half`
  special_bits.py mma DIR     DIR/a.npy, b.npy, c.npy for tests/ui/accept/rules/mma_tf32_rz.prism's
                              `mma_both` on one block: row r of A (16 x 8) holds MMA_ROWS[r] at
                              k = 0 and zeros elsewhere; B (8 x 8, k x n) has row 0 = MMA_SCALES
                              and 1 in column 4 at every k; C is 0 but row 15 = -0 (with A's
                              row 15 all -0, every product of that row is -0)

The mma probe asks what the tensor cores make of a NaN (review R23 F1: the simulator writes
the canonical 0x7fffffff for any NaN result) and of a NaN whose payload lies only in the 13
low mantissa bits that tf32 drops (R23 F2: truncated, it would read as an infinity; the
simulator keeps it a NaN), for the rounding (`mma_tf32`) and the truncating
(`mma_tf32_rz`) forms; `mma_bits.py` prints the table.
"""
import struct
import sys

NAN16 = [
    0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7F801000, 0x7F802000, 0x7FA00000, 0x7FFFFFFF,
    0xFFFFFFFF, 0x7FC00001, 0x7FE00000, 0x7F900000, 0x7F810000, 0x7F800100, 0x7F804000, 0x7FBFFFFF,
    0x7F800000, 0xFF800000, 0x00000000, 0x80000000, 0x7F7FFFFF, 0x477FF000, 0x477FF001, 0x7F7F0000,
    0x3F800000, 0x00000001, 0x38800000, 0x33800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x47800000, 0xC7800000,
]
MMA_ROWS = [
    0x7F800001, 0x7FC00000, 0x7F801000, 0x7F802000, 0x7F800000, 0xFF800000, 0x00000001, 0x00002000,
    0x00400000, 0x80000000, 0x3F801FFF, 0xBF801FFF, 0x7F7FFFFF, 0x00001FFF, 0x807FFFFF, 0x80000000,
]
MMA_SCALES = [0x3F800000, 0x71800000, 0x00000000, 0xBF800000, 0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000]


# `nan_half`: a float NaN with a payload (its identities), and a signalling float NaN that
# converts to a 16-bit NaN with a payload; two double NaNs for min and max.
NANHALF_F = [0xFFC00001, 0x7F802000]
NANHALF_D = [0xFFF8000000000000, 0x7FF4000000000001]


def npy(path, words, descr="<f4", fmt="<I"):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(words))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(b"".join(struct.pack(fmt, w) for w in words))


def main():
    what, out = sys.argv[1], sys.argv[2]
    if what == "nan16":
        npy(f"{out}/x.npy", NAN16)
    elif what == "nanhalf":
        npy(f"{out}/fs.npy", NANHALF_F)
        npy(f"{out}/ds.npy", NANHALF_D, "<f8", "<Q")
    elif what == "mma":
        a = [0] * 128
        for r, s in enumerate(MMA_ROWS):
            a[8 * r] = s
        for k in range(8):
            a[8 * 15 + k] = 0x80000000
        b = [0] * 64
        b[:8] = MMA_SCALES
        for k in range(1, 8):
            b[8 * k + 4] = 0x3F800000
        c = [0] * 128
        for n in range(8):
            c[8 * 15 + n] = 0x80000000
        npy(f"{out}/a.npy", a)
        npy(f"{out}/b.npy", b)
        npy(f"{out}/c.npy", c)
    else:
        sys.exit(f"special_bits.py: unknown probe `{what}` (nan16, nanhalf or mma)")


main()
