#!/usr/bin/env bash
# Runs a loader on pathological files and checks that each ends quickly, in little memory,
# without a panic.
#
#   scripts/hostile.sh COMMAND [ARGS...]
#
# The file goes where an argument is `{}`, or last. Examples:
#   scripts/hostile.sh target/release/warpscope summary {} --format json
#   scripts/hostile.sh target/release/examples/load        (cargo build --release -p warpscope-core --example load)
#
# Generates into a temporary directory (removed afterwards; HOSTILE_KEEP=1 keeps it): the
# classes of issue 11 and more of their kind — nvprof CSV headers with many unknown columns,
# 200 k CSV header lines, many top-level JSON keys before traceEvents (plain and gzipped), a
# 1 MB .gz of nvprof text that inflates to ~1 GB, a Chrome trace cut inside its first event,
# deep JSON nesting, i64-extreme timestamps in JSON, nvprof CSV and text, many thread names,
# and copies of the SQLite samples (../shared/samples, HOSTILE_SAMPLES) with i64-extreme,
# reversed and ±1e300 times.
#
# Each run gets a 10 s timeout under /usr/bin/time. Prints file, exit code, seconds, peak MB
# and the first line of stderr; exits 1 if any run panicked (exit 101), was killed, took over
# 2 s, used over 300 MB, printed a negative GPU total or (the load example) a span of more than
# 1e16 ns; 2 on a usage error.
set -uo pipefail

