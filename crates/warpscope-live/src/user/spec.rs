//! The argument SPEC of a user kernel (`f32[N]=rand f32[N]=0 i32=N f32=2.5`), and the textual
//! look at its source: is there a `__global__` function of that name, and how many parameters of
//! which kinds does it take, so a mismatch is named before anything is compiled or launched.

use super::expr::Expr;

/// Element or scalar type of an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScalarType {
    /// `float`.
    F32,
    /// `double`.
    F64,
    /// `int`.
    I32,
    /// `unsigned int`.
    U32,
    /// `long long`, `int64_t`.
    I64,
    /// `unsigned long long`, `size_t`, `uint64_t`.
    U64,
}

impl ScalarType {
    /// Bytes of one value.
    pub fn bytes(self) -> u64 {
        match self {
            Self::F32 | Self::I32 | Self::U32 => 4,
            Self::F64 | Self::I64 | Self::U64 => 8,
        }
    }

    /// The name used in a SPEC (`f32`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::F64 => "f64",
            Self::I32 => "i32",
            Self::U32 => "u32",
            Self::I64 => "i64",
            Self::U64 => "u64",
        }
    }

    /// True for `f32` and `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, Self::F32 | Self::F64)
    }

    fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "f32" => Self::F32,
            "f64" => Self::F64,
            "i32" => Self::I32,
            "u32" => Self::U32,
            "i64" => Self::I64,
            "u64" => Self::U64,
            _ => return None,
        })
    }

    /// The type a C parameter type names, if it is one of ours (`const float` → f32).
    fn from_c(text: &str) -> Option<Self> {
        let words: Vec<&str> = text
            .split_whitespace()
            .filter(|w| !matches!(*w, "const" | "volatile" | "__restrict__" | "restrict"))
            .collect();
        Some(match words.join(" ").as_str() {
            "float" => Self::F32,
            "double" => Self::F64,
            "int" | "signed" | "signed int" | "int32_t" => Self::I32,
            "unsigned" | "unsigned int" | "uint32_t" => Self::U32,
            "long long" | "long" | "long int" | "long long int" | "int64_t" | "ptrdiff_t" => {
                Self::I64
            }
            "unsigned long long" | "unsigned long" | "size_t" | "uint64_t" => Self::U64,
            _ => return None,
        })
    }
}

/// How a buffer starts.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Init {
    /// Uniform random in [-1, 1) for floats, [0, 100) for integers; fresh at every size.
    Rand,
    /// 0, 1, 2, ...
    Iota,
    /// Every element the same value.
    Value(f64),
}

/// One kernel argument as the SPEC describes it.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSpec {
    /// A device buffer of `len` elements.
    Buffer {
        /// Element type.
        ty: ScalarType,
        /// Element count, in N.
        len: Expr,
        /// Starting contents.
        init: Init,
    },
    /// A value passed by value.
    Scalar {
        /// Its type.
        ty: ScalarType,
        /// Its value, in N.
        value: Expr,
    },
}

impl ArgSpec {
    /// The argument as written (`f32[N]=rand`).
    pub fn text(&self) -> String {
        match self {
            Self::Buffer { ty, len, init } => {
                let init = match init {
                    Init::Rand => "rand".to_string(),
                    Init::Iota => "iota".to_string(),
                    Init::Value(v) => v.to_string(),
                };
                format!("{}[{len}]={init}", ty.as_str())
            }
            Self::Scalar { ty, value } => format!("{}={value}", ty.as_str()),
        }
    }
}

