//! The Live lab's form for your own kernel: a `.cu` file dropped on the window (or given with
//! File → Open), the `__global__` functions found in it, the argument SPEC (pre-filled from the
//! chosen kernel's signature), launch shape, sizes and work, checked as you type with the same
//! rules as `warpscope live --source`, and the source and NVRTC's log beside it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use egui::{Color32, RichText};
use warpscope_live::user::spec::{Param, ScalarType, kernels_in};
use warpscope_live::{SweepPlan, UserKernel, UserRequest, parse_blocks, parse_sizes};

/// Colour of error text.
pub(crate) const ERROR: Color32 = Color32::from_rgb(0xe0, 0x60, 0x50);

/// The form of a user kernel.
#[derive(Clone, Debug, Default)]
pub struct SourceForm {
    /// The file.
    pub path: PathBuf,
    source: String,
    /// The source with line numbers and its line count, as the Source section shows them
    /// (made once: the file is not read again).
    numbered: (String, usize),
    kernels: Vec<(String, Vec<Param>)>,
    /// The kernel to time.
    pub kernel: String,
    /// The argument SPEC.
    pub args: String,
    grid: String,
    block: String,
    blocks: String,
    sizes: String,
    defines: String,
    flops: String,
    bytes: String,
    /// The kernel to check against ("" for none).
    check_against: String,
    /// The last check and what it was of: the form is drawn every frame, the check (which scans
    /// the source and reads the host's free memory) runs only when a field changed.
    checked: Option<(CheckKey, Result<usize, String>)>,
}

/// What a check of the form depends on.
#[derive(Clone, Debug, PartialEq)]
struct CheckKey {
    request: UserRequest,
    sizes: String,
    blocks: String,
    repeat: u32,
    warmup: u32,
}

