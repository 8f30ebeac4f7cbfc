#!/usr/bin/env python3
"""Write a large Kineto trace by repeating a real one end to end in time.

    python3 scripts/gen_kineto_trace.py SRC.json[.gz] OUT.json [--copies 10] [--drop-memory]

The events of SRC (everything before its metadata events) are written COPIES times. Copy k is
shifted by k times the source's span plus 1 ms, and its correlation ids, external ids, flow ids and
ProfilerStep numbers are offset so that no two copies share one; the metadata events follow once.
Numbers are rewritten in the text with integer nanosecond arithmetic, so the output keeps Kineto's
layout and every timestamp stays exact.

Ten copies of resnet50_b32_60steps.pt.trace.json (139 MB, 466,608 events) give the 1.39 GB,
4.66 M-event trace of the README's speed table.

--drop-memory leaves out the memory instants (`[memory]`, `[OutOfMemory]`) and nothing else: the
copies are shifted by the same span as with them, so the output is the one without the option
with those event objects cut out, byte for byte. 160 copies of
sample_profiles/resnet50_b32_fp32_mem_flops.pt.trace.json.gz (3,572 memory events of 21,513)
give the 1 GB pair of docs/memory.md's speed paragraph.
"""

import argparse
import gzip
import json
import re
import sys

NUMBER_FIELDS = re.compile(
    rb'"(ts|id|External id|correlation)": (\d+)(?:\.(\d+))?|ProfilerStep#(\d+)'
)


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read()


MEMORY_NAMES = ("[memory]", "[OutOfMemory]")
MEMORY_NAME = re.compile(rb'"name": "\[(?:memory|OutOfMemory)\]"')


def drop_memory(body):
    """`body` without its memory instants, and how many there were.

    Kineto writes one event object per `\n  {` ... `\n  },` at this indentation (deeper objects
    are indented further), so the body is cut there; a piece that names a memory event must
    be one whole instant of that name, or the layout is not the one this expects."""
    pieces = body.split(b"\n  {")
    kept, dropped = [pieces[0]], 0
    for piece in pieces[1:]:
        if MEMORY_NAME.search(piece) is None:
            kept.append(piece)
            continue
        try:
            ev = json.loads(b"{" + piece.rstrip().rstrip(b","))
        except ValueError:
            sys.exit(f"a memory event not laid out as one object per '\\n  {{': {piece[:200]!r}")
        if ev.get("name") not in MEMORY_NAMES or ev.get("ph") not in ("i", "I"):
            sys.exit(f"unexpected event naming a memory event: {piece[:200]!r}")
        dropped += 1
    return b"\n  {".join(kept), dropped


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
    ap.add_argument(
        "--drop-memory",
        action="store_true",
        help="leave out the [memory] and [OutOfMemory] instants, all else byte-identical",
    )
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
    # Dropped after the span is measured, so that both files shift their copies alike.
    dropped = 0
    if args.drop_memory:
        body, dropped = drop_memory(body)
        if MEMORY_NAME.search(text, body_end) is not None:
            sys.exit("memory events after the metadata: not the layout this expects")

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
        + (f", {dropped} memory events left out of each" if args.drop_memory else "")
    )


if __name__ == "__main__":
    main()
