//! `warpscope compare`: several profiles side by side. Reads the files, merges the per-rank
//! traces of one distributed job into one run, labels the runs, compares them with
//! [`compare_runs`] and keeps the rows that the report prints.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use warpscope_core::Profile;
use warpscope_core::analysis::compare::{
    Comparison, RunLabel, compare_runs, file_stem, merge_ranks, order_by_sweep, profile_rank,
};

/// What `warpscope compare` was asked for.
#[derive(Debug)]
pub struct CompareOptions {
    /// The runs as typed: a file, or per-rank files of one job joined with `+`.
    pub files: Vec<PathBuf>,
    /// The baseline run, counted from 1 in the order the runs were given; `None`: the run with
    /// the smallest swept number (or the first, when nothing is swept).
    pub baseline: Option<usize>,
    /// `FILE=LABEL` overrides.
    pub labels: Vec<String>,
    /// Rows kept per table (0 keeps all).
    pub top: usize,
    /// Merge files whose names differ only in the rank into one run.
    pub auto_merge: bool,
    /// Print import timings per file to stderr.
    pub timings: bool,
}

/// One run: how the user named it and the files it is made of.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// The argument as typed (`r0.json+r1.json`), or the files joined with `+` for runs merged
    /// automatically.
    pub given: String,
    /// The files, in the order given.
    pub files: Vec<PathBuf>,
    /// True when the files were grouped automatically (same name but for the rank).
    pub auto_merged: bool,
}

/// Number of rows each table had before `--top` cut it.
#[derive(Debug, Clone, Copy)]
pub struct RowCounts {
    /// Kernels.
    pub kernels: usize,
    /// Copy and set kinds.
    pub copies: usize,
    /// CPU operators.
    pub ops: usize,
    /// Operators with the kernels they launched.
    pub kernels_by_operator: usize,
}

/// The comparison as printed: rows ordered by their longest time in any run and cut to `--top`.
#[derive(Debug)]
pub struct CompareOutput {
    /// The comparison (runs complete, tables cut to `top`).
    pub comparison: Comparison,
    /// The files of each run, in run order.
    pub runs: Vec<RunSpec>,
    /// Rows before the cut.
    pub counts: RowCounts,
    /// The `--top` asked for (0 = all).
    pub top: usize,
    /// The runs' import warnings, one line each, naming the run (`#1 batch=8 (FILE): ...`).
    pub warnings: Vec<String>,
}

