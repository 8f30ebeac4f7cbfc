//! Fuzz target: The whole detection and gzip path: `warpscope_core::import_bytes`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpscope_fuzz::replay::run("detect", data);
});
