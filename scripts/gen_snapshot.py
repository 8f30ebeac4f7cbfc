#!/usr/bin/env python3
"""Writes a synthetic PyTorch CUDA caching-allocator snapshot, shaped like what
torch.cuda.memory._dump_snapshot writes (a pickle, protocol 4), for measuring warpscope's
snapshot importer. Standard library only.

    python3 scripts/gen_snapshot.py OUT [--entries N] [--devices D] [--gzip] [--seed S]

OUT ending in .gz (or --gzip) is gzip-compressed. What it holds:
  - device_traces: N entries in all (split over D devices) of alloc, free_requested,
    free_completed, segment_alloc and segment_free, each a dict with the keys PyTorch writes
    (action, addr, size, stream, time_us, compile_context, user_metadata, frames), times in
    Unix-epoch microseconds, increasing;
  - frames: a few hundred distinct stacks of 20 to 50 frames drawn from a pool of frame dicts;
    entries share the same list objects, so the pickle refers to them through its memo, as
    PyTorch's do (a quarter of a million references in a real 13k-entry snapshot);
  - segments: the allocator's state after the trace, consistent with it (blocks in use are the
    allocations never freed, the gaps between them inactive), so that the totals replayed
    back from the end start at zero bytes allocated and reserved;
  - external_annotations: a ProfilerStep#i START/END pair every 2000 entries;
  - allocator_settings like PyTorch's, nested dict included.
"""

import argparse
import gzip
import pickle
import random

SEGMENT = 20 << 20
STEP_ENTRIES = 2000


def make_stacks(rng, n_stacks=300, pool=400):
    frames = [
        {"name": f"at::native::op_{i}(at::Tensor const&, c10::ArrayRef<long>)",
         "filename": rng.choice(["??", "", "Operators.cpp", "train.py", "RegisterCUDA_0.cpp"]),
         "line": rng.choice([0, 0, 0, rng.randint(1, 900)])}
        for i in range(pool)
    ]
    head = [
        {"name": "torch::unwind::unwind()", "filename": "??", "line": 0},
        {"name": "torch::CapturedTraceback::gather(bool, bool, bool)", "filename": "??", "line": 0},
        {"name": "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc("
                 "unsigned long, CUstream_st*)", "filename": "CUDACachingAllocator.cpp", "line": 0},
    ]
    return [head + rng.sample(frames, rng.randint(17, 47)) for _ in range(n_stacks)]


class Device:
    """One device's allocator: segments filled from the bottom, blocks freed at random."""

    def __init__(self, ordinal, rng, stacks, base):
        self.ordinal = ordinal
        self.rng = rng
        self.stacks = stacks
        self.next_segment = base
        self.segments = {}  # address -> {"size": n, "top": offset, "live": {addr: (size, frames)}}
        self.current = None  # the segment allocated from
        self.empty = []  # emptied segments kept for reuse
        self.live = []  # (segment, address) of blocks in use
        self.trace = []

    def entry(self, action, addr, size, t, frames):
        self.trace.append({
            "action": action, "addr": addr, "size": size, "stream": 0, "time_us": t,
            "compile_context": "N/A", "user_metadata": "", "frames": frames,
        })

    def alloc(self, t):
        size = self.rng.choice([512, 1024, 4096, 65536, 1 << 20, 4 << 20]) * self.rng.randint(1, 4)
        frames = self.rng.choice(self.stacks)
        cur = self.segments.get(self.current)
        if cur is not None and cur["top"] + size <= cur["size"]:
            seg = self.current
        elif self.empty:
            seg = self.current = self.empty.pop()
        else:
            seg = self.current = self.next_segment
            self.next_segment += SEGMENT
            self.segments[seg] = {"size": SEGMENT, "top": 0, "live": {}}
            self.entry("segment_alloc", seg, SEGMENT, t, frames)
        s = self.segments[seg]
        addr = seg + s["top"]
        s["top"] += size
        s["live"][addr] = (size, frames)
        self.live.append((seg, addr))
        self.entry("alloc", addr, size, t, frames)

    def free(self, t):
        i = self.rng.randrange(len(self.live))
        self.live[i], self.live[-1] = self.live[-1], self.live[i]
        seg, addr = self.live.pop()
        size, frames = self.segments[seg]["live"].pop(addr)
        self.entry("free_requested", addr, size, t, frames)
        self.entry("free_completed", addr, size, t, frames)
        s = self.segments[seg]
        if not s["live"]:
            s["top"] = 0
            if seg == self.current:
                pass
            elif self.rng.random() < 0.3:
                # An empty segment is given back now and then (empty_cache).
                del self.segments[seg]
                self.entry("segment_free", seg, s["size"], t, [])
            else:
                self.empty.append(seg)

    def segments_at_end(self):
        out = []
        for seg, s in sorted(self.segments.items()):
            blocks, pos, allocated = [], seg, 0
            for addr, (size, frames) in sorted(s["live"].items()):
                if addr > pos:
                    blocks.append({"address": pos, "size": addr - pos, "requested_size": 0,
                                   "state": "inactive", "frames": []})
                blocks.append({"address": addr, "size": size, "requested_size": size,
                               "state": "active_allocated", "frames": frames})
                allocated += size
                pos = addr + size
            if pos < seg + s["size"]:
                blocks.append({"address": pos, "size": seg + s["size"] - pos,
                               "requested_size": 0, "state": "inactive", "frames": []})
            out.append({
                "device": self.ordinal, "address": seg, "total_size": s["size"],
                "allocated_size": allocated, "active_size": allocated,
                "requested_size": allocated, "stream": 0, "segment_type": "large",
                "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
                "blocks": blocks,
            })
        return out


def build(entries, devices, seed):
    rng = random.Random(seed)
    stacks = make_stacks(rng)
    devs = [Device(d, rng, stacks, 0x7F0000000000 + (d << 36)) for d in range(devices)]
    t = 1_795_903_031_600_000
    annotations = []
    step = 0
    n = 0
    while n < entries:
        if n % STEP_ENTRIES == 0:
            for d in devs:
                if step > 0:
                    annotations.append({"stage": "END", "name": f"ProfilerStep#{step - 1}",
                                        "device": d.ordinal, "time_us": t})
                annotations.append({"stage": "START", "name": f"ProfilerStep#{step}",
                                    "device": d.ordinal, "time_us": t})
            step += 1
        d = devs[n % devices]
        before = len(d.trace)
        t += rng.randint(1, 40)
        if d.live and rng.random() < (0.45 if len(d.live) < 1000 else 0.55):
            d.free(t)
        else:
            d.alloc(t)
        n += len(d.trace) - before
    for d in devs:
        annotations.append({"stage": "END", "name": f"ProfilerStep#{step - 1}",
                            "device": d.ordinal, "time_us": t})
    return {
        "segments": [s for d in devs for s in d.segments_at_end()],
        "device_traces": [d.trace for d in devs],
        "allocator_settings": {
            "PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
            "garbage_collection_threshold": 0.0, "expandable_segments": False,
            "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)},
        },
        "external_annotations": annotations,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--devices", type=int, default=1)
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    snap = build(a.entries, a.devices, a.seed)
    data = pickle.dumps(snap, protocol=4)
    if a.gzip or a.out.endswith(".gz"):
        data = gzip.compress(data, 6, mtime=0)
    with open(a.out, "wb") as f:
        f.write(data)
    n = sum(len(t) for t in snap["device_traces"])
    print(f"{a.out}: {n} trace entries, {len(snap['segments'])} segments, {len(data)} bytes")


if __name__ == "__main__":
    main()
