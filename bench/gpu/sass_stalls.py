"""Reduces Nsight Compute's source page of one kernel (`ncu -i REPORT --page source --csv
--print-source sass`, on stdin) to where the sampled warp stalls sit, SASS line by SASS line
(bench/gpu/profile.sh with STALLS=1). The 2026-11-28 profiles found the FP32 gemms' extra
stalls to be dispatch stalls, nine times cuBLAS's, without saying on which instructions;
this prints, for the lines that drew samples, the instruction and its samples by reason,
then the samples summed by opcode, so that Prism's kernels and cuBLAS's can be compared
instruction class by instruction class. Last, every FFMA line of the page (sampled or not)
is classed by its source registers' banks, to test the usual suspect for dispatch stalls: the
sources that the operand reuse cache does not serve (the previous instruction marked the same
register `.reuse` in the same slot), two of them in one bank under a 2-bank (register % 2) or
a 4-bank (register % 4) model; the dispatch-stall samples per line of each class say whether
either model predicts where the stalls are. Test tooling, not part of the product.

The page's column names vary between Nsight Compute versions, so nothing but the
instruction's text is looked up by name: every other column whose values are numbers and
whose name speaks of samples or stalls is a count. The header is printed first, so that a
version whose names this does not expect still shows what it gave."""
import csv
import re
import sys
from collections import defaultdict

TOP_LINES = 60  # the lines with the most samples, in full


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def main():
    rows = [r for r in csv.reader(sys.stdin) if r]
    # The header is the first row with a column naming the source or the instruction.
    start = next((i for i, r in enumerate(rows) if any(re.search(r"^(Source|Instruction|SASS)", c) for c in r)), None)
    if start is None:
        print("sass_stalls: no source page header in the input; its first lines:")
        for r in rows[:5]:
            print("  " + ",".join(r)[:200])
        return 1
    header, body = rows[start], rows[start + 1 :]
    text_col = next(i for i, c in enumerate(header) if re.search(r"^(Source|Instruction|SASS)", c))
    addr_col = next((i for i, c in enumerate(header) if re.search(r"address", c, re.I)), None)
    counts = [
        i
        for i, c in enumerate(header)
        if i != text_col and re.search(r"sampl|stall", c, re.I) and any(number(r[i] or "x") is not None for r in body if i < len(r))
    ]
    print("columns: " + " | ".join(header))
    # Shorter names for the per-reason metrics (smsp__pcsamp_warps_issue_stalled_dispatch_stall
    # is printed as dispatch_stall), once the full names are printed above.
    header = [re.sub(r"^smsp__pcsamp_warps_issue_stalled_", "", c) for c in header]
    print("counted: " + " | ".join(header[i] for i in counts))
    total_col = next((i for i in counts if re.search(r"all sampl|sampling \(all", header[i], re.I)), counts[0] if counts else None)
    if total_col is None:
        print("sass_stalls: no column of samples")
        return 1
    lines = []
    by_op = defaultdict(lambda: defaultdict(float))
    for r in body:
        if len(r) <= max([text_col, total_col] + counts):
            continue
        total = number(r[total_col]) or 0.0
        if total <= 0:
            continue
        text = r[text_col].strip()
        op = re.sub(r"^@!?U?P\w+\s+", "", text).split(" ")[0] if text else "?"
        reasons = {header[i]: number(r[i]) or 0.0 for i in counts if i != total_col}
        for name, v in reasons.items():
            by_op[op][name] += v
        by_op[op]["(lines)"] += 1
        by_op[op][header[total_col]] += total
        lines.append((total, r[addr_col] if addr_col is not None else "", text, reasons))
    all_samples = sum(t for t, *_ in lines) or 1.0
    print(f"\nthe {min(TOP_LINES, len(lines))} of {len(lines)} sampled lines with the most samples ({header[total_col]}):")
    for total, addr, text, reasons in sorted(lines, key=lambda x: -x[0])[:TOP_LINES]:
        top = sorted(((v, k) for k, v in reasons.items() if v > 0), reverse=True)[:4]
        why = ", ".join(f"{k} {v:g}" for v, k in top)
        print(f"  {addr:>8} {100 * total / all_samples:5.2f}% {text[:64]:<64} {why}")
    banks(body, text_col, total_col, counts, header)
    print("\nsamples by opcode (share of all samples; then each counted column's sum):")
    for op, sums in sorted(by_op.items(), key=lambda kv: -kv[1][header[total_col]]):
        share = 100 * sums[header[total_col]] / all_samples
        cols = ", ".join(f"{k} {v:g}" for k, v in sorted(sums.items(), key=lambda kv: -kv[1]) if v > 0 and k != header[total_col])
        print(f"  {op:<28} {share:5.1f}%  {cols}")
    return 0


def operands(text):
    """The register operands of a SASS line after its destination, as (slot, register,
    reused): `FFMA R10, R2.reuse, R3, R10` gives (0, 2, True), (1, 3, False), (2, 10, False)."""
    body = re.sub(r"^@!?U?P\w+\s+", "", text).rstrip(" ;")
    parts = [p.strip() for p in body.split(" ", 1)[1].split(",")] if " " in body else []
    out = []
    for slot, p in enumerate(parts[1:]):
        m = re.match(r"^-?\|?R(\d+)(\.reuse)?", p)
        if m:
            out.append((slot, int(m.group(1)), bool(m.group(2))))
    return out


def banks(body, text_col, total_col, counts, header):
    dispatch = next((i for i in counts if "dispatch" in header[i]), total_col)
    classes = defaultdict(lambda: [0, 0.0, 0.0])  # lines, samples, dispatch samples
    previous = []
    for r in body:
        if len(r) <= max([text_col, total_col, dispatch]):
            continue
        text = r[text_col].strip()
        ops = operands(text)
        if re.sub(r"^@!?U?P\w+\s+", "", text).startswith("FFMA"):
            cached = {(slot, reg) for slot, reg, reused in previous if reused}
            # Registers read from the register file (a register read twice is read once).
            uncached = sorted({reg for slot, reg, _ in ops if (slot, reg) not in cached})
            two = len({x % 2 for x in uncached}) < len(uncached)
            four = len({x % 4 for x in uncached}) < len(uncached)
            key = f"{len(uncached)} uncached, {'a 2-bank' if two else 'no 2-bank'} / {'a 4-bank' if four else 'no 4-bank'} conflict"
            c = classes[key]
            c[0] += 1
            c[1] += number(r[total_col]) or 0.0
            c[2] += number(r[dispatch]) or 0.0
        previous = ops
    if not classes:
        return
    print(f"\nFFMA lines by uncached source registers in one bank ({header[dispatch]} per line):")
    for key, (lines, samples, disp) in sorted(classes.items()):
        print(f"  {key:<52} {lines:>6} lines {samples:>10g} samples {disp / lines:>9.2f} per line")


if __name__ == "__main__":
    sys.exit(main())
