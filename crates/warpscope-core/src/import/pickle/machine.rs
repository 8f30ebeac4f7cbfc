//! The pickle machine: runs the opcodes over the stack, the marks and the memo, building the
//! arenas of a [`Pickle`].

use rustc_hash::FxHashMap;

use super::packed::{
    Packed, T_BIG, T_BYTES, T_DICT, T_FLOAT, T_FROZENSET, T_LIST, T_SET, T_STR, T_TUPLE, T_WIDE,
};

use super::{
    MAX_LONG_BYTES, MAX_MARK_DEPTH, MAX_TEXT_LINE, Pickle, PickleError, PickleErrorKind,
    decimal_le, opcode_name,
};

/// Runs the machine over `data`.
pub(super) fn run(data: &[u8]) -> Result<Pickle, PickleError> {
    let mut m = Machine {
        data,
        pos: 0,
        op_at: 0,
        op_code: 0,
        stack: Vec::with_capacity(64),
        marks: Vec::with_capacity(16),
        memo: Vec::new(),
        sparse_memo: FxHashMap::default(),
        out: Pickle::default(),
    };
    m.run()?;
    Ok(m.out)
}

/// The pickle machine.
struct Machine<'a> {
    data: &'a [u8],
    pos: usize,
    /// Offset and name of the opcode being run, for errors.
    op_at: usize,
    op_code: u8,
    stack: Vec<Packed>,
    /// Stack lengths at each open `MARK`.
    marks: Vec<usize>,
    /// Memo entries 0..n stored in order (all of them, in pickles Python writes).
    memo: Vec<Packed>,
    /// Memo entries at other indices.
    sparse_memo: FxHashMap<u64, Packed>,
    out: Pickle,
}

/// Converts an arena length to the next index.
fn index(len: usize) -> Result<u32, PickleErrorKind> {
    u32::try_from(len).map_err(|_| PickleErrorKind::TooManyValues)
}

impl<'a> Machine<'a> {
    fn err(&self, kind: PickleErrorKind) -> PickleError {
        PickleError {
            offset: self.op_at as u64,
            kind,
        }
    }

