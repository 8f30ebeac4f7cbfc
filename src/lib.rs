//! The warpscope application: the command line and the desktop app, as a library so that the
//! binary (`main.rs`) and the end-to-end tests drive the same code.

pub mod app;
pub mod cli;
pub mod compare;
pub mod gui;
pub mod live;
mod report;
