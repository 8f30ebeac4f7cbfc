//! The desktop app: tabs of open profiles, each with its timeline and tables; opening by
//! command line, drag-and-drop, File → Open and the recent-files list; loading off the UI
//! thread; errors shown in the window without closing anything that is open.

mod file_browser;
mod live;
mod live_child;
mod live_results;
mod live_source;
mod loader;
mod screenshot;
mod tab;

pub use file_browser::{BrowserMode, BrowserOutcome, FileBrowser, system_dialog_available};
pub use live::LiveLab;
pub use live_results::live_results_ui;
pub use loader::ImportFn;
pub use screenshot::ScreenshotPlan;
pub use tab::{BottomView, Tab};

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};

use egui::{Align, Color32, Key, KeyboardShortcut, Layout, Modifiers, RichText};
use warpscope_core::Profile;
use warpscope_core::analysis::compare::{RunLabel, merge_ranks, order_by_sweep, profile_rank};
use warpscope_core::analysis::flops::PeakOverride;
use warpscope_ui::compare::{CompareState, compare_ui};

use loader::{Loaded, Loader};

const RECENT_KEY: &str = "warpscope.recent_files";
const RECENT_MAX: usize = 12;

/// Files opened together (dropped at once, or named together on the command line): when they
/// have all loaded, the app offers to compare them.
struct Group {
    /// The files still loading.
    waiting: Vec<PathBuf>,
    /// The profiles that loaded, in the order the files were given.
    loaded: Vec<Arc<Profile>>,
    /// The files, in the order given.
    order: Vec<PathBuf>,
    /// Where the group's tabs start: they are kept in the order given, not the order in which
    /// the files finished loading.
    first_tab: usize,
}

/// The "Compare…" dialog: which open profiles take part, and the baseline.
struct CompareDialog {
    chosen: Vec<bool>,
    baseline: usize,
}

/// The warpscope app.
pub struct WarpscopeApp {
    /// Open profiles.
    pub tabs: Vec<Tab>,
    /// Open comparisons; their tabs come after the profiles'.
    pub compares: Vec<CompareState>,
    /// Index of the tab shown: a profile below `tabs.len()`, then the comparisons.
    pub active: usize,
    /// Profiles opened together, offered for comparison (or merging, when they are ranks of one
    /// job).
    pub offer: Option<Vec<Arc<Profile>>>,
    /// Compare the files opened together as soon as they have loaded, without asking.
    pub compare_when_loaded: bool,
    /// Show the Insights panel below the timeline of each profile that opens (`--insights`).
    pub open_insights: bool,
    /// Show the Memory panel below the timeline of each profile that opens (`--memory`).
    pub open_memory: bool,
    /// Show the Roofline view below the timeline of each profile that opens (`--roofline`).
    pub open_roofline: bool,
    /// The user's peaks, the one override of every FLOPs figure in every tab and comparison:
    /// `--peak-tflops`/`--peak-gbs`, or typed in a Roofline view.
    pub peaks: PeakOverride,
    group: Option<Group>,
    compare_dialog: Option<CompareDialog>,
    /// Files that could not be opened, as messages naming the file and the problem.
    pub errors: Vec<String>,
    /// Recently opened files, newest first.
    pub recent: Vec<PathBuf>,
    loader: Loader,
    dialog: Option<Receiver<Vec<PathBuf>>>,
    screenshot: Option<ScreenshotPlan>,
    /// The Live lab window.
    pub live: LiveLab,
    /// Saves in flight: each sends the saved path, or the error naming the file.
    saving: Vec<Receiver<Result<PathBuf, String>>>,
    /// The Save-as dialog in flight: (tab, path) when the user chose one.
    save_target: Option<Receiver<Option<(usize, PathBuf)>>>,
    /// When the system's Open dialog was asked for (an empty answer much sooner than a person
    /// could cancel means it never opened).
    dialog_started: Option<std::time::Instant>,
    /// warpscope's own file browser, when it is open, and the tab it saves (`None`: it opens).
    pub browser: Option<(FileBrowser, Option<usize>)>,
    /// Use warpscope's own file browser instead of the system's dialog (no desktop portal, or
    /// the system dialog failed to open once).
    pub builtin_dialogs: bool,
}