/// Splits a SPEC into its items: separated by whitespace, or by commas outside brackets.
fn items(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            _ => {}
        }
        if depth == 0 && (c == ',' || c.is_whitespace()) {
            if !cur.trim().is_empty() {
                out.push(cur.trim().to_string());
            }
            cur.clear();
        } else {
            cur.push(c);
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// Parses a SPEC, one item per kernel parameter in order.
pub fn parse_args(text: &str) -> Result<Vec<ArgSpec>, String> {
    let list = items(text);
    if list.is_empty() {
        return Err("--args is empty: describe each kernel parameter, e.g. \
                    \"f32=2.5 f32[N]=rand f32[N]=rand i32=N\""
            .into());
    }
    list.iter()
        .enumerate()
        .map(|(i, item)| {
            parse_item(item).map_err(|e| format!("argument {} ({item:?}): {e}", i + 1))
        })
        .collect()
}

fn parse_item(item: &str) -> Result<ArgSpec, String> {
    let (head, value) = item
        .split_once('=')
        .ok_or("needs a value: TYPE=VALUE for a scalar, TYPE[LEN]=INIT for a buffer")?;
    let head = head.trim();
    let value = value.trim();
    if let Some((ty, len)) = head.split_once('[') {
        let ty = ScalarType::parse(ty.trim()).ok_or_else(|| type_error(ty))?;
        let len = len
            .strip_suffix(']')
            .ok_or("a buffer's length ends with ']' (f32[N*N]=rand)")?;
        let len = Expr::parse(len)?;
        let init = match value {
            "rand" => Init::Rand,
            "iota" => Init::Iota,
            v => Init::Value(start_value(ty, v)?),
        };
        Ok(ArgSpec::Buffer { ty, len, init })
    } else {
        let ty = ScalarType::parse(head).ok_or_else(|| type_error(head))?;
        Ok(ArgSpec::Scalar {
            ty,
            value: Expr::parse(value)?,
        })
    }
}

/// Checks that `v` is a value of `ty`: finite and in range for floats, whole and in range for
/// integers.
pub(crate) fn check_value(ty: ScalarType, v: f64) -> Result<(), String> {
    let (lo, hi) = match ty {
        ScalarType::F32 => (-f64::from(f32::MAX), f64::from(f32::MAX)),
        ScalarType::F64 => (f64::MIN, f64::MAX),
        ScalarType::I32 => (f64::from(i32::MIN), f64::from(i32::MAX)),
        ScalarType::U32 => (0.0, f64::from(u32::MAX)),
        // 2^63 and 2^64 are doubles; the largest values below them are 1024 and 2048 less.
        ScalarType::I64 => (-9.223_372_036_854_776e18, 9.223_372_036_854_775e18),
        ScalarType::U64 => (0.0, 1.844_674_407_370_955_1e19),
    };
    if !v.is_finite() {
        Err(format!("{v} is not a finite number"))
    } else if !ty.is_float() && v.fract() != 0.0 {
        Err(format!(
            "{v} is not a whole number, as {} needs",
            ty.as_str()
        ))
    } else if v < lo || v > hi {
        Err(format!("{v} does not fit in {}", ty.as_str()))
    } else {
        Ok(())
    }
}

/// A buffer's start value: a number of its type. It is held as a double, so an integer past
/// 2^53 is refused rather than rounded.
fn start_value(ty: ScalarType, text: &str) -> Result<f64, String> {
    let v = text
        .parse::<f64>()
        .map_err(|_| format!("{text:?} is not an initialiser: use rand, iota or a number"))?;
    check_value(ty, v)?;
    let inexact =
        v.abs() > 9_007_199_254_740_992.0 || text.parse::<i128>().is_ok_and(|i| i != v as i128);
    if !ty.is_float() && inexact {
        return Err(format!(
            "{text} is past 2^53, where a buffer's start value is not exact"
        ));
    }
    Ok(v)
}

fn type_error(ty: &str) -> String {
    format!(
        "{:?} is not a type: use f32, f64, i32, u32, i64 or u64",
        ty.trim()
    )
}

/// One parameter of a `__global__` function as the source declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The declaration as written (`const float *__restrict__ x`).
    pub text: String,
    /// True for a pointer.
    pub pointer: bool,
    /// The type, when it is one the SPEC can name.
    pub ty: Option<ScalarType>,
}

