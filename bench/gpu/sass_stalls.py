"""Reduces Nsight Compute's source page of one kernel (`ncu -i REPORT --page source --csv
--print-source sass`, on stdin) to where the sampled warp stalls sit, SASS line by SASS line
(bench/gpu/profile.sh with STALLS=1). The 2026-11-28 profiles found the FP32 gemms' extra
stalls to be dispatch stalls, nine times cuBLAS's, without saying on which instructions;
this prints, for the lines that drew samples, the instruction and its samples by reason,
then the samples summed by opcode, so that Prism's kernels and cuBLAS's can be compared
instruction class by instruction class. Test tooling, not part of the product.

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
    print("\nsamples by opcode (share of all samples; then each counted column's sum):")
    for op, sums in sorted(by_op.items(), key=lambda kv: -kv[1][header[total_col]]):
        share = 100 * sums[header[total_col]] / all_samples
        cols = ", ".join(f"{k} {v:g}" for k, v in sorted(sums.items(), key=lambda kv: -kv[1]) if v > 0 and k != header[total_col])
        print(f"  {op:<28} {share:5.1f}%  {cols}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
