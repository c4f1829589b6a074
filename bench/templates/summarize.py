#!/usr/bin/env python3
"""Joins the eager/torch.compile timings with kforge's best template per case into the table of
bench/RESULTS-templates.md. Usage: summarize.py eager.jsonl kforge-best.jsonl [header text]"""
import json
import math
import sys


def key(case):
    return (case["family"], json.dumps(case["shape"], sort_keys=True), case["dtype"])


def main():
    eager, copy_bw = {}, None
    for line in open(sys.argv[1]):
        r = json.loads(line)
        if "copy_bandwidth_GBps" in r:
            copy_bw = r["copy_bandwidth_GBps"]
        elif "eager_us" in r:
            eager[key(r["case"])] = r
    best = {}
    for line in open(sys.argv[2]):
        r = json.loads(line)
        best[key(r["case"])] = r
    print(f"Measured device-to-device copy bandwidth: {copy_bw:.0f} GB/s (bytes read + written)\n")
    print("| operator | shape | dtype | floor us | kforge best us | % of copy BW | eager us | % | torch.compile us | % | vs eager | vs compile | vs the faster | best template |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios, over_faster = [], []
    for k, e in eager.items():
        fam, shape, dt = k
        floor = e["floor_us"]
        eg, cp = e["eager_us"][0], e["compile_us"][0]
        b = best.get(k, {}).get("best")
        kf = b["candidate_median_us"] if b else math.nan
        tmpl = (b["template"] + " " + json.dumps(b["params"], separators=(",", ":"))) if b else "none correct"
        if b and b.get("status") != "accepted":
            # The guard accepted nothing, so the pack keeps ATen's kernel: kforge's time is eager's.
            tmpl = (f"none accepted, ATen kept (best candidate {tmpl}: {b['speedup']:.3f}x ATen in kforge's harness, "
                    f"{b['candidate_median_us']:.1f} vs {b['baseline_median_us']:.1f} us)")
            kf = e["eager_us"][0]
        pct = lambda t: f"{100 * floor / t:.0f}%" if t and not math.isnan(t) else "n/a"
        vs_e = eg / kf if b else math.nan
        vs_c = cp / kf if b else math.nan
        vs_f = min(eg, cp if not math.isnan(cp) else eg) / kf if b else math.nan
        if b:
            over_faster.append(vs_f)
        s_model = f" ({e['case']['model']})" if e["case"].get("model") else ""
        if fam in ("softmax", "log_softmax", "layer_norm", "rms_norm", "group_norm") and b:
            ratios.append(vs_e)
        s = ",".join(f"{a}={v}" for a, v in json.loads(shape).items())
        print(f"| {fam} | {s} | {dt} | {floor:.1f} | {kf:.1f} | {pct(kf)} | {eg:.1f} | {pct(eg)} | {cp:.1f} | {pct(cp)} | {vs_e:.2f}x | {vs_c:.2f}x | {vs_f:.2f}x | {tmpl}{s_model} |")
    if ratios:
        g = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"\nGeometric mean speedup over eager across the normalization cases: {g:.2f}x ({len(ratios)} cases)")
    if over_faster:
        g = math.exp(sum(math.log(r) for r in over_faster) / len(over_faster))
        faster = sum(1 for r in over_faster if r > 1.02)
        print(f"Geometric mean over the faster of eager and torch.compile, every case: {g:.3f}x ({len(over_faster)} cases, "
              f"{faster} more than 2% faster)")


if __name__ == "__main__":
    main()
