//! Run labels: the parameters of a run (`batch=32`, `gpus=2, rank=1`, `precision=amp`) read
//! from its file name or from text the user typed.
//!
//! The parser splits the name into tokens at `_`, `-`, `.`, `,`, `+` and spaces and recognises:
//! - `key=value` anywhere (`batch_size=16`, `lr=0.1`; known keys are normalised, see below);
//! - batch size: `b32`, `bs128`, `batch32`, `batchsize16`, `bs 128`, `batch-32`;
//! - GPU count: `gpus4`, `ngpu4`, `4gpu`, `4gpus`, `ddp2`, `fsdp8`, `world8`, `ws8`,
//!   `1xh100` (a count times a known GPU model), and `rank3of8` (also gives the rank);
//! - rank: `rank1`, `rank-1`, `rank_1`, `worker0`;
//! - precision: `amp`, `fp32`, `fp16`, `bf16`, `tf32`, `fp8`, `fp64`, `int8`;
//! - step count: `60steps`, `steps60`; sequence length: `seq512`, `seqlen512`.
//!
//! Known GPU model names (`a100`, `h100`, `b200`, ...) are never read as a batch size, so
//! `tracelens_b200_world8` is `gpus=8`, not `batch=200`. Tokens that match nothing (`alexnet`,
//! `resnet50`, `trace`) are ignored. A name with no parameter is labelled by its file stem.

use std::path::Path;

use serde::Serialize;

/// One parameter of a run (`batch=32`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LabelParam {
    /// Canonical key: `batch`, `gpus`, `rank`, `precision`, `steps`, `seq`, or a key the user
    /// wrote as `key=value`.
    pub key: String,
    /// The value as written (`32`, `amp`).
    pub value: String,
    /// The value as a number, when it is one.
    pub number: Option<f64>,
}

/// The label of a run: display text and the parameters found in it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunLabel {
    /// Text to show (`batch=32`, `gpus=2, rank=1`, or the file stem when no parameter was found,
    /// or what the user typed).
    pub text: String,
    /// Parameters in the order they were found; each key at most once (the first one wins).
    pub params: Vec<LabelParam>,
}

/// Known file-name endings, removed (repeatedly) to get the stem.
const EXTENSIONS: &[&str] = &[
    ".gz", ".json", ".trace", ".pt", ".csv", ".txt", ".log", ".nvvp", ".sqlite", ".prof",
];

/// GPU model names that look like other parameters (`b200` is not batch 200).
const GPU_MODELS: &[&str] = &[
    "a10", "a30", "a40", "a100", "a800", "h20", "h100", "h200", "h800", "b100", "b200", "gb200",
    "gb300", "b300", "v100", "p100", "t4", "l4", "l40", "l40s", "mi100", "mi210", "mi250",
    "mi250x", "mi300", "mi300x", "k80", "p40", "p4", "titanxp", "titanv",
];

const PRECISIONS: &[&str] = &["amp", "fp32", "fp16", "bf16", "tf32", "fp8", "fp64", "int8"];

/// Prefix → canonical key, for `b32`, `gpus4`, ... Longest prefixes first so that `bs128` is not
/// read as `b` + `s128`.
const PREFIX_KEYS: &[(&str, &str)] = &[
    ("batchsize", "batch"),
    ("worldsize", "gpus"),
    ("seqlen", "seq"),
    ("worker", "rank"),
    ("batch", "batch"),
    ("ngpus", "gpus"),
    ("steps", "steps"),
    ("world", "gpus"),
    ("ngpu", "gpus"),
    ("gpus", "gpus"),
    ("fsdp", "gpus"),
    ("rank", "rank"),
    ("ddp", "gpus"),
    ("seq", "seq"),
    ("bs", "batch"),
    ("ws", "gpus"),
    ("b", "batch"),
];

/// Suffix → canonical key, for `4gpu`, `60steps`.
const SUFFIX_KEYS: &[(&str, &str)] = &[
    ("gpus", "gpus"),
    ("gpu", "gpus"),
    ("steps", "steps"),
    ("ranks", "gpus"),
];