impl WarpscopeApp {
    /// Creates the app, restoring the recent-files list, and starts loading `files`.
    pub fn new(
        cc: &eframe::CreationContext<'_>,
        files: Vec<PathBuf>,
        screenshot: Option<ScreenshotPlan>,
    ) -> Self {
        Self::restore(cc.storage, &cc.egui_ctx, files, screenshot)
    }

    /// Creates the app with what `storage` kept from the last run (the recent files), and
    /// starts loading `files`.
    pub fn restore(
        storage: Option<&dyn eframe::Storage>,
        ctx: &egui::Context,
        files: Vec<PathBuf>,
        screenshot: Option<ScreenshotPlan>,
    ) -> Self {
        let recent = storage
            .and_then(|s| eframe::get_value::<Vec<PathBuf>>(s, RECENT_KEY))
            .unwrap_or_default();
        let mut app = Self {
            tabs: Vec::new(),
            compares: Vec::new(),
            active: 0,
            offer: None,
            compare_when_loaded: false,
            open_insights: false,
            open_memory: false,
            open_roofline: false,
            peaks: PeakOverride::default(),
            group: None,
            compare_dialog: None,
            errors: Vec::new(),
            recent,
            loader: Loader::default(),
            dialog: None,
            screenshot,
            live: LiveLab::default(),
            saving: Vec::new(),
            save_target: None,
            dialog_started: None,
            browser: None,
            builtin_dialogs: !system_dialog_available(),
        };
        app.open_all(files, ctx);
        app
    }

    /// Opens several files; when two or more were asked for together, comparing them is
    /// offered once they have loaded.
    pub fn open_all(&mut self, files: Vec<PathBuf>, ctx: &egui::Context) {
        // A CUDA source goes to the Live lab, as your own kernel; anything else opens as a profile.
        let (sources, files): (Vec<PathBuf>, Vec<PathBuf>) = files
            .into_iter()
            .partition(|p| p.extension().is_some_and(|e| e == "cu" || e == "cuh"));
        if let Some(source) = sources.last() {
            self.live.open_source(source);
        }
        // The same file named twice is opened once.
        let mut seen = Vec::new();
        let files: Vec<PathBuf> = files
            .into_iter()
            .filter(|f| {
                let key = canonical(f);
                let new = !seen.contains(&key);
                seen.push(key);
                new
            })
            .collect();
        if files.len() >= 2 {
            self.group = Some(Group {
                waiting: files.clone(),
                loaded: Vec::new(),
                order: files.clone(),
                first_tab: self.tabs.len(),
            });
        }
        for f in files {
            self.open(f, ctx);
        }
    }

    /// Compares the open profiles at `indices` (into [`Self::tabs`]) against the one at
    /// `indices[baseline]`, in a new tab.
    pub fn compare_tabs(&mut self, indices: &[usize], baseline: usize) {
        let profiles: Vec<Arc<Profile>> = indices
            .iter()
            .filter_map(|&i| self.tabs.get(i))
            .map(|t| Arc::clone(&t.profile))
            .collect();
        self.compare_profiles(profiles, Some(baseline));
    }

    /// Opens a comparison of `profiles` (labels from their file names) in a new tab, the runs in
    /// the order of their swept number (batch 8, 16, 32...), against `profiles[baseline]`, or
    /// against the smallest swept number when `baseline` is `None`.
    pub fn compare_profiles(&mut self, profiles: Vec<Arc<Profile>>, baseline: Option<usize>) {
        let labels: Vec<RunLabel> = profiles.iter().map(|p| RunLabel::of_profile(p)).collect();
        let (profiles, labels, baseline) = order_by_sweep(profiles, labels, baseline);
        match CompareState::new(profiles, &labels, baseline) {
            Ok(state) => {
                self.compares.push(state);
                self.active = self.tabs.len() + self.compares.len() - 1;
            }
            Err(e) => self.errors.push(format!("cannot compare: {e}")),
        }
    }

