//! Fuzz target: Nsight Systems SQLite exports (from bytes) through `import::sqlite::import`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpscope_fuzz::replay::run("nsys_sqlite", data);
});
