//! The user's peaks typed in (the Roofline view shows the fields): peak TFLOP/s and memory GB/s,
//! empty for the peaks table's figures, applied on Enter, when a field loses focus or with
//! *Apply*; text that is not a number greater than 0 is refused with a message and never applied
//! ([`PeakOverride::parse`], the rule of `--peak-tflops` and `--peak-gbs`). The override itself
//! is not kept here: the app holds one for every view and hands it in.

use egui::{Color32, RichText, Ui};
use warpscope_core::analysis::flops::{DevicePeaks, PeakOverride};

use crate::flops::peak_source;

/// The label of the TFLOP/s field (its accessible name).
pub const TFLOPS_LABEL: &str = "Peak TFLOP/s";
/// The label of the GB/s field (its accessible name).
pub const GBS_LABEL: &str = "Peak GB/s";
/// The label of the button that applies the typed peaks.
pub const APPLY_LABEL: &str = "Apply peaks";
/// The label of the button that goes back to the peaks table.
pub const CLEAR_LABEL: &str = "Use the peaks table";

/// The fields' text between frames, and why the last text was refused.
#[derive(Default)]
pub struct PeakEditor {
    tflops: String,
    gbs: String,
    /// The override the texts were last filled from: when the app's changes (here, in another
    /// tab, or from the command line), the fields show it again.
    shown: Option<PeakOverride>,
    refused: Option<String>,
}

impl PeakEditor {
    /// Why the text typed last was refused (not applied), if it was.
    pub fn refused(&self) -> Option<&str> {
        self.refused.as_deref()
    }

    /// Fills the fields from `peaks` when it is not what they show.
    fn show(&mut self, peaks: PeakOverride) {
        if self.shown == Some(peaks) {
            return;
        }
        let text = |v: Option<f64>| v.map_or_else(String::new, |v| v.to_string());
        self.tflops = text(peaks.tflops);
        self.gbs = text(peaks.gbs);
        self.shown = Some(peaks);
        self.refused = None;
    }

    /// Applies the typed text to `peaks` when it is a valid override; otherwise keeps `peaks`
    /// and says why. Returns true when `peaks` changed.
    fn apply(&mut self, peaks: &mut PeakOverride) -> bool {
        match PeakOverride::parse(&self.tflops, &self.gbs) {
            Ok(typed) => {
                self.refused = None;
                let changed = typed != *peaks;
                *peaks = typed;
                changed
            }
            Err(e) => {
                self.refused = Some(format!("Not applied: {e}"));
                false
            }
        }
    }
}

/// The fields, *Apply*, *Use the peaks table*, and where the peaks in use come from (`in_use`:
/// the peaks of the device shown, as the analysis used them). Returns true when `peaks` changed.
pub fn peak_override_ui(
    ui: &mut Ui,
    editor: &mut PeakEditor,
    peaks: &mut PeakOverride,
    in_use: Option<&DevicePeaks>,
) -> bool {
    editor.show(*peaks);
    let mut apply = false;
    let mut changed = false;
    ui.horizontal_wrapped(|ui| {
        ui.label("Peaks:").on_hover_text(
            "Your GPU's peaks, for parts the peaks table lacks or other clocks: TFLOP/s for \
             every precision and the memory bandwidth in GB/s (as --peak-tflops and --peak-gbs). \
             Empty: the table's figure. They apply to every FLOPs figure of the viewer.",
        );
        for (label, text) in [
            (TFLOPS_LABEL, &mut editor.tflops),
            (GBS_LABEL, &mut editor.gbs),
        ] {
            let name = ui.label(label);
            let field = ui.add(
                egui::TextEdit::singleline(text)
                    .desired_width(64.0)
                    .hint_text("table"),
            );
            apply |= field.labelled_by(name.id).lost_focus();
        }
        apply |= ui.button(APPLY_LABEL).clicked();
        if ui
            .add_enabled(peaks.is_set(), egui::Button::new(CLEAR_LABEL))
            .clicked()
        {
            editor.tflops.clear();
            editor.gbs.clear();
            apply = true;
        }
        if apply {
            changed = editor.apply(peaks);
        }
        if let Some(p) = in_use {
            let text = format!("in use: {}", peak_source(p));
            if p.over.is_set() {
                ui.label(RichText::new(text).strong());
            } else {
                ui.weak(text);
            }
        }
    });
    if let Some(why) = editor.refused() {
        ui.label(RichText::new(why).color(Color32::from_rgb(0xe0, 0x50, 0x40)));
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_peaks_apply_only_when_they_are_peaks() {
        let mut editor = PeakEditor::default();
        let mut peaks = PeakOverride::default();
        editor.show(peaks);
        editor.tflops = "400".to_string();
        assert!(editor.apply(&mut peaks));
        assert_eq!(peaks.tflops, Some(400.0));
        assert_eq!(peaks.gbs, None);
        // Bad text leaves the override as it was, and says why.
        editor.gbs = "-3".to_string();
        assert!(!editor.apply(&mut peaks));
        assert_eq!(peaks.gbs, None);
        assert_eq!(
            editor.refused(),
            Some("Not applied: --peak-gbs must be a number greater than 0")
        );
        editor.tflops = "lots".to_string();
        assert!(!editor.apply(&mut peaks));
        assert_eq!(peaks.tflops, Some(400.0));
        // The app's override changing elsewhere fills the fields again.
        editor.show(PeakOverride {
            tflops: Some(494.5),
            gbs: Some(4800.0),
        });
        assert_eq!(
            (editor.tflops.as_str(), editor.gbs.as_str()),
            ("494.5", "4800")
        );
        assert_eq!(editor.refused(), None);
    }
}