/// Loads, merges, labels and compares the runs.
///
/// # Errors
///
/// A file that cannot be read (the error names it), fewer than two runs, a bad `--label` or
/// `--baseline`, ranks that cannot be merged.
pub fn compare(opts: &CompareOptions) -> Result<CompareOutput> {
    let mut specs = parse_specs(&opts.files)?;
    if specs.len() < 2 {
        let got = match specs.as_slice() {
            [one] if one.files.len() > 1 => format!(
                "one: {} (`+` merges the ranks of one job into one run)",
                one.given
            ),
            [one] => format!("one: {}", one.given),
            _ => "none".to_string(),
        };
        bail!("compare needs at least two runs, got {got}");
    }
    if opts.baseline == Some(0) {
        bail!("--baseline 0: runs are counted from 1");
    }
    let mut loaded = load_all(&specs, opts.timings)?;
    if opts.auto_merge {
        specs = group_ranks(specs, &loaded);
    }
    if let Some(baseline) = opts.baseline
        && baseline > specs.len()
    {
        bail!(
            "--baseline {}: there are only {} runs (counted from 1 in the order given{})",
            baseline,
            specs.len(),
            if specs.iter().any(|s| s.files.len() > 1) {
                ", merged ranks counting as one run"
            } else {
                ""
            }
        );
    }
    // How many more times each file is used: the last use takes the profile, earlier ones copy.
    let mut uses: HashMap<PathBuf, usize> = HashMap::new();
    for f in specs.iter().flat_map(|s| &s.files) {
        *uses.entry(f.clone()).or_default() += 1;
    }
    let mut profiles: Vec<Profile> = Vec::with_capacity(specs.len());
    for spec in &specs {
        let mut parts: Vec<Profile> = Vec::with_capacity(spec.files.len());
        for f in &spec.files {
            let left = uses.get_mut(f).map_or(0, |n| {
                *n -= 1;
                *n
            });
            let profile = if left == 0 {
                loaded.remove(f)
            } else {
                loaded.get(f).cloned()
            };
            parts.extend(profile);
        }
        let profile = if parts.len() == 1 {
            parts.swap_remove(0)
        } else {
            merge_ranks(parts).with_context(|| format!("cannot merge the ranks {}", spec.given))?
        };
        profiles.push(profile);
    }
    let mut labels: Vec<RunLabel> = profiles.iter().map(RunLabel::of_profile).collect();
    for text in &opts.labels {
        let (run, label) = label_override(text, &specs)?;
        labels[run] = label;
    }
    // Runs are shown in the order of the swept number (batch 8, 16, 32, 128), the baseline is
    // the smallest unless --baseline names one (counted in the order given).
    let runs: Vec<(RunSpec, Profile)> = specs.into_iter().zip(profiles).collect();
    let (runs, labels, baseline) = order_by_sweep(runs, labels, opts.baseline.map(|b| b - 1));
    let (specs, profiles): (Vec<RunSpec>, Vec<Profile>) = runs.into_iter().unzip();
    let refs: Vec<&Profile> = profiles.iter().collect();
    let mut comparison = compare_runs(&refs, &labels, baseline)?;
    for (run, spec) in comparison.runs.iter_mut().zip(&specs) {
        if spec.files.len() > 1 {
            run.path.clone_from(&spec.given);
        }
    }
    let warnings = comparison
        .runs
        .iter()
        .zip(&profiles)
        .enumerate()
        .flat_map(|(i, (run, p))| {
            p.warnings.iter().map(move |w| {
                format!(
                    "#{} {} ({}): {}",
                    i + 1,
                    run.label,
                    run.path,
                    crate::warning_text(w)
                )
            })
        })
        .collect();
    let counts = RowCounts {
        kernels: comparison.kernels.len(),
        copies: comparison.copies.len(),
        ops: comparison.ops.len(),
        kernels_by_operator: comparison.kernels_by_operator.len(),
    };
    comparison.rank_and_cut(opts.top);
    Ok(CompareOutput {
        comparison,
        runs: specs,
        counts,
        top: opts.top,
        warnings,
    })
}

/// One spec per argument: a path that exists is one file even if its name has a `+`;
/// otherwise `a+b` is the files `a` and `b`.
fn parse_specs(args: &[PathBuf]) -> Result<Vec<RunSpec>> {
    let mut specs = Vec::with_capacity(args.len());
    for arg in args {
        let given = arg.display().to_string();
        let joined = arg
            .to_str()
            .filter(|s| s.contains('+') && !arg.exists())
            .map(|s| s.split('+').map(PathBuf::from).collect::<Vec<_>>());
        let files = match joined {
            Some(parts) => {
                if parts.iter().any(|p| p.as_os_str().is_empty()) {
                    bail!("{given}: empty file name between `+` signs");
                }
                parts
            }
            None => vec![arg.clone()],
        };
        specs.push(RunSpec {
            given,
            files,
            auto_merged: false,
        });
    }
    Ok(specs)
}

/// Reads every distinct file once, at most as many at a time as there are cores. The first
/// file (in the order given) that cannot be read is the error.
fn load_all(specs: &[RunSpec], timings: bool) -> Result<HashMap<PathBuf, Profile>> {
    let mut paths: Vec<&Path> = Vec::new();
    for f in specs.iter().flat_map(|s| &s.files) {
        if !paths.contains(&f.as_path()) {
            paths.push(f);
        }
    }
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(paths.len())
        .max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<(usize, Result<Profile>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(path) = paths.get(i) else {
                            break;
                        };
                        done.push((i, crate::load::load_profile(path, timings)));
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(done) => done,
                // The panic hook has already printed the panic.
                Err(_) => vec![(
                    usize::MAX,
                    Err(anyhow::anyhow!("a file could not be read (internal error)")),
                )],
            })
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    let mut loaded = HashMap::with_capacity(paths.len());
    for (i, result) in results {
        let profile = result?;
        if let Some(path) = paths.get(i) {
            loaded.insert(path.to_path_buf(), profile);
        }
    }
    Ok(loaded)
}

