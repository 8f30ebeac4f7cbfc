//! Fuzz target: rocprofv3 rocpd (schema 3) databases (from bytes) through `import::sqlite::import`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpscope_fuzz::replay::run("rocpd_sqlite", data);
});
