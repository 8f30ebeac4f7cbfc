//! Starting the window: wgpu by default, glow when wgpu cannot start, when the only adapters are
//! software renderers (lavapipe: glow on Mesa's llvmpipe draws the same about twice as fast,
//! under Xvfb say) or when asked, and the `--screenshot` mode that renders the main view to a
//! PNG and exits.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, anyhow};

use crate::app::{ScreenshotPlan, WarpscopeApp};

/// Which renderer draws the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RendererChoice {
    /// OpenGL (works everywhere, including Xvfb with Mesa).
    Glow,
    /// wgpu (Vulkan/Metal/DX12).
    Wgpu,
}

/// How to open the window.
pub struct GuiOptions {
    /// Files to open at start.
    pub files: Vec<PathBuf>,
    /// Open the files as one comparison once they have loaded.
    pub compare: bool,
    /// Write a screenshot of the main view here once the files are loaded, then exit.
    pub screenshot: Option<PathBuf>,
    /// Window size in points.
    pub size: [f32; 2],
    /// Renderer; `None` tries wgpu and falls back to glow.
    pub renderer: Option<RendererChoice>,
    /// Show the Insights panel below each profile's timeline.
    pub insights: bool,
    /// Show the Memory panel below each profile's timeline.
    pub memory: bool,
    /// Show the Roofline view below each profile's timeline.
    pub roofline: bool,
    /// The user's peaks (`--peak-tflops`, `--peak-gbs`), for every FLOPs figure of the viewer.
    pub peaks: warpscope_core::analysis::flops::PeakOverride,
}

/// What the adapter selector says when it finds only software renderers.
const SOFTWARE_ONLY: &str = "only software renderers";

/// wgpu's options: with `hardware_only`, adapters that run on the CPU are refused, so that
/// starting fails and glow takes over.
fn wgpu_options(hardware_only: bool) -> eframe::egui_wgpu::WgpuConfiguration {
    use eframe::egui_wgpu::{WgpuConfiguration, WgpuSetup};
    use eframe::wgpu;
    let mut config = WgpuConfiguration::default();
    if hardware_only && let WgpuSetup::CreateNew(setup) = &mut config.wgpu_setup {
        setup.native_adapter_selector = Some(std::sync::Arc::new(
            |adapters: &[wgpu::Adapter], surface: Option<&wgpu::Surface<'_>>| {
                let rank = |t: wgpu::DeviceType| match t {
                    wgpu::DeviceType::DiscreteGpu => 0,
                    wgpu::DeviceType::IntegratedGpu => 1,
                    wgpu::DeviceType::VirtualGpu => 2,
                    wgpu::DeviceType::Other => 3,
                    wgpu::DeviceType::Cpu => 4,
                };
                adapters
                    .iter()
                    .filter(|a| surface.is_none_or(|s| a.is_surface_supported(s)))
                    .filter(|a| a.get_info().device_type != wgpu::DeviceType::Cpu)
                    .min_by_key(|a| rank(a.get_info().device_type))
                    .cloned()
                    .ok_or_else(|| {
                        let names: Vec<String> =
                            adapters.iter().map(|a| a.get_info().name).collect();
                        format!("{SOFTWARE_ONLY} ({})", names.join(", "))
                    })
            },
        ));
    }
    config
}

fn native_options(
    opts: &GuiOptions,
    renderer: eframe::Renderer,
    hardware_only: bool,
) -> eframe::NativeOptions {
    eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("warpscope")
            .with_app_id("warpscope")
            .with_inner_size(opts.size)
            .with_min_inner_size([640.0, 400.0])
            .with_drag_and_drop(true),
        renderer,
        // A screenshot must show the requested size, not a remembered one.
        persist_window: opts.screenshot.is_none(),
        wgpu_options: wgpu_options(hardware_only),
        ..eframe::NativeOptions::default()
    }
}

fn run_with(
    opts: &GuiOptions,
    renderer: eframe::Renderer,
    hardware_only: bool,
) -> Result<Option<Result<(), String>>, eframe::Error> {
    let plan = opts.screenshot.clone().map(ScreenshotPlan::new);
    let result = plan.as_ref().map(|p| std::sync::Arc::clone(&p.result));
    let files = opts.files.clone();
    let compare = opts.compare;
    let insights = opts.insights;
    let memory = opts.memory;
    let roofline = opts.roofline;
    let peaks = opts.peaks;
    eframe::run_native(
        "warpscope",
        native_options(opts, renderer, hardware_only),
        Box::new(move |cc| {
            let mut app = WarpscopeApp::new(cc, files, plan);
            app.compare_when_loaded = compare;
            app.open_insights = insights;
            app.open_memory = memory;
            app.open_roofline = roofline;
            app.peaks = peaks;
            Ok(Box::new(app))
        }),
    )?;
    Ok(result.and_then(|r| r.lock().ok().and_then(|mut slot| slot.take())))
}

