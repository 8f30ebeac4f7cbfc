"""A job directory with concurrent.futures: one rank file per task, the kernels of every rank
in one table. `load` releases the GIL, so threads suffice."""
import concurrent.futures as cf
import sys
from pathlib import Path

import pyarrow as pa

import warpscope

job = Path(sys.argv[1])
files = sorted(p for p in job.iterdir() if p.name.endswith((".json", ".json.gz")))


def rank_kernels(path):
    return warpscope.load(path).kernels().select(["rank", "name", "dur_ns", "device", "stream"])


with cf.ThreadPoolExecutor(max_workers=4) as pool:
    kernels = pa.concat_tables(pool.map(rank_kernels, files))
df = kernels.to_pandas()
per_rank = df.groupby("rank")["dur_ns"].agg(kernels="count", kernel_ns="sum")
print(per_rank.to_string())
top = df.groupby("name", observed=True)["dur_ns"].sum().sort_values(ascending=False).head(5)
print(top.to_string())