    /// Merges `profiles` (per-rank traces of one distributed job) into one multi-GPU profile on
    /// a shared time axis, opened in a new tab.
    pub fn merge_profiles(&mut self, profiles: &[Arc<Profile>]) {
        let owned: Vec<Profile> = profiles.iter().map(|p| Profile::clone(p)).collect();
        match merge_ranks(owned) {
            Ok(merged) => {
                self.tabs.push(Tab::new(merged));
                self.active = self.tabs.len() - 1;
            }
            Err(e) => self.errors.push(format!("cannot merge the ranks: {e}")),
        }
    }

    /// Starts loading a file; it becomes a tab when ready. A file that is open already (however
    /// its path is written) is not read again: its tab is shown.
    pub fn open(&mut self, path: PathBuf, ctx: &egui::Context) {
        if let Some(i) = self.tab_of(&path) {
            self.active = i;
            // Opened together with others: it takes part as it is.
            if let Some(g) = &mut self.group
                && let Some(k) = g.waiting.iter().position(|p| *p == path)
            {
                g.waiting.remove(k);
                g.loaded.push(Arc::clone(&self.tabs[i].profile));
            }
            return;
        }
        self.loader.open(path, ctx);
    }

    /// The tab opened from `path`, if one is.
    fn tab_of(&self, path: &Path) -> Option<usize> {
        let wanted = canonical(path);
        self.tabs
            .iter()
            .position(|t| t.opened_from.as_ref() == Some(&wanted))
    }

    /// Reads the files opened from now on with `import` instead of
    /// `warpscope_core::import_file` (tests put a stand-in there, e.g. one that holds a load
    /// until it is cancelled).
    pub fn set_importer(&mut self, import: ImportFn) {
        self.loader = Loader::with_importer(import);
    }

    /// True while files are loading.
    pub fn loading(&self) -> bool {
        self.loader.busy()
    }

    fn remember(&mut self, path: &Path) {
        // A screenshot run is not the user opening a file.
        if self.screenshot.is_some() {
            return;
        }
        let path = canonical(path);
        self.recent.retain(|p| p != &path);
        self.recent.insert(0, path);
        self.recent.truncate(RECENT_MAX);
    }

    fn collect_loaded(&mut self) {
        for result in self.loader.poll() {
            match result {
                Loaded::Done(path, profile) => {
                    self.remember(&path);
                    let mut tab = Tab::new(*profile);
                    tab.opened_from = Some(canonical(&path));
                    if self.open_insights && tab.live.is_none() {
                        tab.bottom = BottomView::Insights;
                    }
                    if self.open_memory && tab.live.is_none() {
                        tab.bottom = BottomView::Memory;
                    }
                    if self.open_roofline && tab.live.is_none() {
                        tab.bottom = BottomView::Roofline;
                    }
                    let mut at = self.tabs.len();
                    if let Some(g) = &mut self.group
                        && let Some(k) = g.waiting.iter().position(|p| *p == path)
                    {
                        g.waiting.remove(k);
                        g.loaded.push(Arc::clone(&tab.profile));
                        // In the order the files were given, not the order they finished.
                        let order = &g.order;
                        g.loaded
                            .sort_by_key(|p| order.iter().position(|o| *o == p.source.path));
                        let rank = g
                            .loaded
                            .iter()
                            .position(|p| Arc::ptr_eq(p, &tab.profile))
                            .unwrap_or(g.loaded.len());
                        at = (g.first_tab + rank).min(self.tabs.len());
                    }
                    self.tabs.insert(at, tab);
                    self.active = at;
                }
                Loaded::Job(path, profile, report) => {
                    self.remember(&path);
                    self.forget_waiting(&path);
                    let mut tab = Tab::job(*profile, *report);
                    tab.opened_from = Some(canonical(&path));
                    self.tabs.push(tab);
                    self.active = self.tabs.len() - 1;
                }
                Loaded::Failed(path, message) => {
                    self.forget_waiting(&path);
                    self.errors.push(message);
                }
                Loaded::Cancelled(path) => self.forget_waiting(&path),
            }
        }
        if self.group.as_ref().is_some_and(|g| g.waiting.is_empty())
            && let Some(g) = self.group.take()
            && g.loaded.len() >= 2
        {
            if self.compare_when_loaded {
                self.compare_profiles(g.loaded, None);
            } else {
                self.offer = Some(g.loaded);
            }
        }
    }

