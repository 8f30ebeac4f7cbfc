#!/usr/bin/env bash
# Builds and runs the two occupancy reference programs (see README.md beside this file).
# Needs CUDA (nvcc, cuda_occupancy.h, libnvrtc) and, for occupancy_check, an NVIDIA GPU.
# Writes crates/warpscope-core/tests/data/occupancy_h100.csv and occupancy_calculator.csv,
# and prints the cross-check of the header against the driver.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
data="$repo/crates/warpscope-core/tests/data"
build="${OCC_BUILD_DIR:-/tmp/occupancy_check_build}"
mkdir -p "$build" "$data"

nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
cuda_home="$(cd "$(dirname "$nvcc")/.." && pwd)"
echo "nvcc: $nvcc ($("$nvcc" --version | tail -n 2 | head -n 1))"
echo "cuda_occupancy.h: $(ls "$cuda_home"/include/cuda_occupancy.h "$cuda_home"/targets/*/include/cuda_occupancy.h 2>/dev/null | head -n 1)"

"$nvcc" -O2 -std=c++17 -o "$build/occupancy_header" "$here/occupancy_header.cpp"
"$nvcc" -O2 -std=c++17 -o "$build/occupancy_check" "$here/occupancy_check.cpp" \
    -lnvrtc -lcuda -L"$cuda_home/lib64/stubs"

"$build/occupancy_header" --table > "$data/occupancy_calculator.csv"

if [ -z "${NVIDIA_DRIVER_VERSION:-}" ] && command -v nvidia-smi > /dev/null; then
    NVIDIA_DRIVER_VERSION="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)"
fi
export NVIDIA_DRIVER_VERSION
"$build/occupancy_check" > "$data/occupancy_h100.csv"

"$build/occupancy_header" --check "$data/occupancy_h100.csv"
echo "rows: occupancy_h100.csv $(grep -vc '^#' "$data/occupancy_h100.csv") (incl. header line)," \
    "occupancy_calculator.csv $(grep -vc '^#' "$data/occupancy_calculator.csv") (incl. header line)"