/// Canonical key of a key written as `key=value` (unknown keys are kept as written).
fn canonical_key(key: &str) -> &str {
    match key {
        "b" | "bs" | "batch" | "batchsize" | "mbs" => "batch",
        "gpus" | "ngpu" | "ngpus" | "nproc" | "worldsize" | "ws" | "world" => "gpus",
        "rank" | "worker" | "localrank" => "rank",
        "precision" | "dtype" | "prec" => "precision",
        "steps" => "steps",
        "seq" | "seqlen" => "seq",
        other => other,
    }
}

impl RunLabel {
    /// The label a file name gives (`alexnet_b32.pt.trace.json.gz` → `batch=32`): parameters
    /// from the stem, or the stem itself as text when there are none.
    pub fn from_file_name(name: &str) -> Self {
        let stem = file_stem(name);
        let params = parse_params(stem);
        let text = if params.is_empty() {
            stem.to_string()
        } else {
            params_text(&params)
        };
        Self { text, params }
    }

    /// The label of the file at `path` (see [`RunLabel::from_file_name`]).
    pub fn from_path(path: &Path) -> Self {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Self::from_file_name(&name)
    }

    /// A label typed by the user: the text is kept as typed and parameters are read from it with
    /// the same rules as file names (`batch=64, amp` → batch 64, precision amp).
    pub fn from_user_text(text: &str) -> Self {
        Self {
            text: text.trim().to_string(),
            params: parse_params(text),
        }
    }

    /// A label from (key, value) pairs such as [`crate::Profile::labels`].
    pub fn from_pairs(pairs: &[(String, String)]) -> Self {
        let mut params: Vec<LabelParam> = Vec::new();
        for (key, value) in pairs {
            let key = canonical_key(&key.to_ascii_lowercase()).to_string();
            if params.iter().any(|p| p.key == key) {
                continue;
            }
            params.push(LabelParam {
                number: value.trim().parse::<f64>().ok().filter(|v| v.is_finite()),
                key,
                value: value.trim().to_string(),
            });
        }
        Self {
            text: params_text(&params),
            params,
        }
    }

    /// The label of a profile: its own labels when it has some (set by the user), otherwise the
    /// one its file name gives.
    pub fn of_profile(profile: &crate::Profile) -> Self {
        if profile.labels.is_empty() {
            Self::from_path(&profile.source.path)
        } else {
            Self::from_pairs(&profile.labels)
        }
    }

    /// The parameter `key`, if present.
    pub fn param(&self, key: &str) -> Option<&LabelParam> {
        self.params.iter().find(|p| p.key == key)
    }

    /// The numeric value of parameter `key`, if present and numeric.
    pub fn number(&self, key: &str) -> Option<f64> {
        self.param(key).and_then(|p| p.number)
    }

    /// The text value of parameter `key`, if present.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.param(key).map(|p| p.value.as_str())
    }
}

/// The file name without directory and without known profile extensions
/// (`alexnet_b32.pt.trace.json.gz` → `alexnet_b32`).
pub fn file_stem(name: &str) -> &str {
    let name = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let mut stem = name;
    loop {
        let lower = stem.to_ascii_lowercase();
        let Some(ext) = EXTENSIONS.iter().find(|e| lower.ends_with(*e)) else {
            break;
        };
        if stem.len() == ext.len() {
            break;
        }
        stem = &stem[..stem.len() - ext.len()];
    }
    stem
}

/// `batch=32, precision=amp`.
fn params_text(params: &[LabelParam]) -> String {
    params
        .iter()
        .map(|p| format!("{}={}", p.key, p.value))
        .collect::<Vec<_>>()
        .join(", ")
}

fn push_param(params: &mut Vec<LabelParam>, key: &str, value: &str) {
    if value.is_empty() || params.iter().any(|p| p.key == key) {
        return;
    }
    params.push(LabelParam {
        key: key.to_string(),
        value: value.to_string(),
        number: value.parse::<f64>().ok().filter(|v| v.is_finite()),
    });
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Splits at `_ - , + ;` and white space, and at `.` except between two digits (`lr=0.1`).
fn tokenize(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let separator = match b {
            b'_' | b'-' | b',' | b'+' | b';' | b' ' | b'\t' => true,
            b'.' => {
                let digit_before = i > 0 && bytes[i - 1].is_ascii_digit();
                let digit_after = bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
                !(digit_before && digit_after)
            }
            _ => false,
        };
        if separator {
            if i > start {
                tokens.push(&text[start..i]);
            }
            start = i + 1;
        }
    }
    if start < text.len() {
        tokens.push(&text[start..]);
    }
    tokens
}

