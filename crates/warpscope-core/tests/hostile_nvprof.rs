//! nvprof CSV/text files a hostile user could write (issue 11): huge headers, many tables,
//! gzip that inflates far beyond its size, over-long lines, times at the ends of i64, negative
//! durations and totals. Each ends in a clear error or a load with a counted warning.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;

use warpscope_core::model::{EventKind, Warning};
use warpscope_core::{ImportError, Profile, Progress, import_bytes};

const FRAME: &str = "==42== NVPROF is profiling process 42, command: ./app\n\
                     ==42== Profiling application: ./app\n\
                     ==42== Profiling result:\n";

fn load(data: &[u8]) -> Result<Profile, ImportError> {
    import_bytes(Path::new("hostile.txt"), data, &Progress::new())
}

fn warning<'a>(p: &'a Profile, code: &str) -> &'a Warning {
    p.warnings
        .iter()
        .find(|w| w.code == code)
        .unwrap_or_else(|| panic!("no warning {code}: {:?}", p.warnings))
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

/// (count, span from the first start to the last end, smallest duration) of all events.
fn extent(p: &Profile) -> (usize, i64, i64) {
    let (mut n, mut lo, mut hi, mut dmin) = (0, i64::MAX, i64::MIN, i64::MAX);
    for t in &p.tracks {
        for i in 0..t.events.len() {
            n += 1;
            lo = lo.min(t.events.start_ns[i]);
            hi = hi.max(t.events.start_ns[i] + t.events.dur_ns[i]);
            dmin = dmin.min(t.events.dur_ns[i]);
        }
    }
    (n, hi - lo, dmin)
}

#[test]
fn a_csv_header_of_many_unknown_columns_is_counted_and_listed_briefly() {
    let mut header = String::from("\"Start\",\"Duration\",\"Device\",\"Name\"");
    let mut units = String::from("s,s,,");
    for i in 0..50_000 {
        header.push_str(&format!(",\"c{i}\""));
        units.push(',');
    }
    let data = format!("{FRAME}{header}\n{units}\n1.0,0.000001,\"TITAN Xp (0)\",\"k()\"\n");
    let p = load(data.as_bytes()).unwrap();
    assert_eq!(extent(&p).0, 1);
    let w = warning(&p, "unknown_columns");
    assert_eq!(w.count, 50_000);
    assert!(
        w.message.ends_with("`c18`, `c19` and 49980 more"),
        "{}",
        w.message
    );
    assert_eq!(warning(&p, "short_rows").count, 1);
}

#[test]
fn many_csv_headers_are_each_skipped_and_counted() {
    let mut data = String::from(FRAME);
    for _ in 0..20_000 {
        data.push_str("\"Device\",\"Thing\",\"Other\"\n\n");
    }
    data.push_str(
        "\"Type\",\"Time(%)\",\"Time\",\"Calls\",\"Avg\",\"Min\",\"Max\",\"Name\"\n\
         ,%,ms,,ms,ms,ms,\n\
         \"GPU activities\",100.0,1.5,3,0.5,0.4,0.6,\"k()\"\n",
    );
    let p = load(data.as_bytes()).unwrap();
    let w = warning(&p, "unknown_table");
    assert_eq!(w.count, 20_000);
    assert_eq!(
        w.message,
        "a CSV table warpscope does not know was skipped (header on line 4: \
         `\"Device\",\"Thing\",\"Other\"`)"
    );
    let rows = &p.recorded_summary.as_ref().unwrap().rows;
    assert_eq!(
        (rows.len(), rows[0].total_ns, rows[0].calls),
        (1, 1_500_000, 3)
    );
}

#[test]
fn gzip_that_inflates_to_much_application_output_loads_the_table() {
    // 64 MiB of application output after the table: read through, never held whole.
    let mut data = String::from(FRAME);
    data.push_str(
        "\"Start\",\"Duration\",\"Device\",\"Stream\",\"Name\"\n\
         s,us,,,\n\
         1.000000,2.500000,\"TITAN Xp (0)\",\"7\",\"k(int)\"\n\n",
    );
    let line = format!("{}\n", "a".repeat(1023));
    let body = line.repeat(64 * 1024);
    let mut raw = data.into_bytes();
    raw.extend_from_slice(body.as_bytes());
    let gz = gzip(&raw);
    assert!(gz.len() < raw.len() / 100);
    let p = load(&gz).unwrap();
    assert_eq!(extent(&p), (1, 2_500, 2_500));
    assert!(p.source.compressed);
    assert_eq!(p.source.content_bytes, raw.len() as u64);
}

