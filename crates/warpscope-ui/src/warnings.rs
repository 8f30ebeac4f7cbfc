//! The import warnings of a profile: what was skipped, clamped or guessed while reading the file,
//! each with its count, so that nothing is dropped without the user seeing it.

use egui::{Color32, RichText};
use warpscope_core::model::Profile;

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
                    for w in warnings {
                        ui.horizontal_wrapped(|ui| {
                            ui.label(
                                RichText::new(format!("×{}", w.count))
                                    .monospace()
                                    .color(Color32::from_rgb(0xe0, 0x90, 0x40)),
                            );
                            ui.label(&w.message)
                                .on_hover_text(format!("warning code: {}", w.code));
                        });
                    }
                });
        });
    ui.separator();
}
