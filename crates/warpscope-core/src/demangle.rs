//! Demangling kernel names, bounded: an Itanium C++ name (`_Z...`) from a file becomes its
//! readable form, but a name whose demangled form would explode (back-references make it grow
//! exponentially with the input) is left as it is, so that one hostile name cannot take the
//! time or memory of a whole import.

use std::fmt::{self, Write};

/// Mangled names longer than this are not demangled (real kernel names stay far below it).
const MAX_MANGLED_BYTES: usize = 16 << 10;

/// Demangled forms longer than this are given up on.
const MAX_DEMANGLED_BYTES: usize = 64 << 10;

/// The demangled form of `raw` if it is an Itanium C++ name that `cpp_demangle` understands and
/// whose demangled form stays under 64 KiB; `None` otherwise (plain C names, failures, names
/// too long or that would demangle to something too long).
pub fn demangle(raw: &str) -> Option<String> {
    if !raw.starts_with("_Z") || raw.len() > MAX_MANGLED_BYTES {
        return None;
    }
    let symbol = cpp_demangle::Symbol::new(raw.as_bytes()).ok()?;
    let mut out = Bounded(String::new());
    symbol
        .structured_demangle(&mut out, &cpp_demangle::DemangleOptions::default())
        .ok()?;
    Some(out.0).filter(|d| !d.is_empty())
}

/// A `String` that refuses to grow past [`MAX_DEMANGLED_BYTES`], ending the formatting.
struct Bounded(String);

impl Write for Bounded {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.0.len() + s.len() > MAX_DEMANGLED_BYTES {
            return Err(fmt::Error);
        }
        self.0.push_str(s);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn itanium_names_demangle_and_others_do_not() {
        assert_eq!(demangle("_Z3fooi").as_deref(), Some("foo(int)"));
        assert_eq!(
            demangle("_Z6kernelPfS_i").as_deref(),
            Some("kernel(float*, float*, int)")
        );
        assert_eq!(demangle("_Znot a symbol"), None);
        assert_eq!(demangle("volta_sgemm_128x64_nn"), None);
    }

    /// A substitution reference, `S_`, `S0_`, `S1_`, ... (base 36).
    fn substitution(n: usize) -> String {
        if n == 0 {
            return "S_".to_string();
        }
        let digits = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        let (mut n, mut s) = (n - 1, Vec::new());
        loop {
            s.push(digits[n % 36]);
            n /= 36;
            if n == 0 {
                break;
            }
        }
        s.reverse();
        format!("S{}_", String::from_utf8_lossy(&s))
    }

    #[test]
    fn a_name_that_would_demangle_to_megabytes_is_left_alone() {
        // `f<pair<A, A>, pair<S2, S2>, pair<S3, S3>, ...>`: every argument repeats the ones
        // before it through back-references, so the demangled form grows by about half with
        // each one: 14 KB for 16 of them, hundreds of megabytes for 40, from 460 bytes.
        let mut name = String::from("_Z1fI4pairI1AS1_E");
        for i in 2..42 {
            let s = substitution(i);
            name.push_str(&format!("S0_I{s}{s}E"));
        }
        name.push_str("Evv");
        assert!(name.len() < 1000);
        assert_eq!(demangle(&name), None);
        // A smaller one of the same shape still demangles.
        assert_eq!(
            demangle("_Z1fI4pairI1AS1_ES0_IS1_S1_EEvv").as_deref(),
            Some("void f<pair<A, A>, pair<A, A> >()")
        );
    }
}
