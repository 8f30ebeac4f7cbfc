"""Top kernels of a profile with pandas."""
import sys

import warpscope

profile = warpscope.load(sys.argv[1] if len(sys.argv) > 1 else "sample_profiles/resnet50_b64_fp32.pt.trace.json.gz")
kernels = profile.kernels().to_pandas()  # names are pandas categoricals
top = (
    kernels.groupby("name", observed=True)["dur_ns"]
    .agg(calls="count", total_ns="sum", mean_ns="mean")
    .sort_values("total_ns", ascending=False)
)
top["share_pct"] = 100 * top["total_ns"] / top["total_ns"].sum()
print(top.head(10).to_string(formatters={"mean_ns": "{:.0f}".format, "share_pct": "{:.1f}".format}))
