//! Fuzz target: PyTorch CUDA allocator snapshot pickles through `import::snapshot::import`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpscope_fuzz::replay::run("snapshot", data);
});
