//! Fuzz target: rocmProfileData RPD (schema 2) and rocprof v1 databases (from bytes) through `import::sqlite::import`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpscope_fuzz::replay::run("rpd_sqlite", data);
});