#[test]
fn a_line_longer_than_8_mib_is_an_error_naming_it() {
    let mut raw = format!("{FRAME}application output\n").into_bytes();
    raw.extend(std::iter::repeat_n(b'A', 9 << 20));
    raw.push(b'\n');
    let err = load(&gzip(&raw)).unwrap_err();
    assert!(matches!(err, ImportError::Corrupt { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "hostile.txt: line 5: the line is longer than 8 MiB; nvprof does not write such lines"
    );
}

#[test]
fn line_numbers_and_utf8_repair_survive_streaming() {
    // CRLF line ends, an invalid byte on line 6, a bad row on line 7.
    let mut raw = FRAME.replace('\n', "\r\n").into_bytes();
    raw.extend_from_slice(b"\"Start\",\"Duration\",\"Device\",\"Name\"\r\ns,us,,\r\n");
    raw.extend_from_slice(b"1.0,2.0,\"TITAN Xp (0)\",\"k\xFF()\"\r\n");
    raw.extend_from_slice(b"x,2.0,\"TITAN Xp (0)\",\"k()\"\r\n");
    let p = load(&raw).unwrap();
    assert_eq!(extent(&p).0, 1);
    assert_eq!(warning(&p, "not_utf8").count, 1);
    assert_eq!(
        warning(&p, "skipped_rows").message,
        "table rows that could not be read were skipped (first at line 7: Start `x` is not a time)"
    );
    let names: Vec<&str> = p.tracks[0].events.name.iter().map(|&n| p.str(n)).collect();
    assert_eq!(names, ["k\u{FFFD}()"]);
}

#[test]
fn times_at_the_ends_of_i64_are_skipped_and_counted() {
    let data = format!(
        "{FRAME}\"Start\",\"Duration\",\"Device\",\"Stream\",\"Name\"\n\
         s,ms,,,\n\
         9223372036.854775807,0.000001,\"TITAN Xp (0)\",7,\"k()\"\n\
         -9223372036.854775808,1,\"TITAN Xp (0)\",7,\"k()\"\n\
         1e300,1,\"TITAN Xp (0)\",7,\"k()\"\n\
         1.0,-5,\"TITAN Xp (0)\",7,\"k()\"\n\
         2.0,9223372036854.775807,\"TITAN Xp (0)\",7,\"k()\"\n\
         3.0,0.001,\"TITAN Xp (0)\",7,\"k()\"\n"
    );
    let p = load(data.as_bytes()).unwrap();
    // Kept: the negative duration (set to 0) at 1 s and the good row at 3 s.
    assert_eq!(extent(&p), (2, 2_000_001_000, 0));
    let w = warning(&p, "time_out_of_range");
    assert_eq!(w.count, 3);
    assert_eq!(
        w.message,
        "rows whose times do not fit the timeline (a negative Start, or an end past about 292 \
         years in nanoseconds) were skipped (first at line 6: Start 9223372036854775807 ns + \
         Duration 1 ns overflows)"
    );
    assert_eq!(
        warning(&p, "skipped_rows").message,
        "table rows that could not be read were skipped (first at line 8: Start `1e300` is out \
         of range (beyond about 292 years in nanoseconds))"
    );
    assert_eq!(warning(&p, "negative_duration").count, 1);
}

#[test]
fn only_out_of_range_rows_is_an_error_naming_the_first() {
    let data = format!(
        "{FRAME}\"Start\",\"Duration\",\"Device\",\"Name\"\n\
         s,s,,\n\
         -1.0,1.0,\"TITAN Xp (0)\",\"k()\"\n"
    );
    let err = load(data.as_bytes()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "hostile.txt: line 6: no row of the table could be read (Start is -1000000000 ns)"
    );
}

#[test]
fn negative_api_durations_are_counted_not_silently_clamped() {
    let data = format!(
        "{FRAME}\"Start\",\"Duration\",\"Name\",\"Correlation_ID\"\n\
         s,us,,\n\
         1.0,-3.0,\"cudaMalloc\",5\n"
    );
    let p = load(data.as_bytes()).unwrap();
    assert_eq!(extent(&p), (1, 0, 0));
    assert_eq!(
        warning(&p, "negative_duration").message,
        "negative durations were set to 0 (first at line 6)"
    );
    assert_eq!(p.tracks[0].events.kind[0], EventKind::Runtime);
}

#[test]
fn negative_or_non_finite_summary_values_are_skipped() {
    let data = format!(
        "{FRAME}\"Type\",\"Time(%)\",\"Time\",\"Calls\",\"Avg\",\"Min\",\"Max\",\"Name\"\n\
         ,%,ms,,ms,ms,ms,\n\
         \"GPU activities\",50.0,-1.5,3,0.5,0.4,0.6,\"a()\"\n\
         \"GPU activities\",NaN,1.5,3,0.5,0.4,0.6,\"b()\"\n\
         \"GPU activities\",50.0,1.5,3,0.5,0.4,0.6,\"c()\"\n"
    );
    let p = load(data.as_bytes()).unwrap();
    let rows = &p.recorded_summary.as_ref().unwrap().rows;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].name, "c()");
    let w = warning(&p, "skipped_rows");
    assert_eq!(w.count, 2);
    assert_eq!(
        w.message,
        "table rows that could not be read were skipped (first at line 6: Time `-1.5` is \
         negative)"
    );
}