    /// The name of the opcode being run.
    fn op(&self) -> &'static str {
        opcode_name(self.op_code)
    }

    fn truncated(&self) -> PickleError {
        self.err(PickleErrorKind::Truncated { opcode: self.op() })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], PickleError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| self.truncated())?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn take_array<const N: usize>(&mut self) -> Result<[u8; N], PickleError> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn u8_arg(&mut self) -> Result<u8, PickleError> {
        Ok(self.take_array::<1>()?[0])
    }

    fn u32_arg(&mut self) -> Result<u32, PickleError> {
        Ok(u32::from_le_bytes(self.take_array()?))
    }

    fn u64_arg(&mut self) -> Result<u64, PickleError> {
        Ok(u64::from_le_bytes(self.take_array()?))
    }

    /// A length argument, which must fit in the bytes left.
    fn len_arg(&mut self, n: u64) -> Result<usize, PickleError> {
        let left = (self.data.len() - self.pos) as u64;
        if n > left {
            return Err(self.truncated());
        }
        usize::try_from(n).map_err(|_| self.truncated())
    }

    /// The text up to the next newline (protocol 0 opcodes), without it.
    fn line(&mut self) -> Result<&'a str, PickleError> {
        let data = self.data;
        let rest = &data[self.pos..];
        let Some(n) = rest
            .iter()
            .take(MAX_TEXT_LINE + 1)
            .position(|&b| b == b'\n')
        else {
            if rest.len() <= MAX_TEXT_LINE {
                return Err(self.truncated());
            }
            return Err(self.bad("line longer than 64 bytes"));
        };
        self.pos += n + 1;
        std::str::from_utf8(&rest[..n]).map_err(|_| self.bad("text is not ASCII"))
    }

    fn bad(&self, what: &str) -> PickleError {
        self.err(PickleErrorKind::BadArgument {
            opcode: self.op(),
            what: what.to_string(),
        })
    }

    fn push(&mut self, v: Packed) {
        self.stack.push(v);
    }

    fn pop(&mut self) -> Result<Packed, PickleError> {
        // Values above the last MARK only.
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.err(PickleErrorKind::StackUnderflow { opcode: self.op() }));
        }
        self.stack
            .pop()
            .ok_or_else(|| self.err(PickleErrorKind::StackUnderflow { opcode: self.op() }))
    }

    fn top(&self) -> Result<Packed, PickleError> {
        let floor = self.marks.last().copied().unwrap_or(0);
        match self.stack.last() {
            Some(&v) if self.stack.len() > floor => Ok(v),
            _ => Err(self.err(PickleErrorKind::StackUnderflow { opcode: self.op() })),
        }
    }

    /// Closes the last `MARK`: the stack index where its items start.
    fn pop_mark(&mut self) -> Result<usize, PickleError> {
        self.marks
            .pop()
            .ok_or_else(|| self.err(PickleErrorKind::NoMark { opcode: self.op() }))
    }

    fn new_str(&mut self, raw: &[u8]) -> Result<Packed, PickleError> {
        let s: Box<str> = match std::str::from_utf8(raw) {
            Ok(s) => s.into(),
            Err(_) => {
                self.out.lossy_strings += 1;
                String::from_utf8_lossy(raw).into()
            }
        };
        let i = index(self.out.strs.len()).map_err(|k| self.err(k))?;
        self.out.strs.push(s);
        Ok(Packed::at(T_STR, i))
    }

    fn new_bytes(&mut self, raw: &[u8]) -> Result<Packed, PickleError> {
        let i = index(self.out.bytes.len()).map_err(|k| self.err(k))?;
        self.out.bytes.push(raw.into());
        Ok(Packed::at(T_BYTES, i))
    }

    /// An integer: inline if it fits 60 bits, else in the arena of wide integers.
    fn int(&mut self, i: i64) -> Result<Packed, PickleError> {
        if let Some(p) = Packed::small_int(i) {
            return Ok(p);
        }
        let at = index(self.out.wide_ints.len()).map_err(|k| self.err(k))?;
        self.out.wide_ints.push(i);
        Ok(Packed::at(T_WIDE, at))
    }

    fn float(&mut self, f: f64) -> Result<Packed, PickleError> {
        let at = index(self.out.floats.len()).map_err(|k| self.err(k))?;
        self.out.floats.push(f);
        Ok(Packed::at(T_FLOAT, at))
    }

    fn too_many(&self) -> PickleError {
        self.err(PickleErrorKind::TooManyValues)
    }

    /// A new sequence of the stack's values from `at` up (which leave the stack).
    fn new_seq(&mut self, at: usize) -> Result<u32, PickleError> {
        let Machine { stack, out, .. } = self;
        let id = out.seqs.push(stack.drain(at..));
        id.ok_or_else(|| self.too_many())
    }

    /// A new dict of the stack's values from `at` up, taken as key, value, key, value...
    fn new_dict(&mut self, at: usize) -> Result<Packed, PickleError> {
        if !(self.stack.len() - at).is_multiple_of(2) {
            return Err(self.bad("odd number of items (a key without its value)"));
        }
        let Machine { stack, out, .. } = self;
        let id = out
            .dicts
            .push(stack[at..].chunks_exact(2).map(|p| (p[0], p[1])));
        stack.truncate(at);
        id.map(|i| Packed::at(T_DICT, i))
            .ok_or_else(|| self.too_many())
    }

    /// An integer from little-endian two's-complement bytes (`LONG1`, `LONG4`).
    fn new_long(&mut self, le: &[u8]) -> Result<Packed, PickleError> {
        if le.is_empty() {
            return self.int(0);
        }
        let negative = le[le.len() - 1] & 0x80 != 0;
        let fill = if negative { 0xff } else { 0 };
        let (low, high) = le.split_at(le.len().min(8));
        let mut buf = [fill; 8];
        buf[..low.len()].copy_from_slice(low);
        let v = i64::from_le_bytes(buf);
        // It fits when the bytes past the eighth only repeat the sign.
        if high.iter().all(|&b| b == fill) && (v < 0) == negative {
            return self.int(v);
        }
        let i = index(self.out.bigints.len()).map_err(|k| self.err(k))?;
        self.out.bigints.push(le.into());
        Ok(Packed::at(T_BIG, i))
    }

    fn memo_put(&mut self, idx: u64, v: Packed) {
        let dense = self.memo.len() as u64;
        if idx < dense {
            self.memo[idx as usize] = v;
        } else if idx == dense {
            self.memo.push(v);
            if !self.sparse_memo.is_empty() {
                self.sparse_memo.remove(&idx);
            }
        } else {
            self.sparse_memo.insert(idx, v);
        }
    }

    fn memo_get(&mut self, idx: u64) -> Result<(), PickleError> {
        // The dense memo first, copied straight onto the stack.
        if let Some(v) = usize::try_from(idx).ok().and_then(|i| self.memo.get(i)) {
            self.stack.push(*v);
            return Ok(());
        }
        if let Some(v) = self.sparse_memo.get(&idx) {
            self.stack.push(*v);
            return Ok(());
        }
        Err(self.err(PickleErrorKind::MemoMissing {
            opcode: self.op(),
            index: idx,
        }))
    }

    fn run(&mut self) -> Result<(), PickleError> {
        loop {
            let Some(&code) = self.data.get(self.pos) else {
                return Err(PickleError {
                    offset: self.data.len() as u64,
                    kind: PickleErrorKind::NoStop,
                });
            };
            self.op_at = self.pos;
            self.op_code = code;
            self.pos += 1;
            if code == b'.' {
                let root = self.pop()?;
                self.out.root = root;
                self.out.trailing_bytes = (self.data.len() - self.pos) as u64;
                return Ok(());
            }
            self.step(code)?;
        }
    }

    /// Runs one opcode (not `STOP`).
    fn step(&mut self, code: u8) -> Result<(), PickleError> {
        match code {
            // Framing and protocol.
            0x80 => {
                let p = self.u8_arg()?;
                if p > 5 {
                    return Err(self.err(PickleErrorKind::Protocol(p)));
                }
                self.out.protocol = self.out.protocol.max(p);
            }
            0x95 => {
                let n = self.u64_arg()?;
                self.len_arg(n)?;
            }
            // Memo.
            0x94 => {
                let v = self.top()?;
                let idx = self.memo.len() as u64 + self.sparse_memo.len() as u64;
                self.memo_put(idx, v);
            }
            b'q' => {
                let i = self.u8_arg()?;
                let v = self.top()?;
                self.memo_put(u64::from(i), v);
            }
            b'r' => {
                let i = self.u32_arg()?;
                let v = self.top()?;
                self.memo_put(u64::from(i), v);
            }
            b'p' => {
                let i = self.text_index()?;
                let v = self.top()?;
                self.memo_put(i, v);
            }
            b'h' => {
                let i = self.u8_arg()?;
                self.memo_get(u64::from(i))?;
            }
            b'j' => {
                let i = self.u32_arg()?;
                self.memo_get(u64::from(i))?;
            }
            b'g' => {
                let i = self.text_index()?;
                self.memo_get(i)?;
            }
            // Stack.
            b'(' => {
                if self.marks.len() >= MAX_MARK_DEPTH {
                    return Err(self.err(PickleErrorKind::TooDeep));
                }
                self.marks.push(self.stack.len());
            }
            b'0' => {
                let floor = self.marks.last().copied().unwrap_or(0);
                if self.stack.len() > floor {
                    self.stack.pop();
                } else {
                    let at = self.pop_mark()?;
                    self.stack.truncate(at);
                }
            }
            b'1' => {
                let at = self.pop_mark()?;
                self.stack.truncate(at);
            }
            b'2' => {
                let v = self.top()?;
                self.push(v);
            }
            _ => self.step_value(code)?,
        }
        Ok(())
    }

    /// Runs an opcode that makes or fills a value.
    fn step_value(&mut self, code: u8) -> Result<(), PickleError> {
        let v = match code {
            b'N' => Packed::NONE,
            0x88 => Packed::bool(true),
            0x89 => Packed::bool(false),
            b'K' => {
                let i = self.u8_arg()?;
                self.int(i64::from(i))?
            }
            b'M' => {
                let i = u16::from_le_bytes(self.take_array()?);
                self.int(i64::from(i))?
            }
            b'J' => {
                let i = i32::from_le_bytes(self.take_array()?);
                self.int(i64::from(i))?
            }
            0x8a => {
                let n = usize::from(self.u8_arg()?);
                let le = self.take(n)?;
                self.new_long(le)?
            }
            0x8b => {
                let n = i32::from_le_bytes(self.take_array()?);
                let n = u64::try_from(n).map_err(|_| self.bad("negative byte count"))?;
                if n > MAX_LONG_BYTES as u64 {
                    return Err(self.err(PickleErrorKind::IntTooLarge {
                        opcode: self.op(),
                        bytes: n,
                    }));
                }
                let n = self.len_arg(n)?;
                let le = self.take(n)?;
                self.new_long(le)?
            }
            b'I' => self.text_int(true)?,
            b'L' => self.text_int(false)?,
            b'G' => {
                let f = f64::from_be_bytes(self.take_array()?);
                self.float(f)?
            }
            b'F' => {
                let line = self.line()?.trim();
                match line.parse::<f64>() {
                    Ok(f) => self.float(f)?,
                    Err(_) => return Err(self.bad("not a float")),
                }
            }
            // Strings.
            0x8c | b'X' | 0x8d => {
                let n = match code {
                    0x8c => u64::from(self.u8_arg()?),
                    b'X' => u64::from(self.u32_arg()?),
                    _ => self.u64_arg()?,
                };
                let n = self.len_arg(n)?;
                let raw = self.take(n)?;
                self.new_str(raw)?
            }
            b'U' | b'T' => {
                // Python 2 `str`: read as text where it is UTF-8 (Python 3 decodes it too).
                let n = if code == b'U' {
                    u64::from(self.u8_arg()?)
                } else {
                    let n = i32::from_le_bytes(self.take_array()?);
                    u64::try_from(n).map_err(|_| self.bad("negative length"))?
                };
                let n = self.len_arg(n)?;
                let raw = self.take(n)?;
                if std::str::from_utf8(raw).is_ok() {
                    self.new_str(raw)?
                } else {
                    self.new_bytes(raw)?
                }
            }
            b'C' | b'B' | 0x8e | 0x96 => {
                let n = match code {
                    b'C' => u64::from(self.u8_arg()?),
                    b'B' => u64::from(self.u32_arg()?),
                    _ => self.u64_arg()?,
                };
                let n = self.len_arg(n)?;
                let raw = self.take(n)?;
                self.new_bytes(raw)?
            }
            0x98 => return self.top().map(|_| ()),
            // Containers.
            b']' => Packed::at(T_LIST, self.new_seq(self.stack.len())?),
            b')' => Packed::at(T_TUPLE, self.new_seq(self.stack.len())?),
            b'}' => self.new_dict(self.stack.len())?,
            0x8f => Packed::at(T_SET, self.new_seq(self.stack.len())?),
            0x85..=0x87 => {
                let n = usize::from(code - 0x84);
                let floor = self.marks.last().copied().unwrap_or(0);
                if self.stack.len() < floor + n {
                    return Err(self.err(PickleErrorKind::StackUnderflow { opcode: self.op() }));
                }
                Packed::at(T_TUPLE, self.new_seq(self.stack.len() - n)?)
            }
            b't' | b'l' | 0x91 => {
                let at = self.pop_mark()?;
                let i = self.new_seq(at)?;
                match code {
                    b't' => Packed::at(T_TUPLE, i),
                    b'l' => Packed::at(T_LIST, i),
                    _ => Packed::at(T_FROZENSET, i),
                }
            }
            b'd' => {
                let at = self.pop_mark()?;
                self.new_dict(at)?
            }
            b'a' | b'e' | 0x90 => return self.append(code),
            b's' | b'u' => return self.set_items(code),
            _ => return Err(self.err(refusal(code))),
        };
        self.push(v);
        Ok(())
    }

    /// The value just below stack index `at` (the list or dict that `APPENDS` or `SETITEMS`
    /// fill), which must lie above the last open `MARK`.
    fn target(&self, at: usize) -> Result<Packed, PickleError> {
        let floor = self.marks.last().copied().unwrap_or(0);
        match at.checked_sub(1).and_then(|i| self.stack.get(i)) {
            Some(&v) if at > floor => Ok(v),
            _ => Err(self.err(PickleErrorKind::StackUnderflow { opcode: self.op() })),
        }
    }

    /// `APPEND`, `APPENDS`, `ADDITEMS`.
    fn append(&mut self, code: u8) -> Result<(), PickleError> {
        let at = if code == b'a' {
            let floor = self.marks.last().copied().unwrap_or(0);
            if self.stack.len() < floor + 2 {
                return Err(self.err(PickleErrorKind::StackUnderflow { opcode: self.op() }));
            }
            self.stack.len() - 1
        } else {
            self.pop_mark()?
        };
        let target = self.target(at)?;
        let (id, expected) = match (code, target.tag()) {
            (0x90, T_SET) | (b'a' | b'e', T_LIST) => (target.index(), ""),
            (0x90, _) => (0, "set"),
            _ => (0, "list"),
        };
        if !expected.is_empty() {
            return Err(self.err(PickleErrorKind::WrongType {
                opcode: self.op(),
                found: self.out.value(target).type_name(),
                expected,
            }));
        }
        let Machine { stack, out, .. } = self;
        let done = out.seqs.extend(id, stack.drain(at..));
        done.ok_or_else(|| self.too_many())
    }

    /// `SETITEM`, `SETITEMS`.
    fn set_items(&mut self, code: u8) -> Result<(), PickleError> {
        let at = if code == b's' {
            let floor = self.marks.last().copied().unwrap_or(0);
            if self.stack.len() < floor + 3 {
                return Err(self.err(PickleErrorKind::StackUnderflow { opcode: self.op() }));
            }
            self.stack.len() - 2
        } else {
            self.pop_mark()?
        };
        let target = self.target(at)?;
        if target.tag() != T_DICT {
            return Err(self.err(PickleErrorKind::WrongType {
                opcode: self.op(),
                found: self.out.value(target).type_name(),
                expected: "dict",
            }));
        }
        let id = target.index();
        if !(self.stack.len() - at).is_multiple_of(2) {
            return Err(self.bad("odd number of items (a key without its value)"));
        }
        let Machine { stack, out, .. } = self;
        let done = out
            .dicts
            .extend(id, stack[at..].chunks_exact(2).map(|p| (p[0], p[1])));
        stack.truncate(at);
        done.ok_or_else(|| self.too_many())
    }

    /// The decimal index of `GET` and `PUT`.
    fn text_index(&mut self) -> Result<u64, PickleError> {
        let line = self.line()?;
        line.trim()
            .parse::<u64>()
            .map_err(|_| self.bad("not a memo index"))
    }

    /// `INT` (`I01`/`I00` are the booleans of protocol 0) and `LONG` (`123L`).
    fn text_int(&mut self, int: bool) -> Result<Packed, PickleError> {
        let line = self.line()?.trim();
        if int && line == "01" {
            return Ok(Packed::bool(true));
        }
        if int && line == "00" {
            return Ok(Packed::bool(false));
        }
        let digits = if int {
            line
        } else {
            line.strip_suffix('L').unwrap_or(line)
        };
        if let Ok(v) = digits.parse::<i64>() {
            return self.int(v);
        }
        let (negative, magnitude) = match digits.strip_prefix('-') {
            Some(m) => (true, m),
            None => (false, digits.strip_prefix('+').unwrap_or(digits)),
        };
        if magnitude.is_empty() || !magnitude.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.bad("not an integer"));
        }
        let le = decimal_le(magnitude, negative);
        self.new_long(&le)
    }
}

/// The error for an opcode not run by [`Machine::step_value`].
fn refusal(code: u8) -> PickleErrorKind {
    let opcode = opcode_name(code);
    let what = match code {
        b'c' | 0x93 => "import a Python object",
        b'R' => "call a Python object",
        b'b' => "call an object's __setstate__",
        b'i' | b'o' | 0x81 | 0x92 => "create an instance of a Python class",
        b'P' | b'Q' => "look up a persistent object (as torch.save does for tensors)",
        0x82..=0x84 => "import an object registered with copyreg",
        b'S' | b'V' => {
            return PickleErrorKind::Unsupported {
                opcode,
                code,
                why: "protocol 0 text strings",
            };
        }
        0x97 => {
            return PickleErrorKind::Unsupported {
                opcode,
                code,
                why: "out-of-band buffers",
            };
        }
        _ => return PickleErrorKind::UnknownOpcode(code),
    };
    PickleErrorKind::Refused { opcode, code, what }
}
