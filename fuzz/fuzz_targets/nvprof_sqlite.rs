//! Fuzz target: nvprof SQLite databases (from bytes) through `import::sqlite::import`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpscope_fuzz::replay::run("nvprof_sqlite", data);
});
