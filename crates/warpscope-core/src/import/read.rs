//! Reading a file's content as a stream: gzip decompression ([`Gunzip`]), and appending to a
//! buffer without zeroing it first ([`AppendRead`]).
//!
//! The decompressor is ours rather than `flate2`'s `MultiGzDecoder` for two costs that showed in
//! profiles of gzip-compressed traces (where both cores of a 2-core machine are already busy
//! parsing, so every CPU cycle the reader thread spends shows in the wall time):
//! - the checksum: `flate2` computes it with the inflater's CRC-32, which runs at about a third of
//!   the speed of `crc32fast`'s;
//! - zeroing: `Read::read_to_end` zeroes the room it reads into, since a plain reader may read
//!   what it is given; [`Gunzip::append`] has the inflater write into the room directly.

use std::io::{self, Read};

use flate2::{Decompress, DecompressError, FlushDecompress, Status};

/// A reader that can append to a vector without zeroing the room first.
pub trait AppendRead: Read {
    /// Appends up to `max` bytes to `buf`, fewer only at the end of the content. Returns how
    /// many were appended. On an error, what was appended before it stays in `buf`.
    fn append(&mut self, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
        (&mut *self).take(max as u64).read_to_end(buf)
    }
}

impl AppendRead for std::fs::File {}
impl AppendRead for &[u8] {}

impl<R: AppendRead + ?Sized> AppendRead for Box<R> {
    fn append(&mut self, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
        (**self).append(buf, max)
    }
}

/// The two bytes every gzip member starts with.
pub(crate) const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// How many compressed bytes are read from the file at once.
const INPUT_BYTES: usize = 128 * 1024;

/// The least a full buffer grows by in [`Gunzip::append`].
const MIN_GROWTH: usize = 64 * 1024;

// Header flags (RFC 1952, section 2.3.1).
const FHCRC: u8 = 1 << 1;
const FEXTRA: u8 = 1 << 2;
const FNAME: u8 = 1 << 3;
const FCOMMENT: u8 = 1 << 4;
const FRESERVED: u8 = 0xe0;

/// Where a [`Gunzip`] is in its stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// A member's header comes next.
    Header,
    /// Inside a member's compressed data.
    Body,
    /// The member's checksum and length come next.
    Trailer,
    /// The last member ended where the input ends.
    End,
    /// The input ended inside a member (where it ended, for the message): every later read
    /// says so again.
    Cut(&'static str),
}

/// Decompresses gzip content (RFC 1952), one member after another as `gzip` and `zcat` do,
/// checking each member's CRC-32 and length. Header fields are skipped whatever their length
/// (the RFC sets none; `flate2` refused file names and comments over 64 KiB).
///
/// Errors are `io::Error`s: [`io::ErrorKind::UnexpectedEof`] where the input ends inside a
/// member (a file cut off while it was written: what came before it was returned, and callers
/// may keep it), [`io::ErrorKind::InvalidData`] for a bad header, corrupt compressed data or a
/// wrong checksum.
pub struct Gunzip<R> {
    inner: R,
    /// Compressed bytes read from `inner`; `input[start..end]` are not consumed yet.
    input: Box<[u8]>,
    start: usize,
    end: usize,
    inflate: Decompress,
    /// CRC-32 and length of the member's decompressed bytes so far.
    crc: crc32fast::Hasher,
    state: State,
}

impl<R: Read> Gunzip<R> {
    /// A decompressor of the gzip content read from `inner`.
    pub fn new(inner: R) -> Self {
        Gunzip {
            inner,
            input: vec![0; INPUT_BYTES].into_boxed_slice(),
            start: 0,
            end: 0,
            inflate: Decompress::new(false),
            crc: crc32fast::Hasher::new(),
            state: State::Header,
        }
    }

