//! Size expressions of a user kernel: `N`, `N*N`, `N/2`, `(N+B-1)/B`, `3*N*4`, `-2.5`. Numbers,
//! the problem size `N`, the threads per block `B`, `+ - * /` with C's precedence, unary minus
//! and parentheses. Lengths, grids and integer scalars are computed in whole numbers (C's integer
//! division, rounding toward zero), exactly and checked at every step, so an overflow, a fraction
//! or a division by zero is an error that names the expression instead of a wrong launch; float
//! scalars, `--bytes` and `--flops` in real numbers.

use std::fmt;

/// The longest expression accepted, in bytes.
pub const MAX_LEN: usize = 1024;
/// The deepest nesting of parentheses accepted.
pub const MAX_DEPTH: usize = 32;

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    text: String,
    node: Node,
}

#[derive(Clone, Debug, PartialEq)]
enum Node {
    /// A number: its real value, and its exact whole value when it has one.
    Num(f64, Option<i128>),
    N,
    B,
    Neg(Box<Node>),
    Bin(Box<Node>, Op, Box<Node>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

/// What an expression's variables stand for at one point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vars {
    /// The problem size.
    pub n: u64,
    /// Threads per block (x).
    pub b: u64,
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Expr {
    /// Parses `text`; the error says where it stopped making sense.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.len() > MAX_LEN {
            return Err(format!(
                "an expression of {} bytes is too long (at most {MAX_LEN})",
                text.len()
            ));
        }
        let tokens = tokenize(text)?;
        let mut p = Parser {
            tokens,
            pos: 0,
            depth: 0,
        };
        let node = p.sum()?;
        if p.pos < p.tokens.len() {
            return Err(format!(
                "cannot read {text:?}: unexpected {:?}",
                p.tokens[p.pos].text()
            ));
        }
        Ok(Self {
            text: text.trim().to_string(),
            node,
        })
    }

    /// The value in whole numbers (C's integer division), or why there is none.
    pub fn eval_u64(&self, vars: Vars) -> Result<u64, String> {
        let v = self.eval_int(vars)?;
        u64::try_from(v).map_err(|_| {
            self.not_computed(
                vars,
                &if v < 0 {
                    format!("it is negative ({v})")
                } else {
                    format!("{v} is past 2^64")
                },
            )
        })
    }

    /// The exact value in whole numbers (C's integer division, rounding toward zero), or why
    /// there is none; the caller checks the range of its type.
    pub fn eval_int(&self, vars: Vars) -> Result<i128, String> {
        eval_int(&self.node, vars).map_err(|why| self.not_computed(vars, why))
    }

    fn not_computed(&self, vars: Vars, why: &str) -> String {
        format!(
            "{} cannot be computed at N = {}, B = {}: {why}",
            self.text, vars.n, vars.b
        )
    }

    /// The value as a real number (for `--bytes`, `--flops` and float scalars).
    pub fn eval_f64(&self, vars: Vars) -> Result<f64, String> {
        let v = eval_real(&self.node, vars);
        if v.is_finite() {
            Ok(v)
        } else {
            Err(format!(
                "{} is not a finite number at N = {}, B = {}",
                self.text, vars.n, vars.b
            ))
        }
    }
}

/// Exact integer arithmetic; the parser's limits keep the recursion shallow (at most
/// [`MAX_LEN`] / 2 levels).
fn eval_int(node: &Node, vars: Vars) -> Result<i128, &'static str> {
    const OVERFLOW: &str = "it overflows";
    match node {
        Node::Num(_, int) => {
            int.ok_or("it has a fraction (lengths, grids and integers take whole numbers)")
        }
        Node::N => Ok(i128::from(vars.n)),
        Node::B => Ok(i128::from(vars.b)),
        Node::Neg(a) => eval_int(a, vars)?.checked_neg().ok_or(OVERFLOW),
        Node::Bin(a, op, b) => {
            let (a, b) = (eval_int(a, vars)?, eval_int(b, vars)?);
            match op {
                Op::Add => a.checked_add(b).ok_or(OVERFLOW),
                Op::Sub => a.checked_sub(b).ok_or(OVERFLOW),
                Op::Mul => a.checked_mul(b).ok_or(OVERFLOW),
                Op::Div if b == 0 => Err("it divides by zero"),
                Op::Div => a.checked_div(b).ok_or(OVERFLOW),
            }
        }
    }
}

