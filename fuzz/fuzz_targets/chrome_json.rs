//! Fuzz target: Chrome trace JSON through `import::chrome`; the first byte picks the reader's block size.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpscope_fuzz::replay::run("chrome_json", data);
});
