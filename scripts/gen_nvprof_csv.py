#!/usr/bin/env python3
"""Writes a synthetic `nvprof --print-gpu-trace --csv` file in the layout of
../shared/samples/nvprof-csv/cfd_titanxp_print-gpu-trace.csv (22 columns, units row
`s,ms,...`, kernel names with commas inside quotes, memcpy/memset rows, Unified Memory rows),
for timing the nvprof CSV importer. Deterministic; the output is not committed.

usage: scripts/gen_nvprof_csv.py [OUT] [MEGABYTES]   (default /tmp/nvprof_synth_100mb.csv, 100)
"""

import random
import sys

HEADER = (
    '"Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z",'
    '"Registers Per Thread","Static SMem","Dynamic SMem","Size","Throughput",'
    '"SrcMemType","DstMemType","Device","Context","Stream",'
    '"Unified Memory","Virtual Address","Name","Correlation_ID"'
)
UNITS = "s,ms,,,,,,,,B,B,MB,GB/s,,,,,,B,,,"
KERNELS = [
    ("cuda_compute_flux(int, int*, float*, float*, float*)", 58, 0.045),
    ("cuda_time_step(int, int, float*, float*, float*, float*)", 24, 0.0147),
    ("cuda_compute_step_factor(int, float*, float*, float*)", 17, 0.0075),
    ("void gemm_kernel<float, int=128, int=64>(float const *, float const *, float*, int)", 96, 0.120),
    ("void elementwise<float>(float*, float const *, unsigned long)", 16, 0.004),
]


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/nvprof_synth_100mb.csv"
    target = int(float(sys.argv[2] if len(sys.argv) > 2 else 100) * 1_000_000)
    rng = random.Random(42)
    t_us = 1_183_779  # first Start, in microseconds
    corr = 105
    written = 0
    with open(out, "w", encoding="ascii", newline="\n") as f:
        for line in (
            "==308065== NVPROF is profiling process 308065, command: ./synthetic",
            "==308065== Profiling application: ./synthetic",
            "==308065== Profiling result:",
            HEADER,
            UNITS,
        ):
            f.write(line + "\n")
        buf = []
        while written < target:
            r = rng.random()
            stream = 7 if rng.random() < 0.7 else rng.choice((13, 14, 15))
            if r < 0.86:
                name, regs, dur_ms = rng.choice(KERNELS)
                dur_ms *= 0.8 + 0.4 * rng.random()
                row = (
                    f"{t_us / 1e6:.6f},{dur_ms:.6f},506,1,1,192,1,1,{regs},0,0,,,,,"
                    f'"TITAN Xp (0)","1","{stream}",,,"{name}",{corr}'
                )
            elif r < 0.97:
                kind, src, dst = rng.choice(
                    (("DtoD", "Device", "Device"), ("HtoD", "Pageable", "Device"),
                     ("DtoH", "Device", "Pageable"))
                )
                size_mb = rng.choice((0.000011, 0.370605, 1.853027, 4.0))
                dur_ms = 0.0007 + size_mb / 10.0
                row = (
                    f"{t_us / 1e6:.6f},{dur_ms:.6f},,,,,,,,,,{size_mb:.6f},"
                    f"{size_mb / 1024 / (dur_ms / 1000):.6f},"
                    f'"{src}","{dst}","TITAN Xp (0)","1","{stream}",,,"[CUDA memcpy {kind}]",{corr}'
                )
            elif r < 0.99:
                row = (
                    f"{t_us / 1e6:.6f},0.004480,,,,,,,,,,,,,,"
                    f'"TITAN Xp (0)",,,65536.000000,"0x7f54d8000000","[Unified Memory Memcpy HtoD]",'
                )
            else:
                row = (
                    f"{t_us / 1e6:.6f},,,,,,,,,,,,,,,,,,"
                    f'"PC 0x5e240510","0x7f54d8000000","[Unified Memory CPU page faults]",'
                )
            buf.append(row)
            written += len(row) + 1
            t_us += rng.randint(1, 60)
            corr += rng.randint(1, 9)
            if len(buf) >= 10_000:
                f.write("\n".join(buf) + "\n")
                buf.clear()
        if buf:
            f.write("\n".join(buf) + "\n")
    print(f"wrote {out}: {written / 1e6:.1f} MB of rows")


if __name__ == "__main__":
    main()
