//! `--screenshot`: once every file has loaded and the layout has settled over a few frames,
//! the main view is written to a PNG and the window closes (for the docs and CI).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::WarpscopeApp;

/// Where `--screenshot` stands.
pub struct ScreenshotPlan {
    /// The PNG to write.
    pub out: PathBuf,
    /// Frames drawn since everything finished loading (layout settles over a few frames).
    settled_frames: u32,
    requested: bool,
    /// Filled by the screenshot callback: `Ok` or the error text.
    pub result: Arc<Mutex<Option<Result<(), String>>>>,
}

impl ScreenshotPlan {
    /// A plan to write `out`.
    pub fn new(out: PathBuf) -> Self {
        Self {
            out,
            settled_frames: 0,
            requested: false,
            result: Arc::new(Mutex::new(None)),
        }
    }
}

impl WarpscopeApp {
    /// Takes the screenshot when its time has come, and closes the window once it is written.
    pub(super) fn screenshot_step(&mut self, ctx: &egui::Context) {
        let Some(plan) = &mut self.screenshot else {
            return;
        };
        if self.loader.busy() {
            // The loader asks for a repaint when it is done; drawing meanwhile would only take
            // the cores the import runs on.
            return;
        }
        if let Ok(done) = plan.result.lock()
            && done.is_some()
        {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        plan.settled_frames += 1;
        ctx.request_repaint();
        if plan.settled_frames < 4 || plan.requested {
            return;
        }
        plan.requested = true;
        let out = plan.out.clone();
        let result = Arc::clone(&plan.result);
        let repaint = ctx.clone();
        let failed = self.errors.clone();
        ctx.request_screenshot(move |image| {
            // The picture is written either way; a file that could not be opened still fails
            // the run, so a script notices.
            let saved = save_png(&out, &image).and_then(|()| {
                if failed.is_empty() {
                    Ok(())
                } else {
                    Err(format!(
                        "wrote {}, but {}",
                        out.display(),
                        failed.join("; ")
                    ))
                }
            });
            if let Ok(mut slot) = result.lock() {
                *slot = Some(saved);
            }
            repaint.request_repaint();
        });
    }
}

/// Writes an egui screenshot as PNG.
fn save_png(path: &Path, image: &egui::ColorImage) -> Result<(), String> {
    let [w, h] = image.size;
    let bytes: Vec<u8> = image.pixels.iter().flat_map(|c| c.to_array()).collect();
    let (Ok(w), Ok(h)) = (u32::try_from(w), u32::try_from(h)) else {
        return Err("screenshot too large".to_string());
    };
    image::save_buffer(path, &bytes, w, h, image::ExtendedColorType::Rgba8)
        .map_err(|e| format!("{}: cannot write the screenshot: {e}", path.display()))
}