    fn forget_waiting(&mut self, path: &Path) {
        if let Some(g) = &mut self.group {
            g.waiting.retain(|p| p != path);
        }
    }

    fn take_dropped_files(&mut self, ctx: &egui::Context) {
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .collect()
        });
        if !dropped.is_empty() {
            self.open_all(dropped, ctx);
        }
    }

    /// The folder a file browser starts in: that of the most recent file, else the current one.
    fn browse_from(&self) -> PathBuf {
        self.recent
            .first()
            .and_then(|p| p.parent())
            .filter(|d| d.is_dir())
            .map(Path::to_path_buf)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."))
    }

    fn open_dialog(&mut self, ctx: &egui::Context) {
        if self.dialog.is_some() || self.browser.is_some() {
            return;
        }
        if self.builtin_dialogs {
            self.browser = Some((
                FileBrowser::new(BrowserMode::Open, self.browse_from()),
                None,
            ));
            return;
        }
        self.dialog_started = Some(std::time::Instant::now());
        let (tx, rx) = channel();
        let ctx = ctx.clone();
        // The native dialog blocks; run it on its own thread so the window keeps drawing.
        let spawned = std::thread::Builder::new()
            .name("warpscope-open-dialog".to_string())
            .spawn(move || {
                let files = rfd::FileDialog::new()
                    .set_title("Open profiles")
                    .add_filter("Profiles", &file_browser::PROFILE_EXTENSIONS)
                    .add_filter("All files", &["*"])
                    .pick_files()
                    .unwrap_or_default();
                let _ = tx.send(files);
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => self.dialog = Some(rx),
            Err(e) => self
                .errors
                .push(format!("cannot open the file dialog: {e}")),
        }
    }

    /// Saves the profile of tab `index` as Chrome trace JSON at `path` (gzip when it ends in
    /// `.gz`), off the UI thread; a failure shows in the window like a file that cannot open.
    pub fn save_profile_as(&mut self, index: usize, path: PathBuf) {
        let Some(tab) = self.tabs.get(index) else {
            return;
        };
        let profile = Arc::clone(&tab.profile);
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let result = warpscope_core::write::save_chrome_trace(&profile, &path)
                .map(|()| path)
                .map_err(|e| e.to_string());
            let _ = tx.send(result);
        });
        self.saving.push(rx);
    }

    /// True while a save is in flight.
    pub fn saving(&self) -> bool {
        !self.saving.is_empty()
    }

    fn poll_saves(&mut self) {
        let mut done = Vec::new();
        self.saving.retain(|rx| match rx.try_recv() {
            Ok(result) => {
                done.push(result);
                false
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => true,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => false,
        });
        for result in done {
            match result {
                Ok(path) => self.remember(&path),
                Err(e) => self.errors.push(e),
            }
        }
    }

    /// File → Save as: asks where (on its own thread), then saves the active profile.
    fn save_dialog(&mut self, ctx: &egui::Context) {
        let Some(tab) = self.tabs.get(self.active) else {
            return;
        };
        let index = self.active;
        let name = Path::new(&tab.title())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = name
            .trim_end_matches(".gz")
            .trim_end_matches(".json")
            .to_string();
        if self.builtin_dialogs {
            let mode = BrowserMode::Save(format!("{stem}.json.gz"));
            self.browser = Some((FileBrowser::new(mode, self.browse_from()), Some(index)));
            return;
        }
        let (tx, rx) = channel();
        let ctx = ctx.clone();
        let spawned = std::thread::Builder::new()
            .name("warpscope-save-dialog".to_string())
            .spawn(move || {
                let path = rfd::FileDialog::new()
                    .set_title("Save as Chrome trace JSON")
                    .set_file_name(format!("{stem}.json.gz"))
                    .add_filter("Chrome trace JSON", &["json", "gz"])
                    .save_file();
                let _ = tx.send(path.map(|p| (index, p)));
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => self.save_target = Some(rx),
            Err(e) => self
                .errors
                .push(format!("cannot open the file dialog: {e}")),
        }
    }

    fn poll_dialog(&mut self, ctx: &egui::Context) {
        if let Some(rx) = &self.save_target
            && let Ok(choice) = rx.try_recv()
        {
            self.save_target = None;
            if let Some((index, path)) = choice {
                self.save_profile_as(index, path);
            }
        }
        let Some(rx) = &self.dialog else { return };
        if let Ok(files) = rx.try_recv() {
            self.dialog = None;
            let quick = self
                .dialog_started
                .take()
                .is_some_and(|t| t.elapsed() < std::time::Duration::from_millis(300));
            if files.is_empty() && quick {
                // Nothing answered (no desktop portal): use warpscope's own browser from now on.
                self.builtin_dialogs = true;
                let mut browser = FileBrowser::new(BrowserMode::Open, self.browse_from());
                browser.note = Some(
                    "The system file dialog did not open (no desktop portal answered); this is \
                     warpscope's own."
                        .to_string(),
                );
                self.browser = Some((browser, None));
                return;
            }
            for f in files {
                self.open(f, ctx);
            }
        }
    }

    /// warpscope's own file browser, while it is open.
    fn browser_ui(&mut self, ctx: &egui::Context) {
        let Some((browser, save)) = &mut self.browser else {
            return;
        };
        let save = *save;
        let Some(outcome) = browser.ui(ctx) else {
            return;
        };
        self.browser = None;
        match (outcome, save) {
            (BrowserOutcome::Open(files), _) => {
                if files.len() > 1 {
                    self.open_all(files, ctx);
                } else {
                    for f in files {
                        self.open(f, ctx);
                    }
                }
            }
            (BrowserOutcome::Save(path), Some(index)) => self.save_profile_as(index, path),
            _ => {}
        }
    }

    fn menu_bar_ui(&mut self, ui: &mut egui::Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("Open…").clicked() {
                    self.open_dialog(ui.ctx());
                    ui.close();
                }
                if ui
                    .add_enabled(
                        self.active < self.tabs.len(),
                        egui::Button::new("Save as Chrome trace JSON…"),
                    )
                    .on_hover_text("Any profile (nvprof, nsys, a live run…) as a trace that Perfetto and chrome://tracing open too")
                    .clicked()
                {
                    self.save_dialog(ui.ctx());
                    ui.close();
                }
                ui.menu_button("Open recent", |ui| {
                    if self.recent.is_empty() {
                        ui.label("No recent files");
                    }
                    let mut chosen = None;
                    for path in &self.recent {
                        if ui.button(path.display().to_string()).clicked() {
                            chosen = Some(path.clone());
                        }
                    }
                    if let Some(path) = chosen {
                        self.open(path, ui.ctx());
                        ui.close();
                    }
                });
                if ui
                    .add_enabled(
                        self.tabs.len() >= 2,
                        egui::Button::new("Compare open profiles…"),
                    )
                    .clicked()
                {
                    self.compare_dialog = Some(CompareDialog {
                        chosen: vec![true; self.tabs.len()],
                        baseline: 0,
                    });
                    ui.close();
                }
                ui.separator();
                let can_close = self.tab_count() > 0;
                if ui
                    .add_enabled(can_close, egui::Button::new("Close tab"))
                    .clicked()
                {
                    self.close_tab(self.active);
                    ui.close();
                }
                if ui.button("Quit").clicked() {
                    ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
                }
            });
            ui.menu_button("Live", |ui| {
                if self.live.open_button_ui(ui) {
                    ui.close();
                }
            });
            ui.with_layout(Layout::right_to_left(Align::Center), |ui| {
                ui.label(RichText::new("warpscope").weak());
            });
        });
    }

    fn tab_count(&self) -> usize {
        self.tabs.len() + self.compares.len()
    }

    fn close_tab(&mut self, index: usize) {
        if index < self.tabs.len() {
            self.tabs.remove(index);
        } else if index - self.tabs.len() < self.compares.len() {
            self.compares.remove(index - self.tabs.len());
        } else {
            return;
        }
        if self.active > index || self.active >= self.tab_count() {
            self.active = self.active.saturating_sub(1);
        }
    }

    fn tab_bar_ui(&mut self, ui: &mut egui::Ui) {
        let mut close = None;
        ui.horizontal_wrapped(|ui| {
            let titles: Vec<String> = self
                .tabs
                .iter()
                .map(Tab::title)
                .chain(self.compares.iter().map(CompareState::title))
                .collect();
            for (i, title) in titles.iter().enumerate() {
                if ui.selectable_label(i == self.active, title).clicked() {
                    self.active = i;
                }
                if ui
                    .small_button("×")
                    .on_hover_text(format!("Close {title}"))
                    .clicked()
                {
                    close = Some(i);
                }
                ui.separator();
            }
            if self.tabs.len() >= 2
                && ui
                    .button("Compare…")
                    .on_hover_text("Compare open profiles side by side")
                    .clicked()
            {
                self.compare_dialog = Some(CompareDialog {
                    chosen: vec![true; self.tabs.len()],
                    baseline: 0,
                });
            }
        });
        if let Some(i) = close {
            self.close_tab(i);
        }
    }

    /// The offer made when several files were opened together.
    fn offer_ui(&mut self, ui: &mut egui::Ui) {
        let Some(profiles) = &self.offer else {
            return;
        };
        let n = profiles.len();
        let ranks: Vec<Option<i64>> = profiles.iter().map(|p| profile_rank(p)).collect();
        let distinct_ranks = ranks.iter().all(Option::is_some) && {
            let mut r: Vec<i64> = ranks.iter().flatten().copied().collect();
            r.sort_unstable();
            r.dedup();
            r.len() == n
        };
        let mut action = None;
        ui.horizontal(|ui| {
            ui.label(format!("{n} profiles were opened together."));
            if ui.button("Compare them").clicked() {
                action = Some(true);
            }
            if distinct_ranks
                && ui
                    .button("Merge as ranks of one job")
                    .on_hover_text("One multi-GPU profile on a shared time axis")
                    .clicked()
            {
                action = Some(false);
            }
            if ui.small_button("×").on_hover_text("No, thanks").clicked() {
                self.offer = None;
            }
        });
        if let Some(compare) = action
            && let Some(profiles) = self.offer.take()
        {
            if compare {
                self.compare_profiles(profiles, None);
            } else {
                self.merge_profiles(&profiles);
            }
        }
    }

    /// The "Compare…" window: pick open profiles and the baseline.
    fn compare_dialog_ui(&mut self, ctx: &egui::Context) {
        let Some(dialog) = &mut self.compare_dialog else {
            return;
        };
        dialog.chosen.resize(self.tabs.len(), false);
        let mut open = true;
        let mut go = false;
        egui::Window::new("Compare profiles")
            .open(&mut open)
            .collapsible(false)
            .resizable(false)
            .show(ctx, |ui| {
                ui.label("Profiles to compare, and the baseline the others are measured against:");
                egui::Grid::new("compare_dialog")
                    .num_columns(2)
                    .show(ui, |ui| {
                        for (i, tab) in self.tabs.iter().enumerate() {
                            ui.checkbox(&mut dialog.chosen[i], tab.title());
                            ui.radio_value(&mut dialog.baseline, i, "baseline");
                            ui.end_row();
                        }
                    });
                let count = dialog.chosen.iter().filter(|&&c| c).count();
                let ok = count >= 2 && dialog.chosen.get(dialog.baseline) == Some(&true);
                if !ok {
                    ui.weak("Choose two or more profiles, the baseline among them.");
                }
                if ui.add_enabled(ok, egui::Button::new("Compare")).clicked() {
                    go = true;
                }
            });
        if go {
            let indices: Vec<usize> = dialog
                .chosen
                .iter()
                .enumerate()
                .filter(|(_, c)| **c)
                .map(|(i, _)| i)
                .collect();
            let baseline = indices
                .iter()
                .position(|&i| i == dialog.baseline)
                .unwrap_or(0);
            self.compare_dialog = None;
            self.compare_tabs(&indices, baseline);
        } else if !open {
            self.compare_dialog = None;
        }
    }

    fn loading_ui(&mut self, ui: &mut egui::Ui) {
        for job in self.loader.jobs() {
            ui.horizontal(|ui| {
                spinner_ui(ui);
                ui.label(format!("Loading {}", file_name(&job.path)));
                let fraction = job.progress.fraction().unwrap_or(0.0);
                ui.add(
                    egui::ProgressBar::new(fraction)
                        .desired_width(240.0)
                        .show_percentage(),
                );
                ui.label(format!("{:.1} s", job.started.elapsed().as_secs_f32()));
                if ui.button("Cancel").clicked() {
                    job.progress.cancel();
                }
            });
        }
    }

    fn errors_ui(&mut self, ui: &mut egui::Ui) {
        let mut dismiss = None;
        for (i, message) in self.errors.iter().enumerate() {
            ui.horizontal(|ui| {
                ui.label(RichText::new("⚠").color(Color32::from_rgb(0xe0, 0x60, 0x40)));
                ui.label(RichText::new(message).color(ui.visuals().warn_fg_color));
                if ui.small_button("Dismiss").clicked() {
                    dismiss = Some(i);
                }
            });
        }
        if let Some(i) = dismiss {
            self.errors.remove(i);
        }
    }

    fn welcome_ui(&mut self, ui: &mut egui::Ui) {
        ui.vertical_centered(|ui| {
            ui.add_space(ui.available_height() * 0.25);
            ui.heading("Drop GPU profiles here");
            ui.label(
                "PyTorch profiler and Chrome traces (.json, .json.gz), nvprof CSV and text logs, \
                 nvprof .nvvp, Nsight Systems SQLite exports",
            );
            ui.add_space(8.0);
            ui.horizontal(|ui| {
                // Centre the two buttons.
                ui.add_space((ui.available_width() - 170.0).max(0.0) / 2.0);
                if ui.button("Open…").clicked() {
                    self.open_dialog(ui.ctx());
                }
                self.live.open_button_ui(ui);
            });
            if !self.recent.is_empty() {
                ui.add_space(16.0);
                ui.label(RichText::new("Recent").strong());
                let mut chosen = None;
                for path in &self.recent {
                    if ui.link(path.display().to_string()).clicked() {
                        chosen = Some(path.clone());
                    }
                }
                if let Some(path) = chosen {
                    self.open(path, ui.ctx());
                }
            }
        });
    }

    fn drop_overlay_ui(ctx: &egui::Context) {
        let hovering = ctx.input(|i| i.raw.hovered_files.len());
        if hovering == 0 {
            return;
        }
        let screen = ctx.content_rect();
        let painter = ctx.layer_painter(egui::LayerId::new(
            egui::Order::Foreground,
            egui::Id::unique("drop_overlay"),
        ));
        painter.rect_filled(screen, 0.0, Color32::from_black_alpha(160));
        painter.text(
            screen.center(),
            egui::Align2::CENTER_CENTER,
            format!(
                "Drop to open {hovering} file{}",
                if hovering == 1 { "" } else { "s" }
            ),
            egui::FontId::proportional(24.0),
            Color32::WHITE,
        );
    }
}

