"""A batch-size sweep plotted with matplotlib: GPU time per sample against the batch size."""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import warpscope

files = sys.argv[1:] or [f"sample_profiles/alexnet_b{b}.pt.trace.json.gz" for b in (8, 16, 32, 128)]
sweep = warpscope.compare(files)  # labels from the file names (batch=8 ...), in sweep order
batches, per_sample_us = [], []
for run in sweep["runs"]:
    steps = run["steps"]["count"] if run["steps"] else 1
    batches.append(run["batch"])
    per_sample_us.append(run["gpu_total_ns"] / steps / run["batch"] / 1e3)
    print(f"batch {run['batch']:5.0f}: {per_sample_us[-1]:8.1f} us of GPU time per sample")
fig, ax = plt.subplots(figsize=(5, 3.5))
ax.plot(batches, per_sample_us, marker="o")
ax.set_xscale("log", base=2)
ax.set_xlabel("batch size")
ax.set_ylabel("GPU time per sample (us)")
ax.set_title(sweep["sweep"] or "runs")
fig.tight_layout()
fig.savefig("sweep.png", dpi=120)