/// Whether a window can be opened at all: on Linux and the BSDs, a display must be named.
fn check_display() -> Result<()> {
    if cfg!(any(
        target_os = "linux",
        target_os = "freebsd",
        target_os = "openbsd"
    )) {
        let set = |v: &str| std::env::var_os(v).is_some_and(|x| !x.is_empty());
        if !set("DISPLAY") && !set("WAYLAND_DISPLAY") && !set("WAYLAND_SOCKET") {
            return Err(anyhow!(
                "cannot open a window: no display (neither DISPLAY nor WAYLAND_DISPLAY is set); \
                 use `warpscope summary FILE` for text output, or run under xvfb-run"
            ));
        }
    }
    Ok(())
}

/// Opens the window and runs until it closes.
pub fn run(opts: &GuiOptions) -> Result<ExitCode> {
    check_display()?;
    let outcome = match opts.renderer {
        Some(RendererChoice::Glow) => run_with(opts, eframe::Renderer::Glow, false),
        Some(RendererChoice::Wgpu) => run_with(opts, eframe::Renderer::Wgpu, false),
        None => match run_with(opts, eframe::Renderer::Wgpu, true) {
            Ok(r) => Ok(r),
            // Without an event loop (no display server), OpenGL cannot do better.
            Err(e @ (eframe::Error::WinitEventLoop(_) | eframe::Error::Winit(_))) => Err(e),
            // No GPU: Mesa's OpenGL is the faster software renderer, no need to say so.
            Err(eframe::Error::Wgpu(
                eframe::egui_wgpu::WgpuError::CustomNativeAdapterSelectionError(why),
            )) if why.starts_with(SOFTWARE_ONLY) => run_with(opts, eframe::Renderer::Glow, false),
            Err(e) => {
                eprintln!("warpscope: wgpu could not start ({e}); using OpenGL (glow)");
                run_with(opts, eframe::Renderer::Glow, false)
            }
        },
    };
    let screenshot = outcome.map_err(|e| anyhow!("{}", window_error_text(&e)))?;
    match (&opts.screenshot, screenshot) {
        (None, _) => Ok(ExitCode::SUCCESS),
        (Some(path), Some(Ok(()))) => {
            eprintln!("warpscope: wrote {}", path.display());
            Ok(ExitCode::SUCCESS)
        }
        (Some(_), Some(Err(e))) => Err(anyhow!(e)),
        (Some(path), None) => Err(anyhow!(
            "{}: the window closed before the screenshot was taken",
            path.display()
        )),
    }
}

/// What went wrong opening the window, for a person: which display, the system's own words
/// without the source path winit puts in front of them, and what to try.
fn window_error_text(e: &eframe::Error) -> String {
    let raw = e.to_string();
    // `winit EventLoopError: os error at /root/.cargo/registry/.../mod.rs:788: Failed to ...`
    let reason = raw
        .rsplit_once(".rs:")
        .and_then(|(_, rest)| rest.split_once(": ").map(|(_, why)| why.to_string()))
        .unwrap_or(raw);
    match e {
        eframe::Error::WinitEventLoop(_) | eframe::Error::Winit(_) => {
            let display = std::env::var("WAYLAND_DISPLAY")
                .ok()
                .filter(|d| !d.is_empty())
                .map(|d| format!("the Wayland display {d}"))
                .or_else(|| {
                    std::env::var("DISPLAY")
                        .ok()
                        .filter(|d| !d.is_empty())
                        .map(|d| format!("the X display {d}"))
                })
                .unwrap_or_else(|| "the display".to_string());
            format!(
                "cannot open a window on {display}: {reason}. Is a display server running \
                 there? `warpscope summary FILE` prints the tables without a window."
            )
        }
        _ => format!("cannot open the window: {reason}"),
    }
}

/// Parses `1600x900`.
pub fn parse_size(text: &str) -> Result<[f32; 2], String> {
    let (w, h) = text
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("expected WIDTHxHEIGHT like 1600x900, got {text:?}"))?;
    let parse = |s: &str| -> Result<f32, String> {
        let v: u32 = s
            .trim()
            .parse()
            .map_err(|_| format!("not a size: {text:?}"))?;
        if (200..=16384).contains(&v) {
            #[allow(clippy::cast_precision_loss)]
            Ok(v as f32)
        } else {
            Err(format!("size out of range (200 to 16384): {text:?}"))
        }
    };
    Ok([parse(w)?, parse(h)?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1600x900"), Ok([1600.0, 900.0]));
        assert!(parse_size("1600").is_err());
        assert!(parse_size("10x10").is_err());
    }
}