/// Parameters found in `text` (see the module documentation for the rules).
pub fn parse_params(text: &str) -> Vec<LabelParam> {
    let lower = text.to_ascii_lowercase();
    // Multi-word keys become one token before splitting.
    let lower = [
        "batch_size",
        "batch-size",
        "world_size",
        "world-size",
        "seq_len",
        "seq-len",
    ]
    .iter()
    .fold(lower, |s, k| s.replace(k, &k.replace(['_', '-'], "")));
    let tokens = tokenize(&lower);
    let mut params: Vec<LabelParam> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i];
        i += 1;
        if let Some((key, value)) = token.split_once('=') {
            if !key.is_empty() {
                push_param(&mut params, canonical_key(key), value);
            }
            continue;
        }
        if PRECISIONS.contains(&token) {
            push_param(&mut params, "precision", token);
            continue;
        }
        if GPU_MODELS.contains(&token) {
            continue;
        }
        // `rank3of8`: rank and world size.
        if let Some(rest) = token.strip_prefix("rank")
            && let Some((r, w)) = rest.split_once("of")
            && is_digits(r)
            && is_digits(w)
        {
            push_param(&mut params, "rank", r);
            push_param(&mut params, "gpus", w);
            continue;
        }
        // `8xh100`: a GPU count times a model.
        if let Some((n, model)) = token.split_once('x')
            && is_digits(n)
            && GPU_MODELS.contains(&model)
        {
            push_param(&mut params, "gpus", n);
            continue;
        }
        if let Some(&(prefix, key)) = PREFIX_KEYS.iter().find(|(p, _)| token.starts_with(p)) {
            let rest = &token[prefix.len()..];
            if is_digits(rest) {
                push_param(&mut params, key, rest);
                continue;
            }
            // `bs 128`, `rank-1`: a bare key followed by a number token.
            if rest.is_empty()
                && let Some(next) = tokens.get(i)
                && is_digits(next)
            {
                push_param(&mut params, key, next);
                i += 1;
                continue;
            }
        }
        if let Some(&(suffix, key)) = SUFFIX_KEYS.iter().find(|(s, _)| token.ends_with(s)) {
            let number = &token[..token.len() - suffix.len()];
            if is_digits(number) {
                push_param(&mut params, key, number);
            }
        }
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(label: &RunLabel) -> Vec<(String, String)> {
        label
            .params
            .iter()
            .map(|p| (p.key.clone(), p.value.clone()))
            .collect()
    }

    fn kv(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[test]
    fn alexnet_sweep_names() {
        let l = RunLabel::from_file_name("alexnet_b32.pt.trace.json.gz");
        assert_eq!(l.text, "batch=32");
        assert_eq!(l.number("batch"), Some(32.0));
        assert_eq!(pairs(&l), kv(&[("batch", "32")]));
        let l = RunLabel::from_path(Path::new("/tmp/runs/alexnet_b128.pt.trace.json.gz"));
        assert_eq!(l.text, "batch=128");
        assert_eq!(l.number("batch"), Some(128.0));
    }

    #[test]
    fn precision_names() {
        let l = RunLabel::from_file_name("resnet50_b64_amp.pt.trace.json.gz");
        assert_eq!(pairs(&l), kv(&[("batch", "64"), ("precision", "amp")]));
        assert_eq!(l.text, "batch=64, precision=amp");
        assert_eq!(l.value("precision"), Some("amp"));
        assert_eq!(l.number("precision"), None);
        let l = RunLabel::from_file_name("resnet50_b64_fp32");
        assert_eq!(pairs(&l), kv(&[("batch", "64"), ("precision", "fp32")]));
        let l = RunLabel::from_file_name("gpt_BF16.json");
        assert_eq!(pairs(&l), kv(&[("precision", "bf16")]));
    }

    #[test]
    fn distributed_names() {
        let l = RunLabel::from_file_name("bert_ddp2_rank1.json");
        assert_eq!(pairs(&l), kv(&[("gpus", "2"), ("rank", "1")]));
        assert_eq!(l.text, "gpus=2, rank=1");
        assert_eq!(l.number("gpus"), Some(2.0));
        assert_eq!(l.number("rank"), Some(1.0));
        let l = RunLabel::from_file_name("hta_world128_sampled_rank-0.json.gz");
        assert_eq!(pairs(&l), kv(&[("gpus", "128"), ("rank", "0")]));
        let l = RunLabel::from_file_name("hta_a100_2022_rank3of8_async_cpu_to_gpu.json.gz");
        assert_eq!(pairs(&l), kv(&[("rank", "3"), ("gpus", "8")]));
        let l = RunLabel::from_file_name("hta_a100_ddp2_nccl_rank0.json.gz");
        assert_eq!(pairs(&l), kv(&[("gpus", "2"), ("rank", "0")]));
        let l = RunLabel::from_file_name("kineto2021_v100_resnet50_worker0.pt.trace.json.gz");
        assert_eq!(pairs(&l), kv(&[("rank", "0")]));
        // `b200` is a GPU, not a batch size.
        let l = RunLabel::from_file_name("tracelens_b200_world8_eager_no_metadata.json.gz");
        assert_eq!(pairs(&l), kv(&[("gpus", "8")]));
    }

    #[test]
    fn common_spellings() {
        for (name, want) in [
            ("model_bs128.json", kv(&[("batch", "128")])),
            ("model_bs_128.json", kv(&[("batch", "128")])),
            ("model_batch_size=16.json", kv(&[("batch", "16")])),
            ("model_batch-size=16.json", kv(&[("batch", "16")])),
            ("model_batch32.json", kv(&[("batch", "32")])),
            ("model_gpus4.json", kv(&[("gpus", "4")])),
            ("model_4gpu.json", kv(&[("gpus", "4")])),
            ("model_4gpus.json", kv(&[("gpus", "4")])),
            ("model_ngpu8.json", kv(&[("gpus", "8")])),
            ("model_1xH100.json", kv(&[("gpus", "1")])),
            (
                "model_8xa100_bs256.json",
                kv(&[("gpus", "8"), ("batch", "256")]),
            ),
            (
                "resnet50_b32_60steps.pt.trace.json.gz",
                kv(&[("batch", "32"), ("steps", "60")]),
            ),
            (
                "llama_seqlen2048_bf16.json",
                kv(&[("seq", "2048"), ("precision", "bf16")]),
            ),
            ("run_lr=0.1.json", kv(&[("lr", "0.1")])),
            ("run.b16.v2.json", kv(&[("batch", "16")])),
        ] {
            assert_eq!(pairs(&RunLabel::from_file_name(name)), want, "{name}");
        }
        assert_eq!(
            RunLabel::from_file_name("run_lr=0.1.json").number("lr"),
            Some(0.1)
        );
        let l = RunLabel::from_user_text("batch=64 amp");
        assert_eq!(l.text, "batch=64 amp");
        assert_eq!(pairs(&l), kv(&[("batch", "64"), ("precision", "amp")]));
    }

    #[test]
    fn names_without_parameters_keep_their_stem() {
        let l = RunLabel::from_file_name("alexnet.pt.trace.json.gz");
        assert_eq!(l.text, "alexnet");
        assert!(l.params.is_empty());
        let l = RunLabel::from_file_name("cfd_titanxp_print-gpu-trace.csv");
        assert_eq!(l.text, "cfd_titanxp_print-gpu-trace");
        assert!(l.params.is_empty());
        let l = RunLabel::from_file_name("resnet50.json");
        assert_eq!(l.text, "resnet50");
        assert!(l.params.is_empty());
        assert_eq!(file_stem("report1.sqlite"), "report1");
        assert_eq!(file_stem(".json"), ".json");
    }

    #[test]
    fn labels_from_pairs() {
        let l = RunLabel::from_pairs(&kv(&[("Batch", "32"), ("precision", "amp")]));
        assert_eq!(l.text, "batch=32, precision=amp");
        assert_eq!(l.number("batch"), Some(32.0));
    }
}
