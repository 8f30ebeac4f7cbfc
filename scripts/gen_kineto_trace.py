#!/usr/bin/env python3
"""Write a large Kineto trace by repeating a real one end to end in time.

    python3 scripts/gen_kineto_trace.py SRC.json[.gz] OUT.json [--copies 10]

The events of SRC (everything before its metadata events) are written COPIES times. Copy k is
shifted by k times the source's span plus 1 ms, and its correlation ids, external ids, flow ids and
ProfilerStep numbers are offset so that no two copies share one; the metadata events follow once.
Numbers are rewritten in the text with integer nanosecond arithmetic, so the output keeps Kineto's
layout and every timestamp stays exact.

Ten copies of resnet50_b32_60steps.pt.trace.json (139 MB, 466,608 events) give the 1.39 GB,
4.66 M-event trace of the README's speed table.
"""

import argparse
import gzip
import re
import sys

NUMBER_FIELDS = re.compile(
    rb'"(ts|id|External id|correlation)": (\d+)(?:\.(\d+))?|ProfilerStep#(\d+)'
)


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read()


def to_ns(whole, frac):
    frac = (frac or b"").ljust(3, b"0")
    if len(frac) > 3:
        sys.exit(f"timestamp with more than ns precision: {whole}.{frac}")
    return int(whole) * 1000 + int(frac)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--copies", type=int, default=10)
    args = ap.parse_args()

    text = read(args.src)
    start = text.index(b'"traceEvents": [') + len(b'"traceEvents": [')
    first_meta = text.find(b'"ph": "M"', start)
    if first_meta < 0:
        sys.exit("no metadata events: not a Kineto trace")
    body_end = text.rindex(b"\n  {", start, first_meta)
    body = text[start:body_end]

    # The source's span and its largest id, to shift and offset the copies.
    lo, hi, max_id, max_step = None, 0, 0, 0
    for m in NUMBER_FIELDS.finditer(body):
        if m.group(1) == b"ts":
            ns = to_ns(m.group(2), m.group(3))
            lo = ns if lo is None else min(lo, ns)
            hi = max(hi, ns)
        elif m.group(1) is not None:
            max_id = max(max_id, int(m.group(2)))
        else:
            max_step = max(max_step, int(m.group(4)))
    longest = max(
        (to_ns(m.group(1), m.group(2)) for m in re.finditer(rb'"dur": (\d+)(?:\.(\d+))?', body)),
        default=0,
    )
    shift_ns = hi + longest - lo + 1_000_000
    id_offset = 10 ** len(str(max_id + 1))
    step_offset = max_step + 1

    with open(args.out, "wb") as out:
        out.write(text[:start])
        for k in range(args.copies):

            def shifted(m, k=k):
                field = m.group(1)
                if field == b"ts":
                    ns = to_ns(m.group(2), m.group(3)) + k * shift_ns
                    return b'"ts": %d.%03d' % (ns // 1000, ns % 1000)
                if field is not None:
                    return b'"%s": %d' % (field, int(m.group(2)) + k * id_offset)
                return b"ProfilerStep#%d" % (int(m.group(4)) + k * step_offset)

            out.write(body if k == 0 else NUMBER_FIELDS.sub(shifted, body))
            if not body.rstrip().endswith(b","):
                out.write(b",")
        out.write(text[body_end:])
    print(
        f"{args.out}: {args.copies} copies of {len(body)} bytes of events, "
        f"shifted by {shift_ns} ns each"
    )


if __name__ == "__main__":
    main()