/// egui's spinner without its request for a repaint every frame: while loading, the app
/// repaints every 100 ms (`request_repaint_after`), so the spinner turns at 10 frames a second
/// and the import keeps the cores (drawing at full rate on a machine without a GPU took one).
fn spinner_ui(ui: &mut egui::Ui) {
    let size = ui.style().spacing.interact_size.y;
    let (rect, response) = ui.allocate_exact_size(egui::vec2(size, size), egui::Sense::hover());
    response.widget_info(|| egui::WidgetInfo::new(egui::Role::ProgressIndicator));
    if !ui.is_rect_visible(rect) {
        return;
    }
    let radius = rect.height().min(rect.width()) * 0.5 - 2.0;
    let time = ui.input(|i| i.time);
    let start = time * std::f64::consts::TAU;
    let end = start + 240f64.to_radians() * time.sin();
    let points: Vec<egui::Pos2> = (0..16)
        .map(|k| {
            let angle = start + (end - start) * f64::from(k) / 16.0;
            let (sin, cos) = angle.sin_cos();
            #[allow(clippy::cast_possible_truncation)]
            let v = egui::vec2(cos as f32, sin as f32);
            rect.center() + radius * v
        })
        .collect();
    let color = ui.visuals().strong_text_color();
    ui.painter()
        .add(egui::Shape::line(points, egui::Stroke::new(3.0, color)));
}

