//! The import warnings of a profile: what was skipped, clamped or guessed while reading the file,
//! each with its count, so that nothing is dropped without the user seeing it.

use egui::{Color32, RichText};
use warpscope_core::model::Profile;

/// Warnings listed; the rest are counted.
const MAX_SHOWN: usize = 100;

/// Characters of a message shown.
const MAX_MESSAGE_CHARS: usize = 400;

/// `text` cut to [`MAX_MESSAGE_CHARS`], with an ellipsis when cut.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// A collapsible "⚠ N import warnings" section listing every warning (message and count), or
/// nothing when the import raised none.
pub fn import_warnings_ui(ui: &mut egui::Ui, profile: &Profile) {
    let warnings = &profile.warnings;
    if warnings.is_empty() {
        return;
    }
    let title = format!(
        "⚠ {} import warning{}",
        warnings.len(),
        if warnings.len() == 1 { "" } else { "s" }
    );
    egui::CollapsingHeader::new(RichText::new(title).color(ui.visuals().warn_fg_color))
        .id_salt("import_warnings")
        .default_open(true)
        .show(ui, |ui| {
            egui::ScrollArea::vertical()
                .id_salt("import_warnings_scroll")
                .max_height(160.0)
                .show(ui, |ui| {
                    // A file can carry any number of warnings (a re-opened export keeps its
                    // own): the list stays cheap to lay out every frame.
                    for w in warnings.iter().take(MAX_SHOWN) {
                        ui.horizontal_wrapped(|ui| {
                            ui.label(
                                RichText::new(format!("×{}", w.count))
                                    .monospace()
                                    .color(Color32::from_rgb(0xe0, 0x90, 0x40)),
                            );
                            ui.label(shorten(&w.message))
                                .on_hover_text(format!("warning code: {}", shorten(&w.code)));
                        });
                    }
                    if warnings.len() > MAX_SHOWN {
                        ui.weak(format!(
                            "… and {} more (`warpscope info FILE` lists them all)",
                            warnings.len() - MAX_SHOWN
                        ));
                    }
                });
        });
    ui.separator();
}