/// The name of a file with its rank taken out (`bert_ddp2_rank1` → `bert_ddp2_`), lower case;
/// `None` when the name has no `rank`/`worker` followed by a number.
fn name_without_rank(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    let stem = file_stem(&name);
    for marker in ["rank", "worker"] {
        for (at, _) in stem.match_indices(marker) {
            let rest = &stem[at + marker.len()..];
            let after_sep = rest.trim_start_matches(['-', '_', '=', ' ']);
            let digits = after_sep.len()
                - after_sep
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .len();
            if digits > 0 {
                return Some(format!("{}{}", &stem[..at], &after_sep[digits..]));
            }
        }
    }
    None
}

/// Groups single files that are ranks of one job: same directory, same name but for the rank,
/// same label but for the rank, distinct known ranks, events to merge. A group takes the place
/// of its first file. Nothing is grouped when grouping would leave fewer than two runs (the
/// ranks are then compared with each other).
fn group_ranks(specs: Vec<RunSpec>, loaded: &HashMap<PathBuf, Profile>) -> Vec<RunSpec> {
    type Key = (PathBuf, String, Vec<(String, String)>, &'static str);
    let key_of = |spec: &RunSpec| -> Option<Key> {
        let [file] = spec.files.as_slice() else {
            return None;
        };
        let profile = loaded.get(file)?;
        if profile.recorded_summary.is_some() && profile.event_count() == 0 {
            return None;
        }
        let label = RunLabel::of_profile(profile);
        label.param("rank")?;
        let params = label
            .params
            .iter()
            .filter(|p| p.key != "rank")
            .map(|p| (p.key.clone(), p.value.clone()))
            .collect();
        Some((
            file.parent().map(Path::to_path_buf).unwrap_or_default(),
            name_without_rank(file)?,
            params,
            profile.source.format.as_str(),
        ))
    };
    let keys: Vec<Option<Key>> = specs.iter().map(key_of).collect();
    // Members of each key, in order.
    let mut members: Vec<(Key, Vec<usize>)> = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let Some(key) = key else { continue };
        match members.iter_mut().find(|(k, _)| k == key) {
            Some((_, list)) => list.push(i),
            None => members.push((key.clone(), vec![i])),
        }
    }
    let groups: Vec<Vec<usize>> = members
        .into_iter()
        .map(|(_, list)| list)
        .filter(|list| list.len() > 1 && distinct_ranks(list, &specs, loaded))
        .collect();
    let removed: usize = groups.iter().map(|g| g.len() - 1).sum();
    if groups.is_empty() || specs.len() - removed < 2 {
        return specs;
    }
    let mut out = Vec::with_capacity(specs.len() - removed);
    for (i, spec) in specs.iter().enumerate() {
        match groups.iter().find(|g| g.contains(&i)) {
            Some(group) if group[0] == i => {
                let files: Vec<PathBuf> =
                    group.iter().flat_map(|&j| specs[j].files.clone()).collect();
                out.push(RunSpec {
                    given: group
                        .iter()
                        .map(|&j| specs[j].given.as_str())
                        .collect::<Vec<_>>()
                        .join("+"),
                    files,
                    auto_merged: true,
                });
            }
            Some(_) => {}
            None => out.push(spec.clone()),
        }
    }
    out
}

fn distinct_ranks(list: &[usize], specs: &[RunSpec], loaded: &HashMap<PathBuf, Profile>) -> bool {
    let ranks: Option<Vec<i64>> = list
        .iter()
        .map(|&i| {
            let file = specs[i].files.first()?;
            profile_rank(loaded.get(file)?)
        })
        .collect();
    ranks.is_some_and(|mut r| {
        let n = r.len();
        r.sort_unstable();
        r.dedup();
        r.len() == n
    })
}