fn eval_real(node: &Node, vars: Vars) -> f64 {
    match node {
        Node::Num(v, _) => *v,
        Node::N => vars.n as f64,
        Node::B => vars.b as f64,
        Node::Neg(a) => -eval_real(a, vars),
        Node::Bin(a, op, b) => {
            let (a, b) = (eval_real(a, vars), eval_real(b, vars));
            match op {
                Op::Add => a + b,
                Op::Sub => a - b,
                Op::Mul => a * b,
                Op::Div => a / b,
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Num(f64, Option<i128>),
    Var(char),
    Op(char),
}

impl Token {
    fn text(&self) -> String {
        match self {
            Self::Num(v, _) => v.to_string(),
            Self::Var(c) | Self::Op(c) => c.to_string(),
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric()
                    || chars[i] == '.'
                    || ((chars[i] == '-' || chars[i] == '+')
                        && matches!(chars[i - 1], 'e' | 'E')
                        && chars[start..i]
                            .iter()
                            .all(|c| c.is_ascii_digit() || *c == '.' || *c == 'e' || *c == 'E')))
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let (real, int) = number(&word).ok_or_else(|| {
                format!("cannot read {text:?}: {word:?} is not a number (1000, 1e6, 4K, 2M, 1Ki)")
            })?;
            out.push(Token::Num(real, int));
        } else if c == 'N' || c == 'B' {
            out.push(Token::Var(c));
            i += 1;
        } else if "+-*/()".contains(c) {
            out.push(Token::Op(c));
            i += 1;
        } else {
            return Err(format!(
                "cannot read {text:?}: {c:?} is not allowed (use numbers, N, B, + - * / and \
                 parentheses)"
            ));
        }
    }
    if out.is_empty() {
        return Err("an empty expression".into());
    }
    Ok(out)
}

/// A number with an optional K/M/G (powers of 1000) or Ki/Mi/Gi (powers of 1024) suffix: its
/// real value, and its exact whole value when it has one (digits are read exactly, past 2^53
/// too).
fn number(word: &str) -> Option<(f64, Option<i128>)> {
    let (digits, factor) = [
        ("Ki", 1u64 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("K", 1000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
    ]
    .iter()
    .find_map(|&(s, f)| word.strip_suffix(s).map(|d| (d, f)))
    .unwrap_or((word, 1));
    let v: f64 = digits.parse().ok()?;
    let real = v * factor as f64;
    if !real.is_finite() {
        return None;
    }
    let int = if digits.bytes().all(|b| b.is_ascii_digit()) {
        digits
            .parse::<i128>()
            .ok()
            .and_then(|d| d.checked_mul(i128::from(factor)))
    } else if real.fract() == 0.0 && real.abs() < 1e38 {
        // A whole float (1e6, 2.5K) is exactly that integer.
        Some(real as i128)
    } else {
        None
    };
    Some((real, int))
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    /// Parentheses open at `pos` (the parser recurses once per level).
    depth: usize,
}

impl Parser {
    fn peek_op(&self) -> Option<char> {
        match self.tokens.get(self.pos) {
            Some(Token::Op(c)) => Some(*c),
            _ => None,
        }
    }

    fn sum(&mut self) -> Result<Node, String> {
        let mut left = self.product()?;
        while let Some(c @ ('+' | '-')) = self.peek_op() {
            self.pos += 1;
            let right = self.product()?;
            let op = if c == '+' { Op::Add } else { Op::Sub };
            left = Node::Bin(Box::new(left), op, Box::new(right));
        }
        Ok(left)
    }

    fn product(&mut self) -> Result<Node, String> {
        let mut left = self.atom()?;
        while let Some(c @ ('*' | '/')) = self.peek_op() {
            self.pos += 1;
            let right = self.atom()?;
            let op = if c == '*' { Op::Mul } else { Op::Div };
            left = Node::Bin(Box::new(left), op, Box::new(right));
        }
        Ok(left)
    }

    fn atom(&mut self) -> Result<Node, String> {
        let token = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        match token {
            Some(Token::Num(v, int)) => Ok(Node::Num(v, int)),
            Some(Token::Var('N')) => Ok(Node::N),
            Some(Token::Var(_)) => Ok(Node::B),
            Some(Token::Op('(')) => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(format!("parentheses nested more than {MAX_DEPTH} deep"));
                }
                let inner = self.sum()?;
                self.depth -= 1;
                if self.peek_op() != Some(')') {
                    return Err("a '(' without its ')'".into());
                }
                self.pos += 1;
                Ok(inner)
            }
            Some(Token::Op(c @ ('-' | '+'))) => {
                // Unary minus (and plus) nest like parentheses.
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(format!("parentheses nested more than {MAX_DEPTH} deep"));
                }
                let inner = self.atom()?;
                self.depth -= 1;
                Ok(if c == '-' {
                    Node::Neg(Box::new(inner))
                } else {
                    inner
                })
            }
            Some(t) => Err(format!("unexpected {:?}", t.text())),
            None => Err("the expression ends too early".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, n: u64) -> Result<u64, String> {
        Expr::parse(text)?.eval_u64(Vars { n, b: 256 })
    }

    #[test]
    fn expressions_follow_c_precedence_and_integer_division() {
        assert_eq!(at("N", 1000), Ok(1000));
        assert_eq!(at("N*N", 1024), Ok(1_048_576));
        assert_eq!(at("N/2", 7), Ok(3));
        assert_eq!(at("2+3*N", 10), Ok(32));
        assert_eq!(at("(2+3)*N", 10), Ok(50));
        assert_eq!(at("(N+B-1)/B", 1000), Ok(4));
        assert_eq!(at("4K", 0), Ok(4000));
        assert_eq!(at("1Ki*N", 2), Ok(2048));
        assert_eq!(at("1e6", 0), Ok(1_000_000));
        let e = Expr::parse("2.5*N").unwrap();
        assert_eq!(e.eval_f64(Vars { n: 4, b: 1 }), Ok(10.0));
    }

    #[test]
    fn bad_expressions_say_why() {
        assert!(Expr::parse("N*").unwrap_err().contains("ends too early"));
        assert!(Expr::parse("(N+1").unwrap_err().contains("without its ')'"));
        assert!(
            Expr::parse("M*N")
                .unwrap_err()
                .contains("'M' is not allowed")
        );
        assert!(Expr::parse("N N").unwrap_err().contains("unexpected \"N\""));
        assert!(Expr::parse("").is_err());
        let err = at("N-2000", 1000).unwrap_err();
        assert!(err.contains("cannot be computed at N = 1000"), "{err}");
        assert!(at("N/0", 5).is_err());
        assert!(at("N*N*N*N*N", 1 << 20).is_err());
        assert!(at("N/2.5", 5).is_err());
    }

    #[test]
    fn unary_minus_and_exact_integers() {
        let v = Vars { n: 1000, b: 128 };
        assert_eq!(Expr::parse("-2.5").unwrap().eval_f64(v), Ok(-2.5));
        assert_eq!(Expr::parse("2*-N").unwrap().eval_f64(v), Ok(-2000.0));
        assert_eq!(Expr::parse("-(N-1)").unwrap().eval_int(v), Ok(-999));
        // C's integer division rounds toward zero.
        assert_eq!(Expr::parse("N/3").unwrap().eval_int(v), Ok(333));
        assert_eq!(Expr::parse("-N/3").unwrap().eval_int(v), Ok(-333));
        // Past 2^53, digits are kept exactly.
        assert_eq!(
            Expr::parse("9007199254740993").unwrap().eval_int(v),
            Ok(9_007_199_254_740_993)
        );
        assert_eq!(
            Expr::parse("(N+B-1)/B").unwrap().eval_u64(v),
            Ok(8),
            "B is the block's threads"
        );
        assert_eq!(
            Expr::parse("N-2000").unwrap().eval_u64(v).unwrap_err(),
            "N-2000 cannot be computed at N = 1000, B = 128: it is negative (-1000)"
        );
        assert_eq!(
            Expr::parse("N/(B-B)").unwrap().eval_u64(v).unwrap_err(),
            "N/(B-B) cannot be computed at N = 1000, B = 128: it divides by zero"
        );
        assert_eq!(
            Expr::parse("N/2.5").unwrap().eval_int(v).unwrap_err(),
            "N/2.5 cannot be computed at N = 1000, B = 128: it has a fraction (lengths, grids \
             and integers take whole numbers)"
        );
        assert!(Expr::parse("-").unwrap_err().contains("ends too early"));
    }

    #[test]
    fn long_or_deep_expressions_are_refused_not_a_crash() {
        let deep = format!("{}N{}", "(".repeat(5000), ")".repeat(5000));
        assert_eq!(
            Expr::parse(&deep).unwrap_err(),
            "an expression of 10001 bytes is too long (at most 1024)"
        );
        let long = format!("1{}", "*1".repeat(60_000));
        assert!(Expr::parse(&long).unwrap_err().contains("too long"));
        let nested = format!("{}N{}", "(".repeat(33), ")".repeat(33));
        assert_eq!(
            Expr::parse(&nested).unwrap_err(),
            "parentheses nested more than 32 deep"
        );
        // The most the limits allow still parses and evaluates (a chain of 511 products, and
        // 32 levels of parentheses).
        let chain = format!("N{}", "*1".repeat(511));
        assert_eq!(at(&chain, 7), Ok(7));
        let ok = format!("{}N{}", "(".repeat(32), ")".repeat(32));
        assert_eq!(at(&ok, 7), Ok(7));
    }
}