if [[ $# -eq 0 ]]; then
    sed -n '2,/^set/p' "$0" | sed 's/^# \{0,1\}//;/^set/d' >&2
    exit 2
fi
CMD=("$@")
SAMPLES=${HOSTILE_SAMPLES:-$(dirname "$0")/../../shared/samples}
MAX_SECONDS=${HOSTILE_MAX_SECONDS:-2}
MAX_MB=${HOSTILE_MAX_MB:-300}
DIR=$(mktemp -d -t warpscope-hostile.XXXXXX)
if [[ -z ${HOSTILE_KEEP:-} ]]; then
    trap 'rm -rf "$DIR"' EXIT
else
    echo "hostile.sh: files kept in $DIR" >&2
fi

python3 - "$DIR" "$SAMPLES" <<'PY'
import gzip, os, shutil, sqlite3, sys, zlib
from pathlib import Path

out, samples = Path(sys.argv[1]), Path(sys.argv[2])
I64_MAX, I64_MIN = 2**63 - 1, -(2**63)

def w(name, data):
    (out / name).write_bytes(data if isinstance(data, bytes) else data.encode())

def gz(name, data):
    w(name, gzip.compress(data if isinstance(data, bytes) else data.encode(), 6, mtime=0))

NV = "==1== NVPROF is profiling process 1, command: ./a\n==1== Profiling result:\n"
ROW = '{s},{d},"Dev (0)","1","7","k(int)",{c}\n'
HEAD = '"Start","Duration","Device","Context","Stream","Name","Correlation_ID"\ns,ms,,,,,\n'

# nvprof CSV: a 1 MB header of unknown column names (issue: 95 s).
cols = ",".join(f'"Metric {i}"' for i in range(75000))
unknown = NV + f'"Start","Duration",{cols},"Name"\ns,ms,{"," * 75000}\n1.0,0.5,{"," * 75000}"k"\n'
w("nvprof_unknown_columns_1mb.csv", unknown)
gz("nvprof_unknown_columns_1mb.csv.gz", unknown)
# nvprof text: the same in a fixed-width header.
w("nvprof_unknown_columns_1mb.txt", NV + "   Start  Duration  " +
  "  ".join(f"Metric{i}" for i in range(90000)) + "  Name\n 1.0000s  1.0000us  k\n")
# nvprof CSV: 200 k header lines (100 k sections of header + units; issue: 15 s).
w("nvprof_200k_header_lines.csv", NV + '"Start","Duration","Name"\ns,ms,\n' * 100000)
# ... and 100 k sections each with one row.
w("nvprof_100k_sections.csv", NV + ('"Start","Duration","Name"\ns,ms,\n1.0,0.001,"k"\n') * 100000)
# nvprof CSV and text: i64-extreme and absurd times.
w("nvprof_extreme_times.csv", NV + HEAD + ROW.format(s="9223372036.854775807", d="9223372036854.775807", c=1)
  + ROW.format(s="-9223372036.854775808", d="0.001", c=2) + ROW.format(s="1.0", d="1e300", c=3)
  + ROW.format(s="-1e300", d="-1e300", c=4) + ROW.format(s="99999999999999999999", d="1", c=5))
w("nvprof_extreme_times.txt", NV + "   Start  Duration  Name\n"
  "9223372036854775807s  9223372036854775807s  k [1]\n-9223372036854775808s  1.0000us  k [2]\n"
  "1.0000s  1e300s  k [3]\n")
# gzip amplification: a ~1 MB .gz of nvprof text that inflates to ~1 GB, almost all of it
# application output the importer skips (memory must follow what is kept, not the inflated
# size). Lines of one repeated character compress about 1000:1; written as concatenated gzip
# members so that generating it stays fast.
def bomb(name, line, members, rows="   Start  Duration  Name\n 1.0000s  1.0000us  k [1]\n"):
    block = (line * (16 * 1024 * 1024 // len(line))).encode()
    member = gzip.compress(block, 9, mtime=0)
    with open(out / name, "wb") as f:
        f.write(gzip.compress((NV + rows).encode(), mtime=0))
        for _ in range(members):
            f.write(member)

bomb("nvprof_text_bomb_1gb.txt.gz", "x" * 4095 + "\n", 64)
# ... with realistic application noise (TensorFlow log lines): 4 MB .gz, 1 GB inflated.
bomb("nvprof_text_bomb_tf_noise_1gb.txt.gz",
     "2019-06-27 18:42:59.123456: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1512] "
     "Adding visible gpu devices: 0, 1\n", 64)
# ... and as CSV: a header, then ~1 GB of blank-ish lines.
bomb("nvprof_csv_bomb_1gb.csv.gz", "," * 4095 + "\n", 64, rows=HEAD + ROW.format(s="1.0", d="0.001", c=1))

# Chrome: many top-level keys before traceEvents (0.86 MB; issue: 7 s, gzipped 86 s).
keys = "".join(f'"key{i}":{i},' for i in range(66000))
many = "{" + keys + '"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1}]}'
w("chrome_many_top_level_keys.json", many)
gz("chrome_many_top_level_keys.json.gz", many)
# ... the same key repeated (0.86 MB plain, ~10 KB gzipped), plain and gzipped.
same = "{" + '"distributedInfo":{},' * 43000 + '"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1}]}'
w("chrome_repeated_top_level_key.json", same)
gz("chrome_repeated_top_level_key.json.gz", same)
# ... and many keys inside one event's args, and many keys after traceEvents.
w("chrome_many_arg_keys.json", '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":1,"dur":1,"args":{'
  + ",".join(f'"a{i}":{i}' for i in range(60000)) + "}}]}")
w("chrome_many_trailing_keys.json", '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":1,"dur":1}],' + keys.rstrip(",") + "}")
# Chrome: gzip amplification without an event boundary to cut at: 1 GB of `0,` elements, and
# one event whose 1 GB string holds no `,{` (both a few MB of gzip).
def chrome_bomb(name, head, unit, tail):
    block = (unit * (16 * 1024 * 1024 // len(unit))).encode()
    member = gzip.compress(block, 9, mtime=0)
    with open(out / name, "wb") as f:
        f.write(gzip.compress(head.encode(), mtime=0))
        for _ in range(64):
            f.write(member)
        f.write(gzip.compress(tail.encode(), mtime=0))

chrome_bomb("chrome_bomb_non_objects_1gb.json.gz", '{"traceEvents":[', "0,",
            '{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1}]}')
chrome_bomb("chrome_bomb_one_string_1gb.json.gz",
            '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},'
            '{"ph":"X","name":"big","pid":1,"tid":1,"ts":2,"dur":1,"args":{"s":"', "x",
            '"}},{"ph":"X","name":"b","pid":1,"tid":1,"ts":3,"dur":1}]}')
# Chrome: a trace cut inside its first event (issue: loads as an empty profile, exit 0).
w("chrome_cut_in_first_event.json", '{"schemaVersion":1,"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":12')
gz("chrome_cut_in_first_event.json.gz", '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":12')
# Kineto: 100 k one-nanosecond ProfilerSteps, then 100 k NCCL kernels after all of them (issue:
# `fleet` walked back over every step per kernel: 7 s, 41 s at 200 k), and a 1 MB process-group
# name with a newline on each kernel (issue: 1 MB table rows).
T0 = 1764000000000000
steps = ",".join(f'{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{i}","pid":1,"tid":1,"ts":{T0 + 2 * i // 1000}.{2 * i % 1000:03d},"dur":0.001}}' for i in range(100000))
nccl = ",".join(f'{{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)","pid":0,"tid":7,"ts":{T0 + 10000 + 10 * i},"dur":5,"args":{{"device":0,"stream":7,"correlation":{i},"Process Group Name":"0"}}}}' for i in range(100000))
w("kineto_100k_steps_then_100k_collectives.json", '{"distributedInfo":{"rank":0,"world_size":1},"traceEvents":[' + steps + "," + nccl + "]}")
big = '{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)","pid":0,"tid":7,"ts":%d,"dur":5,"args":{"device":0,"stream":7,"Process Group Name":"%s\\nx"}}'
w("kineto_1mb_process_group_names.json", '{"traceEvents":[' + ",".join(big % (T0 + 10 * i, "g" * 1000000) for i in range(8)) + "]}")
# Chrome: deep nesting, closed and unclosed, in an event and at the top.
w("chrome_deep_nesting_args.json", '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":'
  + "[" * 200000 + "]" * 200000 + "}]}")
w("chrome_deep_nesting_unclosed.json", '{"traceEvents":' + "[" * 500000)
w("chrome_deep_nesting_objects.json", '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":'
  + '{"a":' * 100000 + "1" + "}" * 100000 + "}]}")
# Chrome: i64-extreme timestamps and durations.
K = '{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":%s,"dur":%s,"args":{"device":0,"stream":7}}'
w("chrome_extreme_times.json", '{"traceEvents":[' + ",".join([
    K % ("9223372036854775.807", "9223372036854775.807"), K % ("-9223372036854775.808", "1"),
    K % ("1e300", "1e300"), K % ("9223372036854775807", "9223372036854775807"), K % ("1", "-5"),
    K % ("1", "2")]) + "]}")
w("chrome_extreme_base_time.json", '{"baseTimeNanoseconds":9223372036854775807,"traceEvents":[' + K % ("1", "2") + "]}")
# Chrome: many distinct threads and processes, each named (issue: linear scans).
names = ",".join(f'{{"ph":"M","name":"thread_name","pid":{i % 97},"tid":{i},"args":{{"name":"worker {i}"}}}},'
                 f'{{"ph":"M","name":"process_name","pid":{i % 97},"args":{{"name":"proc {i % 97}"}}}},'
                 f'{{"ph":"X","cat":"cpu_op","name":"op","pid":{i % 97},"tid":{i},"ts":{i},"dur":1}}'
                 for i in range(60000))
w("chrome_60k_named_threads.json", '{"traceEvents":[' + names + "]}")
# Chrome: 1 M tiny events on one thread with the same name (a fast path sanity check).
w("chrome_1m_events.json", '{"traceEvents":[' + ",".join(
    f'{{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":{i},"dur":1}}' for i in range(1000000)) + "]}")

# SQLite: copies of the samples with damaged times.
def damage(src, name, kind):
    dst = out / name
    shutil.copy(src, dst)
    os.chmod(dst, 0o644)
    c = sqlite3.connect(dst)
    tables = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    for t in tables:
        cols = [r[1] for r in c.execute(f'PRAGMA table_info("{t}")')]
        pairs = [(a, b) for a, b in (("start", "end"), ("timestamp", None), ("BeginNs", "EndNs"))
                 if a in cols and (b is None or b in cols)]
        for a, b in pairs:
            rowids = [r[0] for r in c.execute(f'SELECT rowid FROM "{t}" ORDER BY rowid LIMIT 3')]
            for k, rid in enumerate(rowids):
                if kind == "i64":
                    vals = [(I64_MIN + k, I64_MAX - k), (I64_MAX - k, I64_MAX), (I64_MIN, I64_MIN + 1)][k]
                elif kind == "reversed":
                    vals = (I64_MAX, I64_MIN)
                else:
                    vals = (1e300, -1e300) if k % 2 == 0 else (-1e300, 1e300)
                if b is None:
                    c.execute(f'UPDATE "{t}" SET "{a}" = ? WHERE rowid = ?', (vals[k % 2], rid))
                else:
                    c.execute(f'UPDATE "{t}" SET "{a}" = ?, "{b}" = ? WHERE rowid = ?', (vals[0], vals[1], rid))
    c.commit()
    c.close()

for sub in ("nvprof-sqlite", "nsys-sqlite", "rocm"):
    d = samples / sub
    if not d.is_dir():
        print(f"hostile.sh: no samples in {d}; SQLite cases skipped", file=sys.stderr)
        continue
    # The rocm folder holds text formats too: its databases only (rocprofv3, RPD, rocprof v1).
    dbs = [p for p in sorted(d.iterdir()) if p.read_bytes()[:16] == b"SQLite format 3\x00"]
    for src in dbs[:3 if sub == "rocm" else 2]:
        for kind in ("i64", "reversed", "1e300"):
            damage(src, f"{sub}_{src.stem[:24]}_{kind}.sqlite", kind)
PY

printf '%-48s %5s %7s %8s  %s\n' file exit seconds peak_MB "first line of stderr"
status=0
for f in "$DIR"/*; do
    args=()
    placed=
    for a in "${CMD[@]}"; do
        if [[ $a == '{}' ]]; then args+=("$f"); placed=1; else args+=("$a"); fi
    done
    [[ -z $placed ]] && args+=("$f")
    /usr/bin/time -f '%e %M' -o "$DIR/.time" timeout 10 "${args[@]}" >"$DIR/.out" 2>"$DIR/.err"
    rc=$?
    read -r secs kb <"$DIR/.time" 2>/dev/null || { secs=?; kb=0; }
    # /usr/bin/time prefixes "Command exited with non-zero status N" when the command fails.
    if [[ $secs == Command ]]; then read -r secs kb < <(tail -1 "$DIR/.time"); fi
    mb=$((kb / 1024))
    err=$(grep -v '^\s*$' "$DIR/.err" | head -1 | cut -c1-110)
    flag=
    if [[ $rc -eq 101 ]] || grep -q 'panicked' "$DIR/.err"; then flag+=" PANIC"; fi
    if [[ $rc -eq 124 || $rc -eq 137 ]]; then flag+=" TIMEOUT/KILLED"; fi
    if [[ $rc -ne 0 && $rc -ne 1 && -z $flag ]]; then flag+=" EXIT$rc"; fi
    if awk -v s="$secs" -v m="$MAX_SECONDS" 'BEGIN { exit !(s + 0 > m + 0) }'; then flag+=" SLOW"; fi
    if [[ $mb -gt $MAX_MB ]]; then flag+=" MEMORY"; fi
    if grep -Eq '"?gpu_total_ns"?[=:] *-' "$DIR/.out"; then flag+=" NEGATIVE_TOTAL"; fi
    # The load example prints span_ns=START..END: no real profile spans more than ~115 days.
    if [[ $rc -eq 0 ]] && grep -oE 'span_ns=-?[0-9]+\.\.-?[0-9]+' "$DIR/.out" |
        awk -F'[=.]+' '{ exit !($3 - $2 > 1e16) }'; then flag+=" HUGE_SPAN"; fi
    [[ -n $flag ]] && status=1
    [[ $rc -eq 0 ]] && err="(ok) $(head -c 110 "$DIR/.out" | head -1)"
    printf '%-48s %5s %7s %8s  %s%s\n' "$(basename "$f")" "$rc" "$secs" "$mb" "$err" "${flag:+  <-$flag}"
done
exit $status
