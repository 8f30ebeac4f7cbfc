//! Fuzz target: AMD's text profiles through `import::rocprof::import` (rocprof v1 kernel trace,
//! `--stats` summaries, rocprofv3 CSV, rocprof v1 and RPD Chrome JSON).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpscope_fuzz::replay::run("rocm_text", data);
});