    /// Reads more compressed bytes if all were consumed. Returns false at the end of the input.
    fn fill(&mut self) -> io::Result<bool> {
        while self.start == self.end {
            match self.inner.read(&mut self.input) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.start = 0;
                    self.end = n;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// The next `N` compressed bytes, added to `header` (the header's checksum) if given.
    fn next_bytes<const N: usize>(
        &mut self,
        header: Option<&mut crc32fast::Hasher>,
    ) -> io::Result<[u8; N]> {
        let mut bytes = [0u8; N];
        for b in &mut bytes {
            if !self.fill()? {
                return Err(self.cut());
            }
            *b = self.input[self.start];
            self.start += 1;
        }
        if let Some(header) = header {
            header.update(&bytes);
        }
        Ok(bytes)
    }

    /// Skips `n` header bytes.
    fn skip_header_bytes(
        &mut self,
        mut n: usize,
        header: &mut crc32fast::Hasher,
    ) -> io::Result<()> {
        while n > 0 {
            if !self.fill()? {
                return Err(self.cut());
            }
            let k = n.min(self.end - self.start);
            header.update(&self.input[self.start..self.start + k]);
            self.start += k;
            n -= k;
        }
        Ok(())
    }

    /// Skips a zero-terminated header field (a file name or comment), its zero included.
    fn skip_header_text(&mut self, header: &mut crc32fast::Hasher) -> io::Result<()> {
        loop {
            if !self.fill()? {
                return Err(self.cut());
            }
            let held = &self.input[self.start..self.end];
            match memchr::memchr(0, held) {
                Some(k) => {
                    header.update(&held[..=k]);
                    self.start += k + 1;
                    return Ok(());
                }
                None => {
                    header.update(held);
                    self.start = self.end;
                }
            }
        }
    }

    /// Reads a member's header, and starts its compressed data.
    fn read_header(&mut self) -> io::Result<()> {
        let mut header = crc32fast::Hasher::new();
        let fixed: [u8; 10] = self.next_bytes(Some(&mut header))?;
        if fixed[..2] != GZIP_MAGIC {
            return Err(invalid("not a gzip member header (wrong magic bytes)"));
        }
        if fixed[2] != 8 {
            return Err(invalid(format!(
                "compression method {} is not deflate (8)",
                fixed[2]
            )));
        }
        let flags = fixed[3];
        if flags & FRESERVED != 0 {
            return Err(invalid(format!("reserved header flags set ({flags:#04x})")));
        }
        if flags & FEXTRA != 0 {
            let xlen = self.next_bytes(Some(&mut header))?;
            self.skip_header_bytes(u16::from_le_bytes(xlen).into(), &mut header)?;
        }
        if flags & FNAME != 0 {
            self.skip_header_text(&mut header)?;
        }
        if flags & FCOMMENT != 0 {
            self.skip_header_text(&mut header)?;
        }
        if flags & FHCRC != 0 {
            // The low 16 bits of the CRC-32 of the header up to here.
            let expected = header.clone().finalize() as u16;
            if u16::from_le_bytes(self.next_bytes(None)?) != expected {
                return Err(invalid("the header's checksum does not match"));
            }
        }
        self.inflate.reset(false);
        self.crc = crc32fast::Hasher::new();
        self.state = State::Body;
        Ok(())
    }

    /// Reads a member's trailer and checks it. Returns whether another member follows.
    fn read_trailer(&mut self) -> io::Result<bool> {
        let [c0, c1, c2, c3, l0, l1, l2, l3] = self.next_bytes(None)?;
        let crc = std::mem::take(&mut self.crc);
        // The length is stored modulo 2^32.
        if u32::from_le_bytes([l0, l1, l2, l3]) != crc.total_len() as u32 {
            return Err(invalid(
                "the decompressed length does not match the member's trailer",
            ));
        }
        if u32::from_le_bytes([c0, c1, c2, c3]) != crc.finalize() {
            return Err(invalid(
                "the CRC-32 of the decompressed data does not match the member's trailer",
            ));
        }
        self.fill()
    }

    /// The error for input that ends inside a member; later reads return it again.
    fn cut(&mut self) -> io::Error {
        let what = match self.state {
            State::Header => "the file ends inside a gzip header",
            State::Trailer => "the file ends inside a gzip trailer (its checksum and length)",
            State::Body | State::End => "the file ends inside the compressed data",
            State::Cut(what) => what,
        };
        self.state = State::Cut(what);
        io::Error::new(io::ErrorKind::UnexpectedEof, what)
    }

    /// Decompresses with `run`, which gives the inflater the compressed bytes and the room to
    /// write into (`room` bytes of it). Returns how many bytes it wrote (0 only at the end of the
    /// content, or where there is no room); the caller adds them to the member's checksum
    /// before calling again.
    fn inflate_with(
        &mut self,
        room: usize,
        mut run: impl FnMut(&mut Decompress, &[u8]) -> Result<Status, DecompressError>,
    ) -> io::Result<usize> {
        if room == 0 {
            return Ok(0);
        }
        loop {
            match self.state {
                State::Header => self.read_header()?,
                State::Body => {
                    // At the end of the input the inflater is called once more, with nothing:
                    // it may still hold output (bits it took in, the rest of a match that did
                    // not fit the room).
                    let more = self.fill()?;
                    let (in_before, out_before) =
                        (self.inflate.total_in(), self.inflate.total_out());
                    let status = run(&mut self.inflate, &self.input[self.start..self.end])
                        .map_err(|e| invalid(format!("corrupt deflate data: {e}")))?;
                    let consumed = (self.inflate.total_in() - in_before) as usize;
                    let written = (self.inflate.total_out() - out_before) as usize;
                    self.start += consumed;
                    if status == Status::StreamEnd {
                        self.state = State::Trailer;
                    } else if !more && written == 0 {
                        return Err(self.cut());
                    } else if consumed == 0 && written == 0 {
                        // Input and room were both there: an inflater that moves neither would
                        // be called forever.
                        return Err(invalid("corrupt deflate data: no progress"));
                    }
                    if written > 0 {
                        return Ok(written);
                    }
                }
                State::Trailer => {
                    self.state = if self.read_trailer()? {
                        State::Header
                    } else {
                        State::End
                    };
                }
                State::End => return Ok(0),
                State::Cut(_) => return Err(self.cut()),
            }
        }
    }
}

impl<R: Read> Read for Gunzip<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let written = self.inflate_with(buf.len(), |inflate, input| {
            inflate.decompress(input, buf, FlushDecompress::None)
        })?;
        self.crc.update(&buf[..written]);
        Ok(written)
    }
}

