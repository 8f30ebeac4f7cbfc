#!/usr/bin/env python3
"""Writes pathological nvprof CSV/text files for timing the nvprof importer (issue 11):

  wide_header.csv     a CSV GPU-trace header of ~1 MB of distinct unknown column names
  wide_header.txt     the same for a text trace header, then 20 000 short rows
  many_headers.csv    200 000 CSV header lines (unknown tables), then one real table
  bomb_lines.txt.gz   ~1 MB gzip of nvprof text that inflates to ~1 GB (application output)
  bomb_rows.csv.gz    the same inside a CSV summary table (~1 M bad rows)
  bomb_oneline.txt.gz ~1 MB gzip holding one ~1 GB line after the framing
  big_values.csv      Start/Duration/Size at the ends of i64 and beyond (1e300 ms)

usage: scripts/gen_nvprof_hostile.py [OUT_DIR]   (default /tmp/nvp)
then:  cargo build --release -p warpscope-core --example load
       /usr/bin/time -v target/release/examples/load OUT_DIR/wide_header.csv
"""

import gzip
import os
import sys

FRAME = "==1== NVPROF is profiling process 1, command: ./x\n==1== Profiling result:\n"
SUMMARY = (
    '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"\n'
    ",%,ms,,ms,ms,ms,\n"
    '"GPU activities",100.0,1.0,1,1.0,1.0,1.0,"k()"\n'
)


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/nvp"
    os.makedirs(out, exist_ok=True)

    cols = ['"Start"', '"Duration"', '"Device"', '"Name"']
    i = 0
    size = 0
    while size < 1_000_000:
        c = f'"c{i}"'
        cols.append(c)
        size += len(c) + 1
        i += 1
    with open(f"{out}/wide_header.csv", "w") as f:
        f.write(FRAME)
        f.write(",".join(cols) + "\n")
        f.write("s,s,," + "," * (len(cols) - 4) + "\n")
        for r in range(1000):
            f.write(f'{r}.0,0.000001,"TITAN Xp (0)","k()"\n')

    # The text form: a 1 MB trace header of unknown columns, then 20 000 short rows.
    with open(f"{out}/wide_header.txt", "w") as f:
        f.write(FRAME)
        f.write("   Start  Duration" + "".join(f"  c{i}" for i in range(150_000)) + "  Name\n")
        for r in range(20_000):
            f.write(f"{r}.0ms  1.0us\n")

    with open(f"{out}/many_headers.csv", "w") as f:
        f.write(FRAME)
        for _ in range(200_000):
            f.write('"Device","Thing","Other"\n\n')
        f.write(SUMMARY)

    line = "a" * 1023 + "\n"
    with gzip.open(f"{out}/bomb_lines.txt.gz", "wt", compresslevel=9) as f:
        f.write(FRAME)
        f.write(SUMMARY + "\n")
        chunk = line * 10_000
        for _ in range(1_000_000_000 // len(chunk)):
            f.write(chunk)

    # The same output inside the summary table (no blank line): ~1 M rows to read and skip.
    with gzip.open(f"{out}/bomb_rows.csv.gz", "wt", compresslevel=9) as f:
        f.write(FRAME)
        f.write(SUMMARY)
        chunk = line * 10_000
        for _ in range(1_000_000_000 // len(chunk)):
            f.write(chunk)

    with gzip.open(f"{out}/bomb_oneline.txt.gz", "wt", compresslevel=9) as f:
        f.write(FRAME)
        f.write(SUMMARY + "\n")
        chunk = "A" * 10_000_000
        for _ in range(100):
            f.write(chunk)
        f.write("\n")

    rows = [
        "9223372036.854775807,0.000001",  # Start near i64::MAX ns, plus a duration: overflows
        "-9223372036.854775808,1",  # Start at i64::MIN ns
        "1e300,1",  # beyond i64
        "1.0,-5",  # negative duration
        "2.0,9223372036854.775807",  # Duration near i64::MAX ns
        "3.0,0.001",  # a good row
    ]
    with open(f"{out}/big_values.csv", "w") as f:
        f.write(FRAME)
        f.write('"Start","Duration","Size","Device","Stream","Name"\n')
        f.write("s,ms,TB,,,\n")
        for r in rows:
            f.write(r + ',99999999999999,"TITAN Xp (0)",7,"[CUDA memcpy HtoD]"\n')


if __name__ == "__main__":
    main()
