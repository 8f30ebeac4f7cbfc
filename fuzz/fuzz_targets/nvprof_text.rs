//! Fuzz target: nvprof CSV and text output through `import::nvprof::import`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpscope_fuzz::replay::run("nvprof_text", data);
});