/// The `__global__` functions a source defines, with their parameters, in order (comments and
/// string literals are skipped; templates and macros that hide a kernel are not expanded, so the
/// real check is NVRTC's, after this one).
pub fn kernels_in(source: &str) -> Vec<(String, Vec<Param>)> {
    let code = drop_launch_bounds(&strip_comments(source));
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("__global__") {
        rest = &rest[at + "__global__".len()..];
        let Some(open) = rest.find('(') else { break };
        // The name is the last identifier before the '('.
        let head = &rest[..open];
        if head.contains(';') || head.contains('{') {
            continue;
        }
        let name: String = head
            .trim_end()
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let Some(close) = matching_paren(rest, open) else {
            break;
        };
        let params = split_params(&rest[open + 1..close]);
        if !name.is_empty() {
            out.push((name, params));
        }
        rest = &rest[close..];
    }
    out
}

fn split_params(list: &str) -> Vec<Param> {
    let mut parts = Vec::new();
    let (mut depth, mut cur) = (0i32, String::new());
    for c in list.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            parts.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    parts.push(cur);
    parts
        .into_iter()
        // A default value (`int n = 5`) is not part of the type.
        .map(|p| {
            let decl = p.split_once('=').map_or(p.as_str(), |(d, _)| d);
            decl.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .filter(|p| !p.is_empty() && p != "void")
        .map(|text| {
            let pointer = text.contains('*') || text.contains('[');
            // The type is everything before the parameter's name (and its '*').
            let ty_text: String = match text.rfind(|c: char| c == '*' || c.is_whitespace()) {
                Some(i) => text[..i].replace('*', " "),
                None => text.clone(),
            };
            Param {
                pointer,
                ty: ScalarType::from_c(&ty_text),
                text,
            }
        })
        .collect()
}

/// The index of the `)` that closes the `(` at `open`, if the text has it.
fn matching_paren(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The source without `__launch_bounds__(...)`, which sits between `void` and the name.
fn drop_launch_bounds(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("__launch_bounds__") {
        out.push_str(&rest[..at]);
        rest = &rest[at + "__launch_bounds__".len()..];
        let Some(open) = rest.find('(') else { break };
        rest = matching_paren(rest, open).map_or("", |close| &rest[close + 1..]);
    }
    out.push_str(rest);
    out
}

/// The source with comments, string literals and character literals blanked (line breaks
/// kept). A `'` after a number is a digit separator (`1'000'000`), not a literal.
fn strip_comments(source: &str) -> String {
    let b = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                if b[i] == b'\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 2;
        } else if b[i] == b'\'' && !after_number(&b[..i]) {
            i += 1;
            while i < b.len() && b[i] != b'\'' && b[i] != b'\n' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            let ch_len = source[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&source[i..i + ch_len]);
            i += ch_len;
        }
    }
    out
}

/// True when `before` ends in a number (`1'000`'s first `'`), whose `'` separates digits.
fn after_number(before: &[u8]) -> bool {
    let word_start = before
        .iter()
        .rposition(|c| !(c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.' || *c == b'\''))
        .map_or(0, |p| p + 1);
    before.get(word_start).is_some_and(u8::is_ascii_digit)
}

/// Checks the SPEC against the kernel's parameters: the same count, a buffer for every pointer
/// and a scalar for every value, and the same element type where the source names one of ours.
pub fn match_signature(kernel: &str, params: &[Param], args: &[ArgSpec]) -> Result<(), String> {
    // A parameter passed by value must be one of the SPEC's types: the launch passes exactly
    // that many bytes, and the driver reads as many as the real type has.
    for (i, p) in params.iter().enumerate() {
        if p.pointer || p.ty.is_some() {
            continue;
        }
        return Err(if p.text.split_whitespace().count() < 2 {
            format!(
                "cannot read the parameters of {kernel}: ({}) is not a declaration (a macro?); \
                 write the parameter list out",
                p.text
            )
        } else {
            format!(
                "parameter {} of {kernel} ({}) is passed by value as a type --args cannot \
                 describe: use f32, f64, i32, u32, i64, u64 or a pointer (pass a struct's \
                 fields as separate parameters)",
                i + 1,
                p.text
            )
        });
    }
    if params.len() != args.len() {
        return Err(format!(
            "{kernel} takes {} parameter(s) ({}) but --args describes {}",
            params.len(),
            params
                .iter()
                .map(|p| p.text.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            args.len()
        ));
    }
    for (i, (p, a)) in params.iter().zip(args).enumerate() {
        let (is_buffer, ty) = match a {
            ArgSpec::Buffer { ty, .. } => (true, *ty),
            ArgSpec::Scalar { ty, .. } => (false, *ty),
        };
        let what = |b: bool| if b { "a buffer" } else { "a scalar" };
        if p.pointer != is_buffer {
            return Err(format!(
                "parameter {} of {kernel} ({}) is {} but --args gives {} ({})",
                i + 1,
                p.text,
                what(p.pointer),
                what(is_buffer),
                a.text()
            ));
        }
        if let Some(pt) = p.ty
            && pt != ty
        {
            return Err(format!(
                "parameter {} of {kernel} ({}) is {} but --args gives {} ({})",
                i + 1,
                p.text,
                pt.as_str(),
                ty.as_str(),
                a.text()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAXPY: &str = r#"
// saxpy: y = a * x + y
extern "C" __global__ void saxpy(float a, const float *__restrict__ x,
                                 float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
/* __global__ void hidden(int x) {} */
__global__ void __launch_bounds__(256, 2) twice(double *v, unsigned long long n, const char *s = "a, b") {}
"#;

    #[test]
    fn kernels_and_their_parameters_are_read_from_the_source() {
        let k = kernels_in(SAXPY);
        let names: Vec<_> = k.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["saxpy", "twice"]);
        let p = &k[0].1;
        assert_eq!(p.len(), 4);
        assert_eq!((p[0].pointer, p[0].ty), (false, Some(ScalarType::F32)));
        assert_eq!(p[1].text, "const float *__restrict__ x");
        assert_eq!((p[1].pointer, p[1].ty), (true, Some(ScalarType::F32)));
        assert_eq!((p[3].pointer, p[3].ty), (false, Some(ScalarType::I32)));
        let p = &k[1].1;
        assert_eq!(p.len(), 3);
        assert_eq!(p[1].ty, Some(ScalarType::U64));
        assert_eq!((p[2].pointer, p[2].ty), (true, None));
    }

    #[test]
    fn parentheses_are_matched() {
        assert_eq!(matching_paren("f(a, (b), c) d", 1), Some(11));
        assert_eq!(matching_paren("f(a, (b)", 1), None);
        assert_eq!(
            drop_launch_bounds("void __launch_bounds__(f(2), 1) k("),
            "void  k("
        );
        assert_eq!(
            drop_launch_bounds("void __launch_bounds__(256 k(int n) {}"),
            "void "
        );
    }

    #[test]
    fn quotes_in_character_literals_hide_nothing() {
        let src = "__device__ char q() { return '\"'; }\n\
                   __device__ char e() { return '\\''; }\n\
                   __device__ int big() { return 1'000'000; }\n\
                   extern \"C\" __global__ void k(float *x, int n) { x[0] = '\"'; }\n\
                   __global__ void k2(int n) {}";
        let names: Vec<_> = kernels_in(src).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["k", "k2"]);
    }

    #[test]
    fn spec_items_parse() {
        let args = parse_args("f32=2.5, f32[N]=rand f32[N*N]=0 i32[N/2]=iota i32=N").unwrap();
        assert_eq!(args.len(), 5);
        assert_eq!(args[0].text(), "f32=2.5");
        assert_eq!(args[2].text(), "f32[N*N]=0");
        assert!(matches!(
            &args[3],
            ArgSpec::Buffer {
                ty: ScalarType::I32,
                init: Init::Iota,
                ..
            }
        ));
        let err = parse_args("f32[N]=rand f16[N]=0").unwrap_err();
        assert_eq!(
            err,
            "argument 2 (\"f16[N]=0\"): \"f16\" is not a type: use f32, f64, i32, u32, i64 or u64"
        );
        assert!(parse_args("f32[N]").unwrap_err().contains("needs a value"));
        assert!(parse_args("f32[N=0").unwrap_err().contains("ends with ']'"));
        assert!(
            parse_args("f32[N]=ones")
                .unwrap_err()
                .contains("not an initialiser")
        );
        assert!(parse_args("  ").unwrap_err().contains("--args is empty"));
        // A buffer's start value must be a value of its type.
        let bad = |spec: &str| parse_args(spec).unwrap_err();
        assert_eq!(
            bad("i32[N]=1e20"),
            "argument 1 (\"i32[N]=1e20\"): 100000000000000000000 does not fit in i32"
        );
        assert_eq!(
            bad("u32[N]=-1"),
            "argument 1 (\"u32[N]=-1\"): -1 does not fit in u32"
        );
        assert_eq!(
            bad("i32[N]=1.5"),
            "argument 1 (\"i32[N]=1.5\"): 1.5 is not a whole number, as i32 needs"
        );
        assert_eq!(
            bad("f32[N]=1e400"),
            "argument 1 (\"f32[N]=1e400\"): inf is not a finite number"
        );
        assert_eq!(
            bad("f32[N]=1e39"),
            "argument 1 (\"f32[N]=1e39\"): 1000000000000000000000000000000000000000 does not \
             fit in f32"
        );
        assert_eq!(
            bad("i64[N]=9007199254740993"),
            "argument 1 (\"i64[N]=9007199254740993\"): 9007199254740993 is past 2^53, where a \
             buffer's start value is not exact"
        );
        assert!(parse_args("f32[N]=-2.5 i32[N]=-3 u64[N]=9007199254740992").is_ok());
    }

    #[test]
    fn the_spec_must_match_the_signature() {
        let k = kernels_in(SAXPY);
        let p = &k[0].1;
        let ok = parse_args("f32=2 f32[N]=rand f32[N]=rand i32=N").unwrap();
        assert_eq!(match_signature("saxpy", p, &ok), Ok(()));
        let short = parse_args("f32=2 f32[N]=rand f32[N]=rand").unwrap();
        assert_eq!(
            match_signature("saxpy", p, &short).unwrap_err(),
            "saxpy takes 4 parameter(s) (float a, const float *__restrict__ x, float *y, int n) \
             but --args describes 3"
        );
        let swapped = parse_args("f32[N]=rand f32[N]=rand f32[N]=rand i32=N").unwrap();
        assert_eq!(
            match_signature("saxpy", p, &swapped).unwrap_err(),
            "parameter 1 of saxpy (float a) is a scalar but --args gives a buffer (f32[N]=rand)"
        );
        let unknown = kernels_in(
            "struct S { float a, b; };\n\
             extern \"C\" __global__ void ks(S s, float2 v, float *x) {}\n\
             #define ARGS float *x, int n\n\
             __global__ void km(ARGS) {}\n\
             __global__ void kd(float **x, int n = 5) {}",
        );
        let two = parse_args("f32=1 f32=1 f32[N]=0").unwrap();
        assert_eq!(
            match_signature("ks", &unknown[0].1, &two).unwrap_err(),
            "parameter 1 of ks (S s) is passed by value as a type --args cannot describe: use \
             f32, f64, i32, u32, i64, u64 or a pointer (pass a struct's fields as separate \
             parameters)"
        );
        assert_eq!(
            match_signature("km", &unknown[1].1, &two[..1]).unwrap_err(),
            "cannot read the parameters of km: (ARGS) is not a declaration (a macro?); write the \
             parameter list out"
        );
        let kd = parse_args("f32[N]=0 i32=N").unwrap();
        assert_eq!(match_signature("kd", &unknown[2].1, &kd), Ok(()));
        let wrong = parse_args("f32=2 f64[N]=rand f32[N]=rand i32=N").unwrap();
        assert!(
            match_signature("saxpy", p, &wrong)
                .unwrap_err()
                .contains("is f32 but --args gives f64")
        );
    }
}
