"""A job directory with Spark (local mode here): Spark reads the rank files as bytes, one file
per task; each task loads its file with warpscope and returns Arrow batches (mapInArrow); Spark
combines the ranks."""
import os
import sys

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import warpscope

job = sys.argv[1]
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # local workers: this Python, with warpscope
spark = (
    SparkSession.builder.master("local[*]")
    .appName("warpscope-job")
    .config("spark.sql.execution.arrow.maxRecordsPerBatch", "1")  # one file per batch
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")

SCHEMA = "rank long, name string, calls long, total_ns long, max_ns long"


def kernels_per_rank(batches):
    for batch in batches:
        for path, content in zip(batch.column("path").to_pylist(), batch.column("content").to_pylist()):
            k = warpscope.load(content, name=path).kernels()
            # Spark takes plain strings, not Arrow dictionaries.
            k = k.select(["rank", "name", "dur_ns"]).cast(
                pa.schema([("rank", pa.int64()), ("name", pa.string()), ("dur_ns", pa.int64())])
            )
            t = k.group_by(["rank", "name"]).aggregate(
                [("dur_ns", "count"), ("dur_ns", "sum"), ("dur_ns", "max")]
            )
            yield from t.rename_columns(["rank", "name", "calls", "total_ns", "max_ns"]).to_batches()


files = (
    spark.read.format("binaryFile")
    .option("pathGlobFilter", "*.json*")
    .load(job)
)
files = files.repartition(files.count())  # one rank file per task
kernels = files.mapInArrow(kernels_per_rank, SCHEMA).cache()
(
    kernels.groupBy("name")
    .agg(F.sum("calls").alias("calls"), F.sum("total_ns").alias("total_ns"),
         F.max("max_ns").alias("slowest_rank_max_ns"))
    .orderBy(F.desc("total_ns"))
    .show(5, truncate=50)
)
(
    kernels.groupBy("rank").agg(F.sum("total_ns").alias("kernel_ns"))
    .orderBy("rank").show(truncate=False)
)
spark.stop()
