//! warpscope's own file browser, for when the system's file dialog cannot open: on Linux, rfd
//! asks the XDG desktop portal over D-Bus, which remote, X11-forwarded and minimal sessions do
//! not have. A window lists a folder's entries; folders open with a click, profiles are picked
//! (several with Ctrl) and opened, or a name is typed to save.

use std::path::{Path, PathBuf};

use egui::{Key, RichText};

/// What the browser is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BrowserMode {
    /// Pick profiles to open.
    Open,
    /// Choose where to save (the file name to start with).
    Save(String),
}

/// What the user decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BrowserOutcome {
    /// Open these files.
    Open(Vec<PathBuf>),
    /// Save to this path.
    Save(PathBuf),
    /// Closed without choosing.
    Cancelled,
}

/// One entry of the folder shown.
#[derive(Clone, Debug)]
struct Entry {
    name: String,
    path: PathBuf,
    is_dir: bool,
    bytes: u64,
}

/// Extensions of the files warpscope reads, for the file browser and the system's Open dialog
/// alike (the content decides the format; this only sorts the listing's wheat from its chaff).
pub(crate) const PROFILE_EXTENSIONS: [&str; 10] = [
    "json", "gz", "csv", "txt", "log", "nvvp", "sqlite", "prof", "nsys-rep", "pickle",
];

/// The in-app file browser's state.
#[derive(Debug)]
pub struct FileBrowser {
    mode: BrowserMode,
    dir: PathBuf,
    /// The folder as typed in the path field.
    dir_text: String,
    entries: Vec<Entry>,
    /// Why the folder could not be listed.
    error: Option<String>,
    selected: Vec<PathBuf>,
    name: String,
    /// List every file, not only those that look like profiles.
    all_files: bool,
    /// Why this browser is shown instead of the system dialog.
    pub note: Option<String>,
    /// The last click on an entry entered a folder: the second click of a double-click on a
    /// folder lands on whatever entry of the new folder is under the pointer, and must do
    /// nothing there.
    entered_by_click: bool,
}

impl FileBrowser {
    /// A browser in `mode` showing `dir`.
    pub fn new(mode: BrowserMode, dir: PathBuf) -> Self {
        let name = match &mode {
            BrowserMode::Save(name) => name.clone(),
            BrowserMode::Open => String::new(),
        };
        let mut b = Self {
            mode,
            dir_text: dir.display().to_string(),
            dir,
            entries: Vec::new(),
            error: None,
            selected: Vec::new(),
            name,
            all_files: false,
            note: None,
            entered_by_click: false,
        };
        b.list();
        b
    }

