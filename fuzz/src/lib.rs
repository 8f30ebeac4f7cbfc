//! The fuzz targets' shared code: each target is `replay::run(TARGET, data)`.

pub mod replay;