#[test]
fn text_trace_with_a_wide_header_reads_its_known_columns() {
    let mut header = String::from("   Start  Duration");
    for i in 0..20_000 {
        header.push_str(&format!("  c{i}"));
    }
    // Rows shorter than the header: the unknown columns past their end are never visited.
    let data = format!(
        "{FRAME}{header}  Name\n\
         1.0000s  2.0000us\n"
    );
    let err = load(data.as_bytes()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "hostile.txt: line 5: no row of the table could be read (the Name cell is empty)"
    );
    let w_data = format!(
        "{FRAME}   Start  Duration  Junk  Device  Name\n1.0000s  2.0000us     x  TITAN Xp (0)  k()\n"
    );
    let p = load(w_data.as_bytes()).unwrap();
    assert_eq!(extent(&p), (1, 2_000, 2_000));
}

#[test]
fn repeated_nvprof_warnings_and_totals_are_capped_and_counted() {
    let mut data = String::from(FRAME);
    for i in 0..100 {
        data.push_str(&format!("==42== Warning: thing {i}\n"));
    }
    data.push_str(
        "\"Type\",\"Time(%)\",\"Time\",\"Calls\",\"Avg\",\"Min\",\"Max\",\"Name\"\n\
         ,%,ms,,ms,ms,ms,\n\
         \"GPU activities\",100.0,1.5,3,0.5,0.4,0.6,\"k()\"\n\n",
    );
    for i in 0..100 {
        data.push_str(&format!("Total CPU thing {i}: 1\n"));
    }
    let p = load(data.as_bytes()).unwrap();
    let listed = p
        .warnings
        .iter()
        .filter(|w| w.code.starts_with("nvprof_warning") && w.code != "nvprof_warnings_more")
        .count();
    assert_eq!(listed, 32);
    let more = warning(&p, "nvprof_warnings_more");
    assert_eq!(more.count, 68);
    assert_eq!(
        more.message,
        "further nvprof warnings were not listed one by one (first at line 36)"
    );
    let totals = p
        .source
        .details
        .iter()
        .filter(|(k, _)| k.starts_with("Total CPU"))
        .count();
    assert_eq!(totals, 64);
    assert_eq!(warning(&p, "extra_totals").count, 36);
}

#[test]
fn a_cancelled_import_stops() {
    let mut data = String::from(FRAME);
    data.push_str(&"app output\n".repeat(70_000));
    let progress = Progress::new();
    progress.cancel();
    let err = import_bytes(Path::new("hostile.txt"), data.as_bytes(), &progress).unwrap_err();
    assert!(matches!(err, ImportError::Cancelled { .. }), "{err:?}");
}

#[test]
fn metric_text_is_kept_up_to_16_mib_and_every_row_counted() {
    let mut data = String::from(FRAME);
    data.push_str(
        "\"Type\",\"Time(%)\",\"Time\",\"Calls\",\"Avg\",\"Min\",\"Max\",\"Name\"\n\
         ,%,ms,,ms,ms,ms,\n\
         \"GPU activities\",100.0,1.5,3,0.5,0.4,0.6,\"k()\"\n\
         ==42== Metric result:\n\
         \"Device\",\"Kernel\",\"Invocations\",\"Metric Name\",\"Min\",\"Max\",\"Avg\"\n",
    );
    let row = format!(
        "\"TITAN Xp (0)\",\"k()\",1,\"{}\",1,1,1\n",
        "m".repeat(1000)
    );
    let rows = 20 * 1024;
    data.push_str(&row.repeat(rows));
    let p = load(data.as_bytes()).unwrap();
    assert_eq!(warning(&p, "metrics_not_shown").count, rows as u64);
    assert_eq!(
        warning(&p, "metrics_truncated").message,
        "nvprof metric/event text past 16 MiB was not kept (first at line 16265)"
    );
    let (_, text) = p
        .source
        .details
        .iter()
        .find(|(k, _)| k == "nvprof metric result")
        .unwrap();
    assert!(
        text.len() <= 16 << 20 && text.len() > 15 << 20,
        "{}",
        text.len()
    );
}

#[test]
fn rows_of_too_many_fields_are_skipped_whether_quoted_or_not() {
    // Inside a table: a row of 4,096 bare commas (what a gzip of commas inflates to), and a
    // quoted row with one field too many. Both are skipped and counted; the good rows load.
    let mut data = String::from(FRAME);
    data.push_str("\"Start\",\"Duration\",\"Device\",\"Stream\",\"Name\"\ns,us,,,\n");
    data.push_str("1.0,2.5,\"TITAN Xp (0)\",\"7\",\"k(int)\"\n");
    data.push_str(&format!("{}\n", ",".repeat(4096)));
    data.push_str("2.0,2.5,\"TITAN Xp (0)\",\"7\",\"k(int)\",\"extra\"\n");
    data.push_str("3.0,1.5,\"TITAN Xp (0)\",\"7\",\"k(int)\"\n");
    let p = load(data.as_bytes()).unwrap();
    assert_eq!(p.event_count(), 2);
    let w = warning(&p, "skipped_rows");
    assert_eq!(w.count, 2);
    assert!(
        w.message
            .contains("first at line 7: more than 5 fields where the header has 5"),
        "{}",
        w.message
    );
}
