"""The best any kernel could do on each KernelBench row of bench/RESULTS-kernelbench.md, over the faster of
eager and torch.compile: the faster baseline's time over the time to read the inputs once and write the
output once at a given rate. Their geometric mean is the ceiling of the table's geomean.

    python3 bench/kernelbench/roofline_bound.py [RESULTS-kernelbench.md] [--rate GB/s ...]

The table's "GB/s" column is the problem's bytes (inputs once, output once) over kforge's time, so the bytes
are GB/s x kforge us; "over the faster" divides the speedup over eager (the worker's two timings) by the
larger of 1 and torch.compile's gain (Python's two timings), as the table does.
"""
import math
import re
import sys


def rows(path):
    out = {}
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 11 or not re.match(r"\d{3}_", cells[0]) or cells[0] in out:
            continue  # the first table: one row per problem
        name, kforge_us, eager_worker, eager_py, compile_us = cells[0], float(cells[2]), float(cells[3]), float(cells[5]), float(cells[6])
        gbs = float(cells[9].split()[0])
        out[name] = (gbs * 1e3 * kforge_us, eager_worker, max(1.0, eager_py / compile_us))  # bytes
    return out


def main(argv):
    path = next((a for a in argv if not a.startswith("--") and not a.replace(".", "").isdigit()), "bench/RESULTS-kernelbench.md")
    rates = [float(argv[i + 1]) for i, a in enumerate(argv) if a == "--rate"] or [4215.0, 4630.0]
    table = rows(path)
    print("| problem | " + " | ".join("floor at %.0f GB/s (us) | ceiling over the faster" % r for r in rates) + " |")
    print("|---|" + "---|---|" * len(rates))
    logs = {r: [] for r in rates}
    for name, (nbytes, eager_worker, compile_gain) in table.items():
        cells = []
        for r in rates:
            floor_us = nbytes / (r * 1e3)
            ceiling = eager_worker / floor_us / compile_gain
            logs[r].append(math.log(ceiling))
            cells += ["%.1f" % floor_us, "%.3fx" % ceiling]
        print("| %s | %s |" % (name, " | ".join(cells)))
    for r in rates:
        print("geometric mean of the ceilings at %.0f GB/s over %d problems: %.3fx" % (r, len(logs[r]), math.exp(sum(logs[r]) / len(logs[r]))))


if __name__ == "__main__":
    main(sys.argv[1:])
