//! Unit tests of the pickle reader: pickles Python wrote (hex below, from `pickle.dumps`) and
//! hand-assembled hostile ones.

use super::*;

fn items(p: &Pickle, v: Value) -> Vec<Value> {
    p.items(v).unwrap().collect()
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// `{"a": [1, -1, 255, 65535, 2**31-1, -2**31, 2**63-1, 2**63, -2**63-1, 2**100, 1.5, None,
/// True, False, "héllo", (1,), (1,2), (1,2,3), ()], "s1": shared, "s2": shared}` with
/// `shared = ["x", "y"]`, by protocol.
const O2_P1: &str = "7d71002858010000006171015d7102284b014affffffff4bff4dffff4affffff7f4a000000804c393232333337323033363835343737353830374c0a4c393232333337323033363835343737353830384c0a4c2d393232333337323033363835343737353830394c0a4c313236373635303630303232383232393430313439363730333230353337364c0a473ff80000000000004e4930310a4930300a580600000068c3a96c6c6f7103284b01747104284b014b02747105284b014b024b0374710629655802000000733171075d7108285801000000787109580100000079710a6558020000007332710b6808752e";
const O2_P2: &str = "80027d71002858010000006171015d7102284b014affffffff4bff4dffff4affffff7f4a000000808a08ffffffffffffff7f8a090000000000000080008a09ffffffffffffff7fff8a0d00000000000000000000000010473ff80000000000004e8889580600000068c3a96c6c6f71034b018571044b014b028671054b014b024b0387710629655802000000733171075d7108285801000000787109580100000079710a6558020000007332710b6808752e";
const O2_P5: &str = "80059592000000000000007d94288c0161945d94284b014affffffff4bff4dffff4affffff7f4a000000808a08ffffffffffffff7f8a090000000000000080008a09ffffffffffffff7fff8a0d00000000000000000000000010473ff80000000000004e88898c0668c3a96c6c6f944b0185944b014b0286944b014b024b03879429658c027331945d94288c0178948c017994658c027332946808752e";
/// `{"b": b"by", "ba": bytearray(b"z"), "set": {1}, "fs": frozenset([2])}`, protocol 5.
const O5: &str = "80059534000000000000007d94288c01629443026279948c026261949601000000000000007a948c03736574948f94284b01908c02667394284b029194752e";

fn check_o2(p: &Pickle, big_ints_as_text: bool) {
    let root = p.root();
    let a = p.get(root, "a").unwrap();
    let items = items(p, a);
    assert_eq!(items.len(), 19);
    let ints: Vec<String> = items[..10]
        .iter()
        .map(|&v| p.int_text(v).unwrap())
        .collect();
    assert_eq!(
        ints,
        [
            "1",
            "-1",
            "255",
            "65535",
            "2147483647",
            "-2147483648",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775809",
            "1267650600228229401496703205376"
        ]
    );
    if !big_ints_as_text {
        assert_eq!(p.u64(items[7]), Some(1 << 63));
        assert!(matches!(items[9], Value::BigInt(_)));
    }
    assert_eq!(items[10], Value::Float(1.5));
    assert_eq!(items[11], Value::None);
    assert_eq!(items[12], Value::Bool(true));
    assert_eq!(items[13], Value::Bool(false));
    assert_eq!(p.str(items[14]), Some("héllo"));
    let tuple_lens: Vec<usize> = items[15..]
        .iter()
        .map(|&t| {
            assert!(matches!(t, Value::Tuple(_)));
            p.items(t).unwrap().len()
        })
        .collect();
    assert_eq!(tuple_lens, [1, 2, 3, 0]);
    // The shared list is one object.
    let (s1, s2) = (p.get(root, "s1").unwrap(), p.get(root, "s2").unwrap());
    assert_eq!(s1, s2);
    let xy: Vec<&str> = p.items(s1).unwrap().map(|v| p.str(v).unwrap()).collect();
    assert_eq!(xy, ["x", "y"]);
}

#[test]
fn reads_what_python_writes_in_protocols_1_2_and_5() {
    let p1 = parse(&hex(O2_P1)).unwrap();
    assert_eq!(p1.protocol(), 0);
    check_o2(&p1, true);
    let p2 = parse(&hex(O2_P2)).unwrap();
    assert_eq!(p2.protocol(), 2);
    check_o2(&p2, false);
    let p5 = parse(&hex(O2_P5)).unwrap();
    assert_eq!(p5.protocol(), 5);
    check_o2(&p5, false);
}

#[test]
fn reads_bytes_sets_and_frozensets() {
    let p = parse(&hex(O5)).unwrap();
    let root = p.root();
    assert_eq!(p.bytes(p.get(root, "b").unwrap()), Some(&b"by"[..]));
    assert_eq!(p.bytes(p.get(root, "ba").unwrap()), Some(&b"z"[..]));
    let set = p.get(root, "set").unwrap();
    assert!(matches!(set, Value::Set(_)));
    assert_eq!(items(&p, set), [Value::Int(1)]);
    let fs = p.get(root, "fs").unwrap();
    assert!(matches!(fs, Value::FrozenSet(_)));
    assert_eq!(items(&p, fs), [Value::Int(2)]);
}

#[test]
fn every_cut_is_an_error() {
    for data in [hex(O2_P1), hex(O2_P2), hex(O2_P5), hex(O5)] {
        for n in 0..data.len() {
            let e = parse(&data[..n]).unwrap_err();
            assert!(
                matches!(
                    e.kind,
                    PickleErrorKind::Truncated { .. } | PickleErrorKind::NoStop
                ),
                "cut at {n}: {e}"
            );
            assert!(e.offset <= n as u64);
        }
    }
}

#[test]
fn code_opcodes_are_refused_with_name_and_offset() {
    // After `PROTO 4` and `EMPTY_LIST`, at byte 3.
    for (code, name) in [
        (b'c', "GLOBAL"),
        (0x93, "STACK_GLOBAL"),
        (b'R', "REDUCE"),
        (b'b', "BUILD"),
        (b'i', "INST"),
        (b'o', "OBJ"),
        (0x81, "NEWOBJ"),
        (0x92, "NEWOBJ_EX"),
        (b'P', "PERSID"),
        (b'Q', "BINPERSID"),
        (0x82, "EXT1"),
        (0x83, "EXT2"),
        (0x84, "EXT4"),
    ] {
        let e = parse(&[0x80, 4, b']', code, b'.']).unwrap_err();
        assert_eq!(e.offset, 3, "{name}");
        assert!(
            matches!(e.kind, PickleErrorKind::Refused { opcode, .. } if opcode == name),
            "{name}: {e}"
        );
        assert!(e.to_string().contains(name));
    }
    let e = parse(&[0x80, 4, 0xff]).unwrap_err();
    assert_eq!(e.kind, PickleErrorKind::UnknownOpcode(0xff));
    let e = parse(&[0x80, 9, b'N', b'.']).unwrap_err();
    assert_eq!(e.kind, PickleErrorKind::Protocol(9));
}

#[test]
fn hostile_lengths_indices_and_nesting_are_errors() {
    // A string of 2^64 - 1 bytes, a list of a 4 GiB integer.
    let e = parse(&[
        0x80, 4, 0x8d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, b'.',
    ])
    .unwrap_err();
    assert!(matches!(
        e.kind,
        PickleErrorKind::Truncated {
            opcode: "BINUNICODE8"
        }
    ));
    let e = parse(&[0x80, 4, 0x8b, 0xff, 0xff, 0xff, 0x7f, b'.']).unwrap_err();
    assert!(matches!(e.kind, PickleErrorKind::IntTooLarge { .. }), "{e}");
    let e = parse(&[0x80, 4, 0x8b, 0xff, 0xff, 0xff, 0xff, b'.']).unwrap_err();
    assert!(matches!(e.kind, PickleErrorKind::BadArgument { .. }), "{e}");
    // Memo entries never stored.
    let e = parse(&[0x80, 4, b'h', 3, b'.']).unwrap_err();
    assert_eq!(
        e.kind,
        PickleErrorKind::MemoMissing {
            opcode: "BINGET",
            index: 3
        }
    );
    let e = parse(&[
        0x80, 4, b'N', b'r', 0xff, 0xff, 0xff, 0xff, b'j', 0xfe, 0xff, 0xff, 0xff, b'.',
    ])
    .unwrap_err();
    assert!(matches!(
        e.kind,
        PickleErrorKind::MemoMissing {
            index: 0xffff_fffe,
            ..
        }
    ));
    // A sparse memo index works and costs one entry.
    let p = parse(&[
        0x80, 4, b'N', b'r', 0xff, 0xff, 0xff, 0xff, b'0', b'j', 0xff, 0xff, 0xff, 0xff, b'.',
    ])
    .unwrap();
    assert_eq!(p.root(), Value::None);
    // Deep MARKs.
    let mut deep = vec![0x80, 4];
    deep.extend(std::iter::repeat_n(b'(', MAX_MARK_DEPTH + 1));
    assert_eq!(parse(&deep).unwrap_err().kind, PickleErrorKind::TooDeep);
    // Stack underflows and wrong targets.
    assert!(matches!(
        parse(&[0x80, 4, b'.']).unwrap_err().kind,
        PickleErrorKind::StackUnderflow { opcode: "STOP" }
    ));
    assert!(matches!(
        parse(&[0x80, 4, b'}', b'K', 1, b'a', b'.'])
            .unwrap_err()
            .kind,
        PickleErrorKind::WrongType {
            opcode: "APPEND",
            found: "dict",
            expected: "list"
        }
    ));
    assert!(matches!(
        parse(&[0x80, 4, b']', b'(', b'K', 1, b'u', b'.'])
            .unwrap_err()
            .kind,
        PickleErrorKind::WrongType {
            opcode: "SETITEMS",
            ..
        }
    ));
    assert!(matches!(
        parse(&[0x80, 4, b'}', b'(', b'K', 1, b'u', b'.'])
            .unwrap_err()
            .kind,
        PickleErrorKind::BadArgument {
            opcode: "SETITEMS",
            ..
        }
    ));
    assert!(matches!(
        parse(&[0x80, 4, b']', b'(', b'(', b'e', b'.'])
            .unwrap_err()
            .kind,
        PickleErrorKind::StackUnderflow { opcode: "APPENDS" }
    ));
    assert!(matches!(
        parse(&[0x80, 4, b'e', b'.']).unwrap_err().kind,
        PickleErrorKind::NoMark { opcode: "APPENDS" }
    ));
    // A MARK hides what is below it.
    assert!(matches!(
        parse(&[0x80, 4, b'N', b'(', 0x85, b'.']).unwrap_err().kind,
        PickleErrorKind::StackUnderflow { opcode: "TUPLE1" }
    ));
    // Unsupported text strings and buffers.
    assert!(matches!(
        parse(b"S'a'\n.").unwrap_err().kind,
        PickleErrorKind::Unsupported {
            opcode: "STRING",
            ..
        }
    ));
    assert!(matches!(
        parse(&[0x80, 5, 0x97, b'.']).unwrap_err().kind,
        PickleErrorKind::Unsupported {
            opcode: "NEXT_BUFFER",
            ..
        }
    ));
    // A long text line.
    let mut long = b"I".to_vec();
    long.extend([b'1'; 100]);
    long.extend(b"\n.");
    assert!(matches!(
        parse(&long).unwrap_err().kind,
        PickleErrorKind::BadArgument { .. }
    ));
}

#[test]
fn cycles_pop_mark_dup_and_trailing_bytes() {
    // l = []; l.append(l)
    let p = parse(&[0x80, 4, b']', 0x94, b'h', 0, b'a', b'.', b'x', b'y']).unwrap();
    let root = p.root();
    assert_eq!(items(&p, root), [root]);
    assert_eq!(p.trailing_bytes(), 2);
    // POP, POP_MARK and DUP.
    let p = parse(&[
        b'K', 1, b'K', 2, b'0', b'(', b'K', 3, b'1', b'2', 0x86, b'.',
    ])
    .unwrap();
    assert_eq!(items(&p, p.root()), [Value::Int(1), Value::Int(1)]);
    // Invalid UTF-8 is replaced and counted.
    let p = parse(&[0x8c, 2, 0xff, b'a', b'.']).unwrap();
    assert_eq!(p.str(p.root()), Some("\u{fffd}a"));
    assert_eq!(p.lossy_strings(), 1);
    // Text opcodes of protocol 0: INT, LONG, FLOAT, PUT, GET, LIST, DICT, TUPLE.
    let p = parse(b"(I7\np0\nL-12L\nF2.5\ng0\n(lp1\n(dp2\n(t.").unwrap();
    assert!(matches!(p.root(), Value::Tuple(_)));
    assert_eq!(p.items(p.root()).unwrap().len(), 0);
    let p = parse(b"(I7\np0\nL-12L\nF2.5\ng0\nl.").unwrap();
    assert_eq!(
        items(&p, p.root()),
        [
            Value::Int(7),
            Value::Int(-12),
            Value::Float(2.5),
            Value::Int(7)
        ]
    );
}

#[test]
fn big_integers_print_in_decimal() {
    for text in [
        "0",
        "-1",
        "255",
        "-256",
        "9223372036854775808",
        "-9223372036854775809",
    ] {
        let negative = text.starts_with('-');
        let le = decimal_le(text.trim_start_matches('-'), negative);
        assert_eq!(bigint_decimal(&le), text);
    }
    assert_eq!(bigint_decimal(&[]), "0");
    assert_eq!(bigint_decimal(&[0xff]), "-1");
    assert_eq!(
        bigint_decimal(&[0, 0, 0, 0, 0, 0, 0, 0x80, 0]),
        "9223372036854775808"
    );
    assert_eq!(
        bigint_decimal(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff]),
        "-9223372036854775809"
    );
}

#[test]
fn floats_print_as_python_repr() {
    for (f, s) in [
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.5, "1.5"),
        (100.0, "100.0"),
        (0.1, "0.1"),
        (1e-5, "1e-05"),
        (0.0001, "0.0001"),
        (1e16, "1e+16"),
        (1234567890123456.0, "1234567890123456.0"),
        (1.5e300, "1.5e+300"),
        (-2.5e-7, "-2.5e-07"),
        (f64::INFINITY, "inf"),
        (f64::NAN, "nan"),
    ] {
        assert_eq!(python_float_repr(f), s, "{f}");
    }
}
