//! Theoretical occupancy against the references in `tests/data/` (made by
//! `scripts/occupancy_check/run.sh`; see `docs/occupancy.md`):
//! - `occupancy_h100.csv`: `cuOccupancyMaxActiveBlocksPerMultiprocessor` on an H200 (cc 9.0) for
//!   NVRTC-compiled kernels with read-back registers and shared memory, plus measured residency;
//! - `occupancy_calculator.csv`: NVIDIA's `cuda_occupancy.h` for every architecture we know.

use warpscope_core::analysis::insight::occupancy::{
    GpuArch, LaunchConfig, Limiter, theoretical_occupancy,
};

const H100: &str = include_str!("data/occupancy_h100.csv");
const CALCULATOR: &str = include_str!("data/occupancy_calculator.csv");

fn field<T: std::str::FromStr>(cells: &[&str], i: usize, line: &str) -> T {
    cells[i]
        .parse()
        .unwrap_or_else(|_| panic!("column {i} of {line:?} is not a number"))
}

/// Our answer in blocks per SM; a configuration that cannot launch is 0, as the driver says.
fn blocks(arch: &GpuArch, block_size: u32, registers: u32, shared: u64) -> (u32, Vec<Limiter>) {
    match theoretical_occupancy(
        arch,
        LaunchConfig {
            block_size,
            registers_per_thread: registers,
            shared_bytes: shared,
        },
    ) {
        Ok(o) => (o.blocks_per_sm, o.limiters),
        Err(_) => (0, Vec::new()),
    }
}

#[test]
fn every_driver_answer_on_the_h100_is_reproduced() {
    let arch = GpuArch::for_compute_capability(9, 0).expect("9.0");
    // The dynamic shared memory each variant was allowed (without the opt-in attribute, 48 KiB
    // minus its static shared memory).
    let mut max_dynamic = std::collections::HashMap::new();
    for line in H100.lines().filter(|l| l.starts_with("# variant ")) {
        let name = line["# variant ".len()..].split(':').next().expect("name");
        let limit: u64 = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix("max_dynamic_shared="))
            .and_then(|v| v.parse().ok())
            .expect("max_dynamic_shared");
        max_dynamic.insert(name.to_string(), limit);
    }
    let (mut checked, mut measured) = (0, 0);
    for line in H100.lines().skip_while(|l| l.starts_with('#')).skip(1) {
        if line.starts_with('#') {
            continue;
        }
        let cells: Vec<&str> = line.split(',').collect();
        if !cells[6].is_empty() {
            continue; // the driver refused the call: nothing to compare
        }
        let registers: u32 = field(&cells, 1, line);
        let static_shared: u64 = field(&cells, 2, line);
        let dynamic: u64 = field(&cells, 3, line);
        let block: u32 = field(&cells, 4, line);
        let expected: u32 = field(&cells, 5, line);
        let variant = cells[0].trim_start_matches("measured:");
        let allowed = max_dynamic.get(variant).copied().unwrap_or(u64::MAX);
        let ours = if dynamic > allowed {
            0
        } else {
            blocks(&arch, block, registers, static_shared + dynamic).0
        };
        assert_eq!(ours, expected, "{line}");
        checked += 1;
        measured += usize::from(cells[0].starts_with("measured:"));
    }
    assert!(
        checked >= 1_600 && measured == 7,
        "{checked} rows, {measured} measured"
    );
}

#[test]
fn every_architecture_matches_the_calculator_header() {
    let mut checked = 0;
    for line in CALCULATOR.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let (major, minor) = cells[0].split_once('.').expect("cc");
        let arch = GpuArch::for_compute_capability(
            major.parse().expect("major"),
            minor.parse().expect("minor"),
        )
        .unwrap_or_else(|| panic!("no table for {}", cells[0]));
        let registers: u32 = field(&cells, 1, line);
        let shared: u64 = field::<u64>(&cells, 2, line) + field::<u64>(&cells, 3, line);
        let block: u32 = field(&cells, 4, line);
        let expected: u32 = field(&cells, 5, line);
        let factors: u32 = field(&cells, 6, line);
        let (ours, limiters) = blocks(&arch, block, registers, shared);
        assert_eq!(ours, expected, "{line}");
        if expected > 0 {
            let bits = limiters
                .iter()
                .map(|l| match l {
                    Limiter::Warps => 1,
                    Limiter::Registers => 2,
                    Limiter::SharedMemory => 4,
                    Limiter::Blocks => 8,
                })
                .sum::<u32>();
            assert_eq!(bits, factors, "limiting factors of {line}");
        }
        checked += 1;
    }
    assert!(checked > 18_000, "{checked} rows");
}