    /// The folder shown.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn enter(&mut self, dir: PathBuf) {
        self.dir_text = dir.display().to_string();
        self.dir = dir;
        self.selected.clear();
        self.list();
    }

    /// Reads the folder: sub-folders first, then files, each by name.
    fn list(&mut self) {
        self.entries.clear();
        self.error = None;
        let read = match std::fs::read_dir(&self.dir) {
            Ok(r) => r,
            Err(e) => {
                self.error = Some(format!("{}: {e}", self.dir.display()));
                return;
            }
        };
        for entry in read.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let meta = std::fs::metadata(&path).ok();
            let is_dir = meta.as_ref().is_some_and(std::fs::Metadata::is_dir);
            self.entries.push(Entry {
                name,
                path,
                is_dir,
                bytes: meta.map_or(0, |m| m.len()),
            });
        }
        self.entries
            .sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));
    }

    fn looks_like_a_profile(name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        lower
            .rsplit_once('.')
            .is_some_and(|(_, ext)| PROFILE_EXTENSIONS.contains(&ext))
    }

    /// Draws the browser; returns the user's decision once there is one.
    pub fn ui(&mut self, ctx: &egui::Context) -> Option<BrowserOutcome> {
        let title = match self.mode {
            BrowserMode::Open => "Open profiles",
            BrowserMode::Save(_) => "Save as Chrome trace JSON",
        };
        let mut outcome = None;
        let mut open = true;
        egui::Window::new(title)
            .collapsible(false)
            .default_size([640.0, 460.0])
            .open(&mut open)
            .show(ctx, |ui| outcome = self.contents_ui(ui));
        // Escape closes the browser and does nothing else (the timeline below would clear its
        // selection).
        if !open || ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, Key::Escape)) {
            return Some(BrowserOutcome::Cancelled);
        }
        outcome
    }

    fn contents_ui(&mut self, ui: &mut egui::Ui) -> Option<BrowserOutcome> {
        if let Some(note) = &self.note {
            ui.weak(note);
        }
        let mut go_to: Option<PathBuf> = None;
        let mut open_now: Option<PathBuf> = None;
        ui.horizontal(|ui| {
            if ui
                .button("⬆ Up")
                .on_hover_text("The folder above")
                .clicked()
                && let Some(parent) = self.dir.parent()
            {
                go_to = Some(parent.to_path_buf());
            }
            let field = ui.add(
                egui::TextEdit::singleline(&mut self.dir_text)
                    .desired_width(ui.available_width() - 90.0)
                    .hint_text("folder"),
            );
            if field.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter)) {
                go_to = Some(PathBuf::from(self.dir_text.trim()));
            }
            if self.mode == BrowserMode::Open {
                ui.checkbox(&mut self.all_files, "All files");
            }
        });
        if let Some(e) = &self.error {
            ui.colored_label(egui::Color32::from_rgb(0xe0, 0x60, 0x50), e);
        }
        let list_height = (ui.available_height() - 60.0).max(120.0);
        egui::ScrollArea::vertical()
            .max_height(list_height)
            .auto_shrink([false, false])
            .show(ui, |ui| {
                for entry in &self.entries {
                    if !entry.is_dir && !self.all_files && !Self::looks_like_a_profile(&entry.name)
                    {
                        continue;
                    }
                    let picked = self.selected.contains(&entry.path);
                    let label = if entry.is_dir {
                        RichText::new(format!("🗀 {}/", entry.name)).strong()
                    } else {
                        RichText::new(format!(
                            "{}   {}",
                            entry.name,
                            warpscope_ui::tables::format_bytes(entry.bytes)
                        ))
                    };
                    let r = ui.selectable_label(picked, label);
                    if r.clicked() && r.double_clicked() && self.entered_by_click {
                        // The folder double-clicked was entered on the first click.
                        self.entered_by_click = false;
                        continue;
                    }
                    if r.clicked() {
                        self.entered_by_click = entry.is_dir;
                        if entry.is_dir {
                            go_to = Some(entry.path.clone());
                        } else if ui.input(|i| i.modifiers.command) {
                            if picked {
                                self.selected.retain(|p| p != &entry.path);
                            } else {
                                self.selected.push(entry.path.clone());
                            }
                        } else {
                            self.selected = vec![entry.path.clone()];
                            self.name.clone_from(&entry.name);
                        }
                    }
                    if r.double_clicked() && !entry.is_dir && self.mode == BrowserMode::Open {
                        open_now = Some(entry.path.clone());
                    }
                }
            });
        if let Some(path) = open_now {
            return Some(BrowserOutcome::Open(vec![path]));
        }
        if let Some(dir) = go_to {
            self.enter(dir);
            return None;
        }
        ui.separator();
        let mut outcome = None;
        ui.horizontal(|ui| match &self.mode {
            BrowserMode::Open => {
                let n = self.selected.len();
                // The buttons at the right edge, so that they stay put while the text changes.
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    if ui.button("Cancel").clicked() {
                        outcome = Some(BrowserOutcome::Cancelled);
                    }
                    if ui.add_enabled(n > 0, egui::Button::new("Open")).clicked() {
                        outcome = Some(BrowserOutcome::Open(self.selected.clone()));
                    }
                    ui.with_layout(egui::Layout::left_to_right(egui::Align::Center), |ui| {
                        ui.label(match n {
                            0 => "Click a profile (Ctrl+click for several)".to_string(),
                            1 => "1 file chosen".to_string(),
                            n => format!("{n} files chosen"),
                        });
                    });
                });
            }
            BrowserMode::Save(_) => {
                ui.label("File name:");
                ui.add(egui::TextEdit::singleline(&mut self.name).desired_width(260.0));
                let name = self.name.trim();
                if ui
                    .add_enabled(!name.is_empty(), egui::Button::new("Save"))
                    .clicked()
                {
                    outcome = Some(BrowserOutcome::Save(self.dir.join(name)));
                }
                if ui.button("Cancel").clicked() {
                    outcome = Some(BrowserOutcome::Cancelled);
                }
            }
        });
        outcome
    }
}

/// True when the system's file dialog can be expected to open: always outside Linux and the
/// BSDs; there, when a D-Bus session bus (which the desktop portal answers on) is reachable.
pub fn system_dialog_available() -> bool {
    if !cfg!(any(
        target_os = "linux",
        target_os = "freebsd",
        target_os = "openbsd"
    )) {
        return true;
    }
    if std::env::var_os("WARPSCOPE_FILE_DIALOG").is_some_and(|v| v == "builtin") {
        return false;
    }
    let bus = std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|v| !v.is_empty());
    let runtime_bus =
        std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| Path::new(&d).join("bus").exists());
    bus || runtime_bus
}