/// Reads `FILE=LABEL`: the run whose argument, or one of whose files (as given, or by file
/// name), is FILE. FILE may itself contain `=`: the first split that names a run wins.
fn label_override(text: &str, specs: &[RunSpec]) -> Result<(usize, RunLabel)> {
    for (at, _) in text.match_indices('=') {
        let (file, label) = (&text[..at], text[at + 1..].trim());
        let matches: Vec<usize> = specs
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                s.given == file
                    || s.files
                        .iter()
                        .any(|f| f == Path::new(file) || f.file_name().is_some_and(|n| n == file))
            })
            .map(|(i, _)| i)
            .collect();
        match matches.as_slice() {
            [] => {}
            [run] => {
                if label.is_empty() {
                    bail!("--label {text}: the label is empty");
                }
                return Ok((*run, RunLabel::from_user_text(label)));
            }
            _ => {
                bail!("--label {text}: `{file}` names several runs; give the path as typed instead")
            }
        }
    }
    if text.contains('=') {
        bail!("--label {text}: no run has that file (give it as typed, or its file name)");
    }
    bail!("--label {text}: expected FILE=LABEL");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_is_taken_out_of_names() {
        let n = |s: &str| name_without_rank(Path::new(s));
        assert_eq!(
            n("d/hta_world128_sampled_rank-0.json.gz"),
            n("d/hta_world128_sampled_rank-1.json.gz")
        );
        assert_eq!(n("bert_ddp2_rank1.json").as_deref(), Some("bert_ddp2_"));
        assert_eq!(n("x_worker3.pt.trace.json").as_deref(), Some("x_"));
        assert_eq!(n("rank3of8_async.json").as_deref(), Some("of8_async"));
        assert_eq!(n("alexnet_b8.json"), None);
        assert_ne!(n("bert_rank0.json"), n("gpt_rank1.json"));
    }

    fn spec(given: &str, files: &[&str]) -> RunSpec {
        RunSpec {
            given: given.into(),
            files: files.iter().map(PathBuf::from).collect(),
            auto_merged: false,
        }
    }

    #[test]
    fn label_overrides_find_their_run() {
        let specs = [
            spec("runs/a_b8.json", &["runs/a_b8.json"]),
            spec("r0.json+r1.json", &["r0.json", "r1.json"]),
            spec("lr=0.1.json", &["lr=0.1.json"]),
        ];
        let (run, label) = label_override("a_b8.json=batch=64,precision=amp", &specs).unwrap();
        assert_eq!(run, 0);
        assert_eq!(label.text, "batch=64,precision=amp");
        assert_eq!(label.number("batch"), Some(64.0));
        assert_eq!(label.value("precision"), Some("amp"));
        assert_eq!(label_override("runs/a_b8.json=x", &specs).unwrap().0, 0);
        assert_eq!(label_override("r1.json=two gpus", &specs).unwrap().0, 1);
        assert_eq!(label_override("r0.json+r1.json=2", &specs).unwrap().0, 1);
        assert_eq!(label_override("lr=0.1.json=slow", &specs).unwrap().0, 2);
        assert!(label_override("nope.json=x", &specs).is_err());
        assert!(label_override("a_b8.json", &specs).is_err());
        assert!(label_override("a_b8.json=", &specs).is_err());
    }

    #[test]
    fn plus_joins_files_unless_the_file_exists() {
        let specs = parse_specs(&[PathBuf::from("/no/such/a.json+/no/such/b.json")]).unwrap();
        assert_eq!(specs[0].files.len(), 2);
        assert!(parse_specs(&[PathBuf::from("a.json++b.json")]).is_err());
        let dir = std::env::temp_dir().join(format!("warpscope-plus-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c++.json");
        std::fs::write(&file, b"{}").unwrap();
        let specs = parse_specs(std::slice::from_ref(&file)).unwrap();
        assert_eq!(specs[0].files, vec![file]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