impl<R: Read> AppendRead for Gunzip<R> {
    fn append(&mut self, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
        let mut appended = 0;
        while appended < max {
            if buf.capacity() == buf.len() {
                // Grown as the content comes, not to `max` at once: callers may ask for all
                // there is (`usize::MAX`).
                buf.reserve((max - appended).min(buf.len().max(MIN_GROWTH)));
            }
            let len = buf.len();
            let room = (max - appended).min(buf.capacity() - len);
            let spare = &mut buf.spare_capacity_mut()[..room];
            let written = self.inflate_with(room, |inflate, input| {
                inflate.decompress_uninit(input, spare, FlushDecompress::None)
            })?;
            if written == 0 {
                break;
            }
            #[allow(unsafe_code)]
            // SAFETY: the inflater initialized the first `written` bytes of the spare room
            // (`written` is how far its output count moved, at most `room`).
            unsafe {
                buf.set_len(len + written);
            }
            self.crc.update(&buf[len..]);
            appended += written;
        }
        Ok(appended)
    }
}

fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::Compression;
    use flate2::write::GzEncoder;
    use std::io::Write;

    /// `n` lines of JSON-like text with pseudo-random ids, so that it compresses about 3:1.
    fn text(n: usize) -> Vec<u8> {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        (0..n)
            .flat_map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                format!("{{\"ts\": {i}, \"id\": \"{x:016x}\"}},\n").into_bytes()
            })
            .collect()
    }

    fn gzip_member(data: &[u8], builder: flate2::GzBuilder) -> Vec<u8> {
        let mut e = builder.write(Vec::new(), Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// Everything `Gunzip` gives through `append` with `max` bytes at a time.
    fn appended(gz: &[u8], max: usize) -> io::Result<Vec<u8>> {
        let mut g = Gunzip::new(gz);
        let mut out = Vec::new();
        while g.append(&mut out, max)? > 0 {}
        Ok(out)
    }

    /// Everything `Gunzip` gives through `read` with a buffer of `size` bytes.
    fn read_all(gz: &[u8], size: usize) -> io::Result<Vec<u8>> {
        let mut g = Gunzip::new(gz);
        let mut out = Vec::new();
        let mut buf = vec![0u8; size];
        loop {
            match g.read(&mut buf)? {
                0 => return Ok(out),
                n => out.extend_from_slice(&buf[..n]),
            }
        }
    }

    #[test]
    fn appending_and_reading_give_the_content_in_any_piece_size() {
        let data = text(60_000);
        let gz = gzip(&data);
        assert!(gz.len() > 2 * INPUT_BYTES, "the input spans several reads");
        for max in [1, 7, 4096, 1 << 20, usize::MAX] {
            assert_eq!(appended(&gz, max).unwrap(), data, "append {max}");
        }
        for size in [1, 13, 65_536, 3 << 20] {
            assert_eq!(read_all(&gz, size).unwrap(), data, "read {size}");
        }
    }

    #[test]
    fn append_stops_at_max_and_keeps_what_the_buffer_held() {
        let data = text(10_000);
        let gz = gzip(&data);
        let mut g = Gunzip::new(&gz[..]);
        let mut out = b"held".to_vec();
        assert_eq!(g.append(&mut out, 1000).unwrap(), 1000);
        assert_eq!(out.len(), 1004);
        // A buffer with room beyond `max` is not filled past it.
        out.reserve(1 << 20);
        assert_eq!(g.append(&mut out, 10).unwrap(), 10);
        assert_eq!(&out[..4], b"held");
        assert_eq!(&out[4..], &data[..1010]);
        assert_eq!(g.append(&mut out, 0).unwrap(), 0);
    }

    #[test]
    fn members_follow_one_another_whatever_their_header_fields() {
        let (a, b, c) = (text(3000), text(10), Vec::new());
        let mut gz = gzip(&a);
        gz.extend(gzip_member(
            &b,
            flate2::GzBuilder::new()
                .filename("trace.json")
                .comment("a comment")
                .extra(vec![7; 300]),
        ));
        gz.extend(gzip(&c));
        let whole: Vec<u8> = [a, b, c].concat();
        assert_eq!(appended(&gz, 1 << 16).unwrap(), whole);
        assert_eq!(read_all(&gz, 100).unwrap(), whole);
    }

    /// Sets FHCRC in a member's header (10 bytes, no other fields) and inserts its checksum.
    fn with_header_crc(gz: &[u8], crc: u16) -> Vec<u8> {
        let mut out = gz[..10].to_vec();
        out[3] |= FHCRC;
        out.extend(crc.to_le_bytes());
        out.extend(&gz[10..]);
        out
    }

    #[test]
    fn a_header_checksum_is_checked() {
        let data = text(100);
        let gz = gzip(&data);
        assert_eq!(gz[3], 0, "no header fields");
        let mut header = gz[..10].to_vec();
        header[3] |= FHCRC;
        let good = crc32fast::hash(&header) as u16;
        assert_eq!(appended(&with_header_crc(&gz, good), 100).unwrap(), data);
        let e = appended(&with_header_crc(&gz, good ^ 1), 100).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("header's checksum"), "{e}");
    }

    #[test]
    fn a_wrong_checksum_or_length_is_invalid_data() {
        let data = text(1000);
        let gz = gzip(&data);
        let n = gz.len();
        let mut bad_crc = gz.clone();
        bad_crc[n - 8] ^= 1;
        let e = appended(&bad_crc, 1 << 20).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("CRC-32"), "{e}");
        let mut bad_len = gz;
        bad_len[n - 4] ^= 1;
        let e = read_all(&bad_len, 4096).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("length"), "{e}");
    }

    #[test]
    fn corrupt_headers_and_data_are_invalid_data() {
        let gz = gzip(&text(1000));
        type Spoil = fn(&mut Vec<u8>);
        let cases: [(&str, Spoil); 4] = [
            ("compression method", |g| g[2] = 7),
            ("reserved header flags", |g| g[3] = 0x20),
            // A block type of 3 does not exist.
            ("corrupt deflate data", |g| g[10] |= 0b110),
            // What follows a member must be another member.
            ("magic bytes", |g| g.extend(b"garbage after the member")),
        ];
        for (expected, spoil) in cases {
            let mut bad = gz.clone();
            spoil(&mut bad);
            let e = appended(&bad, 1 << 20).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{expected}");
            assert!(e.to_string().contains(expected), "{expected}: {e}");
        }
    }

    #[test]
    fn a_cut_stream_gives_what_it_has_then_says_it_is_cut_every_time() {
        let data = text(50_000);
        let gz = gzip(&data);
        for (cut, place) in [
            (3, "inside a gzip header"),
            (10, "inside the compressed data"),
            (gz.len() / 2, "inside the compressed data"),
            (gz.len() - 4, "inside a gzip trailer"),
        ] {
            let mut g = Gunzip::new(&gz[..cut]);
            let mut out = Vec::new();
            let e = loop {
                match g.append(&mut out, 1 << 16) {
                    Ok(0) => panic!("cut at {cut}: ended without an error"),
                    Ok(_) => {}
                    Err(e) => break e,
                }
            };
            assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "cut at {cut}");
            assert!(e.to_string().contains(place), "cut at {cut}: {e}");
            assert!(
                data.starts_with(&out),
                "cut at {cut}: a prefix of the content"
            );
            if cut > gz.len() / 4 {
                assert!(
                    out.len() > data.len() / 4,
                    "cut at {cut}: kept what was read"
                );
            }
            let again = g.append(&mut out, 1).unwrap_err();
            assert_eq!(again.kind(), io::ErrorKind::UnexpectedEof);
            assert_eq!(again.to_string(), e.to_string());
        }
    }

    /// What flate2's decoder gives for `gz`: its bytes, and the kind of error it ends with.
    fn flate2_gives(gz: &[u8]) -> (Vec<u8>, Option<io::ErrorKind>) {
        let mut out = Vec::new();
        let e = flate2::read::MultiGzDecoder::new(gz).read_to_end(&mut out);
        (out, e.err().map(|e| e.kind()))
    }

    /// What `Gunzip` gives, appending `max` bytes at a time or reading into `size` bytes.
    fn gunzip_gives(
        gz: &[u8],
        max: Option<usize>,
        size: usize,
    ) -> (Vec<u8>, Option<io::ErrorKind>) {
        let mut g = Gunzip::new(gz);
        let mut out = Vec::new();
        let mut buf = vec![0u8; size];
        loop {
            let step = match max {
                Some(max) => g.append(&mut out, max),
                None => g
                    .read(&mut buf)
                    .inspect(|&n| out.extend_from_slice(&buf[..n])),
            };
            match step {
                Ok(0) => return (out, None),
                Ok(_) => {}
                Err(e) => return (out, Some(e.kind())),
            }
        }
    }

    #[test]
    fn a_cut_file_gives_all_that_flate2_gives_in_any_piece_size() {
        // Runs of one byte and a repeated stretch, so that matches reach over the pieces: at a
        // cut, the inflater still holds output for input it already took in.
        let data = [vec![b'x'; 700], b"0123456789".repeat(5), vec![b'y'; 900]].concat();
        let mut e = GzEncoder::new(Vec::new(), Compression::best());
        e.write_all(&data).unwrap();
        let gz = e.finish().unwrap();
        for cut in 0..=gz.len() {
            let expected = flate2_gives(&gz[..cut]);
            for (max, size) in [(Some(1), 0), (Some(7), 0), (Some(64), 0), (Some(100), 0)] {
                assert_eq!(
                    gunzip_gives(&gz[..cut], max, size),
                    expected,
                    "cut {cut}, append {max:?}"
                );
            }
            for size in [1, 7, 64] {
                assert_eq!(
                    gunzip_gives(&gz[..cut], None, size),
                    expected,
                    "cut {cut}, read {size}"
                );
            }
        }
        // Cut just after the compressed data: the trailer is missing.
        let e = appended(&gz[..gz.len() - 8], 1 << 20).unwrap_err();
        assert!(e.to_string().contains("gzip trailer"), "{e}");
    }

    /// A reader of `data` that gives one byte per read, and is interrupted every third call.
    struct Trickle<'a> {
        data: &'a [u8],
        calls: u32,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.calls += 1;
            if self.calls.is_multiple_of(3) {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(self.data.len()).min(1);
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn header_fields_of_any_length_and_readers_that_trickle() {
        // A file name and comment longer than the compressed bytes read at once (so they
        // straddle reads), and an extra field of the largest size.
        let data = text(2000);
        let mut gz = gzip_member(
            &data,
            flate2::GzBuilder::new()
                .filename("n".repeat(200_000))
                .comment("c".repeat(70_000))
                .extra(vec![1; 65_535]),
        );
        gz.extend(gzip(b"[]"));
        let whole = [&data[..], b"[]"].concat();
        assert_eq!(appended(&gz, 1 << 16).unwrap(), whole);
        let mut g = Gunzip::new(Trickle {
            data: &gz,
            calls: 0,
        });
        let mut out = Vec::new();
        while g.append(&mut out, 4096).unwrap() > 0 {}
        assert_eq!(out, whole);
        // A file name without its closing zero runs to the end of the file: cut in the header.
        let e = appended(&gz[..100_000], 1 << 16).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert!(e.to_string().contains("gzip header"), "{e}");
    }

    #[test]
    fn the_same_bytes_as_flate2s_decoder() {
        let mut gz = gzip(&text(20_000));
        gz.extend(gzip(b"[1, 2, 3]"));
        let mut expected = Vec::new();
        flate2::read::MultiGzDecoder::new(&gz[..])
            .read_to_end(&mut expected)
            .unwrap();
        assert_eq!(appended(&gz, 1 << 20).unwrap(), expected);
    }
}
