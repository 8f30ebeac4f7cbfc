//! Kernel and function names: shortened for tables (C++ parameter lists dropped, template
//! arguments folded, long text cut), who owns a kernel ([`owner`]), and which names mark a
//! training step ([`is_step_name`]).

pub mod owner;

pub use owner::{KernelOwner, is_communication, is_nccl_kernel, kernel_owner};

/// A name shortened to at most `max_chars` characters for a table column: the parameter list of
/// a long C++ name is dropped (`f<T>(int, float*)` → `f<T>`), then its template arguments are
/// folded from the innermost out (`f<a<b>, c>` → `f<a<...>, c>` → `f<...>`), then the text is
/// cut with `...`.
pub fn short_name(name: &str, max_chars: usize) -> String {
    let fits = |s: &str| s.chars().count() <= max_chars;
    if fits(name) {
        return name.to_string();
    }
    let text = without_parameters(name);
    if fits(text) {
        return text.to_string();
    }
    let mut folded = None;
    for level in (1..=template_depth(text)).rev() {
        if let Some(f) = fold_templates(text, level) {
            if fits(&f) {
                return f;
            }
            folded = Some(f);
        }
    }
    cut_text(folded.as_deref().unwrap_or(text), max_chars)
}

/// `text` cut to `max_chars` characters, ending in `...` when cut.
pub fn cut_text(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let keep: String = text.chars().take(max_chars.saturating_sub(3)).collect();
    format!("{keep}...")
}

/// A C++ function name without its trailing `(...)` parameter list, when its brackets balance.
pub fn without_parameters(name: &str) -> &str {
    let text = name.trim_end();
    if !text.ends_with(')') {
        return text;
    }
    let mut depth = 0usize;
    for (i, c) in text.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                let Some(d) = depth.checked_sub(1) else {
                    return text;
                };
                depth = d;
                if depth == 0 {
                    return if i == 0 { text } else { text[..i].trim_end() };
                }
            }
            _ => {}
        }
    }
    text
}

/// Deepest nesting of `<...>` in `text`.
fn template_depth(text: &str) -> usize {
    let (mut depth, mut most) = (0usize, 0usize);
    for c in text.chars() {
        match c {
            '<' => {
                depth += 1;
                most = most.max(depth);
            }
            '>' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    most
}

/// `text` with the template arguments at nesting `level` and deeper folded to `<...>`
/// (`level` 1: `a<b<c>, d>::f<e>` → `a<...>::f<...>`); `None` when the brackets do not balance
/// (`operator<<`).
fn fold_templates(text: &str, level: usize) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '<' => {
                depth += 1;
                if depth == level {
                    out.push_str("<...>");
                } else if depth < level {
                    out.push('<');
                }
            }
            '>' => {
                if depth == 0 {
                    return None;
                }
                if depth < level {
                    out.push('>');
                }
                depth -= 1;
            }
            _ if depth < level => out.push(c),
            _ => {}
        }
    }
    (depth == 0).then_some(out)
}

/// [`short_name`] of each name, except that names which would read the same (two
/// instantiations of one template) are cut from their full text instead.
pub fn distinct_short_names(names: &[&str], max_chars: usize) -> Vec<String> {
    let short: Vec<String> = names.iter().map(|n| short_name(n, max_chars)).collect();
    short
        .iter()
        .zip(names)
        .map(|(s, name)| {
            if short.iter().filter(|o| *o == s).count() > 1 {
                cut_text(without_parameters(name), max_chars)
            } else {
                s.clone()
            }
        })
        .collect()
}

/// True for names that look like a training step or iteration: `ProfilerStep#3`, `step`,
/// `Step 12`, `train_step`, `train-step#4`, `iteration 7`, `iter:2` (case-insensitive).
pub fn is_step_name(name: &str) -> bool {
    if name.starts_with("ProfilerStep#") {
        return true;
    }
    let lower = name.trim().to_ascii_lowercase();
    let rest = lower
        .strip_prefix("train")
        .map_or(lower.as_str(), |r| r.trim_start_matches(['_', '-', ' ']));
    let Some(rest) = ["iteration", "iter", "step"]
        .iter()
        .find_map(|word| rest.strip_prefix(word))
    else {
        return false;
    };
    let number = rest.trim_start_matches(['_', '-', ' ', '#', ':', '=']);
    number.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_shortened_readably() {
        let name = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<2>, std::plus<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<2>, float)";
        assert_eq!(short_name(name, 500), name);
        assert_eq!(
            short_name(name, 150),
            "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<2>, std::plus<float>, float>"
        );
        assert_eq!(
            short_name("f<a<int, int, int, int>, b>(x)", 20),
            "f<a<...>, b>"
        );
        assert_eq!(
            short_name(name, 80),
            "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<...>"
        );
        assert_eq!(short_name(name, 20), "void at::native::...");
        assert_eq!(short_name("f(int)", 3), "f");
        assert_eq!(
            short_name("operator<<(std::ostream&, int) extra", 12),
            "operator<..."
        );
        let names = ["k<float, 1>(int)", "k<halfs, 1>(int)", "other<float>(int)"];
        assert_eq!(
            distinct_short_names(&names, 10),
            vec!["k<float...", "k<halfs...", "other<...>"]
        );
    }

    #[test]
    fn step_names() {
        for yes in [
            "ProfilerStep#3",
            "step",
            "Step 12",
            "train_step",
            "train-step#4",
            "iteration 7",
            "iter:2",
            "STEP_5",
        ] {
            assert!(is_step_name(yes), "{yes}");
        }
        for no in [
            "Optimizer.step#SGD.step",
            "stepper",
            "aten::mm",
            "step 3 forward",
            "",
        ] {
            assert!(!is_step_name(no), "{no}");
        }
    }
}
