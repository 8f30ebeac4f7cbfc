//! A small, lenient JSON layer for big trace files.
//!
//! Two parts:
//! - [`split_stream`] runs on a reader thread: it walks the top level of a Chrome trace
//!   (object or bare array form) up to the event array, hands every wanted top-level value
//!   before it over whole (the others are scanned and dropped as they are read; line numbers
//!   are counted forward once, so many keys cost linear time), then cuts the rest of the input
//!   into blocks of about [`BLOCK_BYTES`] (or [`SplitOptions::block_bytes`]) at
//!   *candidate* element boundaries (a `{` whose previous non-blank byte is a `,`), without
//!   scanning every byte. A cut can be wrong (inside a string or a nested object); the consumer
//!   detects that because the block before a wrong cut always ends inside an element, and
//!   re-parses across the cut. When the consumer is behind (its queue is full), the reader
//!   thread also tokenizes the next block itself, so both cores parse.
//! - [`Parser`] parses values out of one in-memory slice without building a tree: numbers stay
//!   text (so timestamps convert to nanoseconds exactly) and strings are borrowed unless they
//!   hold escapes.
//!
//! It accepts what real writers produce and strict parsers reject: trailing commas, empty
//! elements, raw control characters and invalid UTF-8 inside strings, and bare `N/A`, `NaN`,
//! `Infinity` tokens (read as null and counted).

mod find;
mod parser;
mod split;

pub(crate) use find::container_end;
pub use parser::*;
pub use split::*;

#[cfg(test)]
mod tests {
    use super::split::find_cut;
    use super::*;
    use std::borrow::Cow;
    use std::sync::mpsc::sync_channel;

    type Split = (Vec<(String, Vec<u8>)>, Vec<u8>, StreamEnd);

    fn split(text: &[u8]) -> Split {
        let (tx, rx) = sync_channel(1024);
        split_stream(text, &tx, |b: &[u8]| b.len());
        drop(tx);
        let mut top = Vec::new();
        let mut events = Vec::new();
        let mut end = None;
        for c in rx {
            match c {
                Chunk::TopLevel { key, value } => top.push((key, value)),
                Chunk::Events { bytes, .. } => events.extend_from_slice(&bytes),
                Chunk::End(e) => end = Some(e),
                Chunk::EventsStart { .. } => {}
                Chunk::Error(e) => panic!("{e:?}"),
            }
        }
        (top, events, end.unwrap())
    }

    #[test]
    fn digit_numbers_read_as_value_reads_them_and_nothing_else_is_consumed() {
        for text in [
            &b"0"[..],
            b" 12.5,",
            b"4475950336187.855}",
            b"1e9]",
            b"7-3",
            b"-1",
            b"-Infinity",
            b"NaN",
            b"\"12\"",
            b"true",
            b"+3",
            b".5",
            b"",
        ] {
            let mut fast = Parser::new(text);
            let mut slow = Parser::new(text);
            match fast.digit_number() {
                Some(n) => {
                    assert_eq!(slow.value().ok(), Some(Value::Num(n)), "{text:?}");
                    assert_eq!(fast.offset(), slow.offset(), "{text:?}");
                }
                // Not a number starting with a digit: left for `value`, nothing consumed
                // but whitespace.
                None => assert!(
                    !matches!(slow.value(), Ok(Value::Num(n)) if n[0].is_ascii_digit()),
                    "{text:?}"
                ),
            }
        }
    }

    #[test]
    fn keys_before_the_events_are_sent_whole_and_the_rest_streamed() {
        let text = br#"
{"schemaVersion": 1, "deviceProperties": [{"id": 0}], "traceEvents": [
 {"ph": "X", "name": "a}{\"", "ts": 1},
 {"ph": "X", "name": "b", "args": {"x": [1, 2]}},
], "baseTimeNanoseconds": 1700000000000000000}"#;
        let (top, events, end) = split(text);
        assert_eq!(top.len(), 2);
        assert_eq!(top[0], ("schemaVersion".to_string(), b"1".to_vec()));
        assert_eq!(top[1].1, b"[{\"id\": 0}]".to_vec());
        assert!(end.found_events && !end.array_form && !end.truncated_before_events);
        // Everything after `[` arrives as event blocks, the tail included.
        assert!(events.ends_with(b"], \"baseTimeNanoseconds\": 1700000000000000000}"));
    }

    #[test]
    fn rejects_text_that_is_not_a_trace() {
        let (tx, rx) = sync_channel::<Chunk<()>>(16);
        split_stream(&b"{ this is not json }"[..], &tx, |_| ());
        drop(tx);
        let last = rx.into_iter().last().unwrap();
        assert!(matches!(
            last,
            Chunk::Error(SplitError::Syntax { line: 1, .. })
        ));
    }

    #[test]
    fn big_input_is_cut_at_element_starts_and_loses_nothing() {
        let mut text = b"[".to_vec();
        let n = 40_000;
        for i in 0..n {
            text.extend_from_slice(
                format!("{{\"ph\":\"X\",\"name\":\"ev{i}, {{\"}},\n").as_bytes(),
            );
        }
        text.push(b']');
        // Without a queue (and a slow consumer) the reader tokenizes blocks itself.
        let (tx, rx) = sync_channel(0);
        let t = std::thread::spawn(move || split_stream(&text[..], &tx, |b: &[u8]| b.len()));
        let mut all = b"[".to_vec();
        let mut blocks = 0;
        let mut tokenized = 0;
        for c in rx {
            if let Chunk::Events { bytes, pre, .. } = c {
                // A slow consumer makes the queue fill up.
                std::thread::sleep(std::time::Duration::from_millis(20));
                blocks += 1;
                if let Some(len) = pre {
                    assert_eq!(len, bytes.len());
                    tokenized += 1;
                }
                if blocks > 1 {
                    assert_eq!(bytes[0], b'{');
                }
                all.extend_from_slice(&bytes);
            }
        }
        t.join().unwrap();
        assert!(blocks > 1);
        assert!(tokenized > 0);
        let mut expected = b"[".to_vec();
        for i in 0..n {
            expected.extend_from_slice(
                format!("{{\"ph\":\"X\",\"name\":\"ev{i}, {{\"}},\n").as_bytes(),
            );
        }
        expected.push(b']');
        assert_eq!(all, expected);
    }

    #[test]
    fn cuts_follow_a_comma() {
        assert_eq!(find_cut(b"{\"a\":{\"b\":1}},\n  {\"c\":2}", 1), Some(17));
        assert_eq!(find_cut(b"[{\"a\":{}}]", 1), None);
    }

    #[test]
    fn lenient_values() {
        let mut p = Parser::new(
            br#"{"a": N/A, "b": NaN, "c": -Infinity, "d": "x\u00e9\n", "e": "\ud83d\ude00",}"#,
        );
        let mut got = Vec::new();
        p.object(|p, k| {
            got.push((String::from_utf8_lossy(k).into_owned(), p.value()?.clone()));
            Ok(())
        })
        .unwrap();
        assert_eq!(p.lenient_tokens, 3);
        assert_eq!(got[3].1, Value::Str(Cow::Owned("xé\n".into())));
        assert_eq!(got[4].1, Value::Str(Cow::Owned("😀".into())));
    }

    #[test]
    fn integers_from_text() {
        assert_eq!(int_from_text(b"42"), Some(42));
        assert_eq!(int_from_text(b"-7"), Some(-7));
        assert_eq!(int_from_text(b"68.0"), Some(68));
        assert_eq!(int_from_text(b"1.5"), None);
        assert_eq!(int_from_text(b"-"), None);
    }
}