/// A SPEC for `params`: every pointer a random buffer of N elements, integers N, floats 1.5.
pub fn default_spec(params: &[Param]) -> String {
    params
        .iter()
        .map(|p| {
            let t = p.ty.unwrap_or(ScalarType::F32);
            let ty = t.as_str();
            if p.pointer {
                format!("{ty}[N]=rand")
            } else if t.is_float() {
                format!("{ty}=1.5")
            } else {
                format!("{ty}=N")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl SourceForm {
    /// Reads `path` and fills the form for its first kernel.
    pub fn from_file(path: &Path) -> Result<Self, String> {
        let source = warpscope_live::user::read_source(path)?;
        let kernels = kernels_in(&source);
        let Some((first, params)) = kernels.first().cloned() else {
            return Err(format!(
                "{} defines no __global__ function: nothing to run",
                path.display()
            ));
        };
        let numbered = (
            source
                .lines()
                .enumerate()
                .map(|(i, l)| format!("{:>4}  {l}\n", i + 1))
                .collect(),
            source.lines().count(),
        );
        Ok(Self {
            path: path.to_path_buf(),
            source,
            numbered,
            kernels,
            args: default_spec(&params),
            kernel: first,
            sizes: "1M,10M,100M".into(),
            ..Self::default()
        })
    }

    fn opt(text: &str) -> Option<String> {
        let t = text.trim();
        (!t.is_empty()).then(|| t.to_string())
    }

    /// What the form asks for, as the command line would.
    pub fn request(&self) -> UserRequest {
        UserRequest {
            source: self.path.clone(),
            kernel: self.kernel.clone(),
            args: self.args.clone(),
            grid: Self::opt(&self.grid),
            block: Self::opt(&self.block),
            defines: self
                .defines
                .split([',', ' '])
                .filter(|d| !d.trim().is_empty())
                .map(|d| d.trim().to_string())
                .collect(),
            includes: Vec::new(),
            bytes: Self::opt(&self.bytes),
            flops: Self::opt(&self.flops),
            check_against: Self::opt(&self.check_against),
        }
    }

    /// Writes the checked source into `dir` under the file's own name (so NVRTC's log names
    /// it), and returns the copy's path.
    pub fn write_copy(&self, dir: &Path) -> Result<PathBuf, String> {
        let name = self
            .path
            .file_name()
            .map_or_else(|| "kernel.cu".into(), ToOwned::to_owned);
        let copy = dir.join(name);
        std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&copy, &self.source))
            .map_err(|e| format!("cannot write {}: {e}", copy.display()))?;
        Ok(copy)
    }

    /// The form as `warpscope live` arguments (after `live`), compiling `source` (a copy of the
    /// checked text) with the original file's folder on the include path.
    pub fn cli_args(&self, source: &Path) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            "--source".into(),
            source.into(),
            "--kernel".into(),
            self.kernel.clone().into(),
            "--args".into(),
            self.args.clone().into(),
            "--sizes".into(),
            self.sizes.clone().into(),
        ];
        // The copy lives elsewhere: `#include "x.cuh"` beside the original needs its folder.
        let dir = warpscope_live::user::source_dir(&self.path);
        if let Ok(dir) = std::path::absolute(dir) {
            args.extend(["--include".into(), dir.into()]);
        }
        let req = self.request();
        for (flag, value) in [
            ("--grid", req.grid),
            ("--block", req.block),
            ("--blocks", Self::opt(&self.blocks)),
            ("--bytes", req.bytes),
            ("--flops", req.flops),
            ("--check-against", req.check_against),
        ] {
            if let Some(v) = value {
                args.extend([flag.into(), v.into()]);
            }
        }
        for d in req.defines {
            args.extend(["--define".into(), d.into()]);
        }
        args
    }

    /// The sweep, or the first thing wrong with the form (no GPU needed).
    pub fn plan(&self, repeat: u32, warmup: u32) -> Result<SweepPlan, String> {
        let user = UserKernel::from_source(&self.request(), &self.path, self.source.clone())
            .map_err(|e| e.to_string())?;
        let sizes = parse_sizes(&self.sizes).map_err(|e| e.to_string())?;
        let blocks = match Self::opt(&self.blocks) {
            Some(b) => parse_blocks(&b)?,
            None => Vec::new(),
        };
        SweepPlan::for_user(user, Some(&sizes), &blocks, repeat, warmup).map_err(|e| e.to_string())
    }

    /// The number of points the form would run, or the first thing wrong with it; computed
    /// again only when a field changed.
    pub fn checked(&mut self, repeat: u32, warmup: u32) -> Result<usize, String> {
        let key = CheckKey {
            request: self.request(),
            sizes: self.sizes.clone(),
            blocks: self.blocks.clone(),
            repeat,
            warmup,
        };
        match &self.checked {
            Some((k, result)) if *k == key => result.clone(),
            _ => {
                let result = self.plan(repeat, warmup).map(|p| p.points().len());
                self.checked = Some((key, result.clone()));
                result
            }
        }
    }

    /// The form's fields.
    pub fn form_ui(&mut self, ui: &mut egui::Ui) {
        let mut chosen = self.kernel.clone();
        egui::Grid::new("live_source_inputs")
            .num_columns(2)
            .spacing([12.0, 6.0])
            .show(ui, |ui| {
                ui.label("File");
                ui.label(RichText::new(self.path.display().to_string()).strong());
                ui.end_row();
                let label = ui.label("Kernel");
                egui::ComboBox::from_id_salt("live_user_kernel")
                    .selected_text(&self.kernel)
                    .show_ui(ui, |ui| {
                        for (name, _) in &self.kernels {
                            ui.selectable_value(&mut chosen, name.clone(), name);
                        }
                    })
                    .response
                    .labelled_by(label.id);
                ui.end_row();
                if let Some((_, params)) = self.kernels.iter().find(|(n, _)| *n == self.kernel) {
                    ui.label("");
                    let sig: Vec<&str> = params.iter().map(|p| p.text.as_str()).collect();
                    ui.label(
                        RichText::new(format!("({})", sig.join(", ")))
                            .weak()
                            .monospace(),
                    );
                    ui.end_row();
                }
                let fields: [(&str, &mut String, &str); 9] = [
                    (
                        "Arguments",
                        &mut self.args,
                        "One per parameter: f32[N]=rand, i32[N]=iota, f64[N*N]=1.5, f32=2.5, \
                         i32=N",
                    ),
                    ("Sizes (N)", &mut self.sizes, "Comma-separated: 1M,10M,100M"),
                    (
                        "Grid",
                        &mut self.grid,
                        "Blocks, in N and B (threads per block): (N+B-1)/B, 64,64. Empty: \
                         enough blocks to cover N",
                    ),
                    (
                        "Block",
                        &mut self.block,
                        "Threads per block: 256, 16x16 (empty: 256)",
                    ),
                    (
                        "Block sizes",
                        &mut self.blocks,
                        "A launch-configuration sweep: 32,64,128,256,512,1024",
                    ),
                    ("FLOPs", &mut self.flops, "Per launch, in N: 2*N"),
                    (
                        "Bytes",
                        &mut self.bytes,
                        "Per launch, in N: 12*N (empty: every buffer once)",
                    ),
                    (
                        "Defines",
                        &mut self.defines,
                        "NAME or NAME=VALUE, comma-separated",
                    ),
                    (
                        "Check against",
                        &mut self.check_against,
                        "Another kernel of the file, run once on the same inputs",
                    ),
                ];
                for (name, value, hint) in fields {
                    let label = ui.label(name);
                    ui.add(egui::TextEdit::singleline(value).desired_width(320.0))
                        .labelled_by(label.id)
                        .on_hover_text(hint);
                    ui.end_row();
                }
            });
        if chosen != self.kernel {
            if let Some((_, params)) = self.kernels.iter().find(|(n, _)| *n == chosen) {
                self.args = default_spec(params);
            }
            self.kernel = chosen;
        }
    }

    /// The source with line numbers, and NVRTC's log under it.
    pub fn source_ui(&self, ui: &mut egui::Ui, log: Option<&str>) {
        let (numbered, lines) = &self.numbered;
        egui::CollapsingHeader::new(format!("Source ({lines} lines)"))
            .id_salt("live_user_source")
            .show(ui, |ui| {
                egui::ScrollArea::both()
                    .id_salt("live_user_source_scroll")
                    .max_height(220.0)
                    .show(ui, |ui| {
                        ui.label(RichText::new(numbered.as_str()).monospace().size(11.0));
                    });
            });
        if let Some(log) = log.filter(|l| !l.trim().is_empty()) {
            ui.label(RichText::new("Compile log").strong());
            egui::ScrollArea::both()
                .id_salt("live_user_log")
                .max_height(160.0)
                .show(ui, |ui| {
                    ui.label(RichText::new(log).monospace().size(11.0).color(ERROR));
                });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_file_fills_the_form_from_the_first_kernels_signature() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/saxpy.cu");
        let form = SourceForm::from_file(&path).unwrap();
        assert_eq!(form.kernel, "saxpy");
        assert_eq!(form.args, "f32=1.5 f32[N]=rand f32[N]=rand i32=N");
        let names: Vec<_> = form.kernels.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["saxpy", "saxpy_grid_stride"]);
        let plan = form.plan(5, 1).unwrap();
        assert_eq!(plan.sizes, [1_000_000, 10_000_000, 100_000_000]);
        let mut bad = form.clone();
        bad.args = "f32=1.5".into();
        assert!(bad.plan(5, 1).unwrap_err().contains("takes 4 parameter(s)"));
        let mut sweep = form;
        sweep.blocks = "64,32".into();
        assert_eq!(sweep.plan(5, 1).unwrap().blocks, [32, 64]);
        sweep.flops = "2*N".into();
        sweep.defines = "TILE=4, FAST".into();
        let dir = std::env::temp_dir().join(format!("warpscope-copy-{}", std::process::id()));
        let copy = sweep.write_copy(&dir).unwrap();
        assert_eq!(copy, dir.join("saxpy.cu"));
        assert_eq!(
            std::fs::read_to_string(&copy).unwrap(),
            std::fs::read_to_string(&path).unwrap()
        );
        let args = sweep.cli_args(&copy);
        assert_eq!(args[1], copy.as_os_str());
        std::fs::remove_dir_all(&dir).unwrap();
        let tail: Vec<&str> = args[2..].iter().map(|a| a.to_str().unwrap()).collect();
        let examples = path.parent().unwrap().to_str().unwrap();
        assert_eq!(
            tail,
            [
                "--kernel",
                "saxpy",
                "--args",
                "f32=1.5 f32[N]=rand f32[N]=rand i32=N",
                "--sizes",
                "1M,10M,100M",
                "--include",
                examples,
                "--blocks",
                "64,32",
                "--flops",
                "2*N",
                "--define",
                "TILE=4",
                "--define",
                "FAST"
            ]
        );
        // The check is kept while the fields stay the same.
        let mut form = SourceForm::from_file(&path).unwrap();
        assert_eq!(form.checked(5, 1), Ok(3));
        form.source = "int main() {}".into();
        assert_eq!(form.checked(5, 1), Ok(3));
        form.sizes = "1M".into();
        assert!(
            form.checked(5, 1)
                .unwrap_err()
                .contains("defines no __global__ function")
        );
        let none = std::env::temp_dir().join(format!("warpscope-empty-{}.cu", std::process::id()));
        std::fs::write(&none, "int main() {}").unwrap();
        assert!(
            SourceForm::from_file(&none)
                .unwrap_err()
                .contains("no __global__ function")
        );
        std::fs::remove_file(&none).unwrap();
    }
}