/// `path` as the file system resolves it (absolute, links followed), or as written when it
/// cannot be resolved.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

impl eframe::App for WarpscopeApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        self.collect_loaded();
        if let Some(output) = self.live.poll() {
            self.tabs.push(Tab::new(output.profile));
            self.active = self.tabs.len() - 1;
        }
        self.take_dropped_files(&ctx);
        self.poll_dialog(&ctx);
        self.browser_ui(&ctx);
        self.poll_saves();
        if ctx.input_mut(|i| i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::O)))
        {
            self.open_dialog(&ctx);
        }
        if ctx.input_mut(|i| i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::W)))
        {
            self.close_tab(self.active);
        }
        if self.loader.busy() || self.saving() {
            // Keep the progress bars moving.
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
        }

        egui::Panel::top("menu").show(ui, |ui| self.menu_bar_ui(ui));
        if self.tab_count() > 0 || self.loader.busy() || !self.errors.is_empty() {
            egui::Panel::top("tabs").show(ui, |ui| {
                self.errors_ui(ui);
                self.loading_ui(ui);
                self.offer_ui(ui);
                if self.tab_count() > 0 {
                    self.tab_bar_ui(ui);
                }
            });
        }
        let n_profiles = self.tabs.len();
        if let Some(tab) = self.tabs.get_mut(self.active) {
            tab.ui(ui, &mut self.peaks);
        } else if let Some(state) = self
            .active
            .checked_sub(n_profiles)
            .and_then(|i| self.compares.get_mut(i))
        {
            egui::CentralPanel::default().show(ui, |ui| compare_ui(ui, state, self.peaks));
        } else {
            egui::CentralPanel::default().show(ui, |ui| self.welcome_ui(ui));
        }
        self.compare_dialog_ui(&ctx);
        self.live.window_ui(&ctx);
        Self::drop_overlay_ui(&ctx);
        self.screenshot_step(&ctx);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, RECENT_KEY, &self.recent);
    }
}
