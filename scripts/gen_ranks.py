#!/usr/bin/env python3
"""Write the per-rank Kineto traces of a synthetic data-parallel job with planted stragglers.

    python3 scripts/gen_ranks.py OUT_DIR [--ranks 8] [--steps 4] [--buckets 3] [--kernels 6]
                                 [--slow-rank 5] [--slow-factor 1.3] [--late-rank 2]
                                 [--late-us 400] [--gzip] [--target-mb 0] [--old-nccl-names]
                                 [--no-subgroups] [--base-time]

Every rank writes `OUT_DIR/job_rank<R>.json` (Kineto layout: `distributedInfo` with rank,
world size and the process groups, `deviceProperties`, `traceEvents` with Unix-epoch
microsecond timestamps written with nanosecond decimals). A step (`ProfilerStep#N` on the CPU)
runs BUCKETS buckets; a bucket is KERNELS compute kernels launched from the CPU (cpu_op →
cudaLaunchKernel → kernel, with `ac2g` flows), then an all-reduce on the default process group
("0", all ranks) on the communication stream, and each step ends with an all-gather inside the
rank's half of the job (process groups "1" and "2") when there are 4 ranks or more.

How collectives are timed (what NCCL does): a rank's collective kernel starts when that rank
arrives (its bucket's compute is done, plus its launch delay) and ends, on every rank of the
group, when the last rank of the group has arrived plus the transfer time. So a late rank's
kernel is short and the others' kernels are long: they wait for it.

Planted stragglers (set to -1 to switch one off):
  * SLOW_RANK runs its compute kernels SLOW_FACTOR times longer (a slow GPU);
  * LATE_RANK launches every collective LATE_US microseconds after its compute is done (a slow
    host: data loading, Python, a noisy neighbour).
Everything else carries a small deterministic jitter (seeded), so no two ranks tie.

--target-mb N repeats steps until each file is about N MB (for the open benchmark).
Prints one line per file and, last, the planted stragglers.
"""

import argparse
import gzip
import json
import os
import random

EPOCH_US = 1_764_000_000_000_000  # 2025-11-24, Unix microseconds
COMPUTE_KERNELS = [
    ("aten::mm", "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", 180_000),
    ("aten::add_", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)", 25_000),
    ("aten::relu", "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)", 15_000),
    ("aten::convolution", "void cudnn::cnn::conv2d_grouped_direct_kernel<false, true, false, false, 0, 0, int, float, float, float, float, float, float>(cudnn::cnn::GroupedDirectFpropParams, float const*, float const*, float*, float, float, float const*, float const*, float const*, cudnnActivationStruct)", 120_000),
    ("aten::native_layer_norm", "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)", 30_000),
    ("aten::softmax", "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)", 20_000),
]
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
ALLGATHER = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
# NCCL before 2.19 (what HTA 0.5.0's straggler analysis looks for: names starting `ncclKernel`).
OLD_ALLREDUCE = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
OLD_ALLGATHER = "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"
COMPUTE_STREAM = 7
COMM_STREAM = 20
LAUNCH_NS = 4_000  # cudaLaunchKernel duration
LAUNCH_GAP_NS = 2_000  # host time between launches
QUEUE_NS = 6_000  # launch to kernel start when the stream is free
XFER_NS_PER_NELEM = 0.02


# Kineto 2024+ writes times relative to `baseTimeNanoseconds` (set by --base-time).
RELATIVE = False


def us(ns):
    """Unix-epoch microseconds with nanosecond decimals, as text (exact); with --base-time,
    microseconds from the job's base time."""
    total = ns if RELATIVE else EPOCH_US * 1000 + ns
    return f"{total // 1000}.{total % 1000:03d}"


class Rank:
    def __init__(self, rank):
        self.rank = rank
        self.events = []
        self.correlation = 1000
        self.external = 1
        self.compute_free_ns = 0  # when the compute stream is free
        self.comm_free_ns = 0

    def x(self, cat, name, pid, tid, start_ns, dur_ns, args=None):
        e = f'{{"ph": "X", "cat": "{cat}", "name": {json.dumps(name)}, "pid": {pid}, "tid": {tid}, "ts": {us(start_ns)}, "dur": {dur_ns // 1000}.{dur_ns % 1000:03d}'
        if args is not None:
            e += ', "args": ' + json.dumps(args)
        self.events.append(e + "}")

    def launch(self, cpu_ns, op, kernel, dur_ns, stream, extra_args=None):
        """cpu_op + cudaLaunchKernel at cpu_ns, the kernel on `stream` when it is free.
        Returns (kernel start, kernel end, host time after the launch)."""
        self.correlation += 1
        self.external += 1
        c, ext = self.correlation, self.external
        pid, tid = 1000 + self.rank, 1000 + self.rank
        op_dur = LAUNCH_NS + 3_000
        self.x("cpu_op", op, pid, tid, cpu_ns, op_dur, {"External id": ext})
        launch_ns = cpu_ns + 1_500
        self.x("cuda_runtime", "cudaLaunchKernel", pid, tid, launch_ns, LAUNCH_NS,
               {"External id": ext, "cbid": 211, "correlation": c})
        self.events.append(f'{{"ph": "s", "id": {c}, "pid": {pid}, "tid": {tid}, "ts": {us(launch_ns)}, "cat": "ac2g", "name": "ac2g"}}')
        free = self.compute_free_ns if stream == COMPUTE_STREAM else self.comm_free_ns
        start = max(launch_ns + QUEUE_NS, free)
        args = {"External id": ext, "queued": 0, "device": 0, "context": 1, "stream": stream,
                "correlation": c, "registers per thread": 128, "shared memory": 49152,
                "blocks per SM": 1.2, "warps per SM": 9.6, "grid": [132, 1, 1],
                "block": [256, 1, 1], "est. achieved occupancy %": 25}
        if extra_args:
            args.update(extra_args)
        self.x("kernel", kernel, 0, stream, start, dur_ns, args)
        self.events.append(f'{{"ph": "f", "id": {c}, "pid": 0, "tid": {stream}, "ts": {us(start)}, "cat": "ac2g", "name": "ac2g", "bp": "e"}}')
        end = start + dur_ns
        if stream == COMPUTE_STREAM:
            self.compute_free_ns = end
        else:
            self.comm_free_ns = end
        return start, end, cpu_ns + op_dur + LAUNCH_GAP_NS


def process_groups(world, subgroups=True):
    """(name, description, ranks) of the job's process groups."""
    groups = [("0", "default_pg", list(range(world)))]
    if world >= 4 and subgroups:
        half = world // 2
        groups.append(("1", "half_0", list(range(half))))
        groups.append(("2", "half_1", list(range(half, world))))
    return groups


def collective(ranks, members, arrive_ns, name, kernel, group, nelems, op):
    """One collective over `members`: each member's kernel from its arrival to the last arrival
    plus the transfer. `arrive_ns[r]` is the host time at which rank r launches it."""
    starts = {}
    for r in members:
        # The kernel starts when the stream is free after the launch.
        starts[r] = max(arrive_ns[r] + 1_500 + QUEUE_NS, ranks[r].comm_free_ns)
    end = max(starts.values()) + int(nelems * XFER_NS_PER_NELEM) + 8_000
    pg_name, pg_desc, pg_ranks = group
    args = {"Collective name": name, "In msg nelems": nelems, "Out msg nelems": nelems,
            "Group size": len(members), "dtype": "Float", "Process Group Name": pg_name,
            "Process Group Description": pg_desc, "Process Group Ranks": str(pg_ranks)}
    for r in members:
        rk = ranks[r]
        rk.comm_free_ns = starts[r]
        saved = rk.compute_free_ns
        rk.launch(arrive_ns[r], op, kernel, end - starts[r], COMM_STREAM, args)
        rk.compute_free_ns = saved
    return end


def generate(args):
    world = args.ranks
    rng = random.Random(args.seed)
    groups = process_groups(world, not args.no_subgroups)
    ranks = [Rank(r) for r in range(world)]
    # Per-rank speed jitter (±1%) and per-launch jitter below.
    speed = [1.0 + rng.uniform(-0.01, 0.01) for _ in range(world)]
    if 0 <= args.slow_rank < world:
        speed[args.slow_rank] *= args.slow_factor
    step_start = 1_000_000
    for step in range(args.steps):
        cpu = [step_start] * world
        for rk in ranks:
            rk.compute_free_ns = max(rk.compute_free_ns, step_start)
        step_cpu_start = list(cpu)
        for bucket in range(args.buckets):
            arrive = {}
            for r, rk in enumerate(ranks):
                for k in range(args.kernels):
                    op, kernel, base = COMPUTE_KERNELS[(bucket + k) % len(COMPUTE_KERNELS)]
                    dur = int(base * speed[r] * (1.0 + rng.uniform(-0.02, 0.02)))
                    _, _, cpu[r] = rk.launch(cpu[r], op, kernel, dur, COMPUTE_STREAM)
                # The collective is launched once the bucket's gradients are ready (NCCL waits
                # on an event recorded after the last compute kernel).
                delay = int(rng.uniform(0, 3_000))
                if r == args.late_rank:
                    delay += args.late_us * 1000
                arrive[r] = max(cpu[r], rk.compute_free_ns) + delay
            end = collective(ranks, range(world), arrive, "allreduce",
                             OLD_ALLREDUCE if args.old_nccl_names else ALLREDUCE, groups[0],
                             4_000_000 + 1_000_000 * bucket, "nccl:all_reduce")
            for r in range(world):
                cpu[r] = max(cpu[r], arrive[r]) + 10_000
        step_end = end
        for group in groups[1:]:
            members = group[2]
            arrive = {r: max(cpu[r], ranks[r].compute_free_ns) + int(rng.uniform(0, 2_000))
                      + (args.late_us * 1000 if r == args.late_rank else 0) for r in members}
            e = collective(ranks, members, arrive, "allgather",
                           OLD_ALLGATHER if args.old_nccl_names else ALLGATHER, group, 1_000_000,
                           "nccl:_all_gather_base")
            step_end = max(step_end, e)
        step_end += 20_000
        for r, rk in enumerate(ranks):
            pid = 1000 + r
            rk.x("user_annotation", f"ProfilerStep#{step + 1}", pid, pid, step_cpu_start[r],
                 step_end - step_cpu_start[r])
        step_start = step_end + 5_000
    return ranks, groups


def write(args, ranks, groups):
    os.makedirs(args.out_dir, exist_ok=True)
    world = len(ranks)
    paths = []
    for rk in ranks:
        head = {
            "schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3",
                                  "totalGlobalMem": 85045477376, "computeMajor": 9,
                                  "computeMinor": 0, "maxThreadsPerBlock": 1024,
                                  "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
                                  "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 132,
                                  "regsPerMultiprocessor": 65536,
                                  "sharedMemPerBlockOptin": 232448,
                                  "sharedMemPerMultiprocessor": 233472}],
            **({"baseTimeNanoseconds": EPOCH_US * 1000} if RELATIVE else {}),
            "distributedInfo": {"backend": "nccl", "rank": rk.rank, "world_size": world,
                                "pg_count": len(groups),
                                "pg_config": [{"pg_name": n, "pg_desc": d,
                                               "backend_config": "cuda:nccl",
                                               "pg_size": len(m), "ranks": m}
                                              for n, d, m in groups]},
        }
        pid = 1000 + rk.rank
        meta = [
            f'{{"name": "process_name", "ph": "M", "ts": {us(0)}, "pid": {pid}, "tid": 0, "args": {{"name": "python3"}}}}',
            f'{{"name": "process_name", "ph": "M", "ts": {us(0)}, "pid": 0, "tid": 0, "args": {{"name": "python3"}}}}',
            f'{{"name": "process_labels", "ph": "M", "ts": {us(0)}, "pid": 0, "tid": 0, "args": {{"labels": "GPU 0"}}}}',
        ]
        text = json.dumps(head)[:-1] + ', "traceEvents": [\n' + ",\n".join(rk.events + meta) + \
            '\n], "traceName": "job_rank%d.json", "displayTimeUnit": "ms"}\n' % rk.rank
        path = os.path.join(args.out_dir, f"job_rank{rk.rank}.json" + (".gz" if args.gzip else ""))
        data = text.encode()
        if args.gzip:
            with gzip.open(path, "wb", compresslevel=6) as f:
                f.write(data)
        else:
            with open(path, "wb") as f:
                f.write(data)
        paths.append((path, len(data)))
    return paths


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--buckets", type=int, default=3)
    ap.add_argument("--kernels", type=int, default=6, help="compute kernels per bucket")
    ap.add_argument("--slow-rank", type=int, default=5)
    ap.add_argument("--slow-factor", type=float, default=1.3)
    ap.add_argument("--late-rank", type=int, default=2)
    ap.add_argument("--late-us", type=int, default=400)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--base-time", action="store_true",
                    help="times relative to baseTimeNanoseconds (Kineto 2024+), not epoch µs")
    ap.add_argument("--no-subgroups", action="store_true",
                    help="only the default process group: no all-gathers in the halves")
    ap.add_argument("--old-nccl-names", action="store_true",
                    help="name NCCL kernels as NCCL < 2.19 did (ncclKernel_AllReduce_RING_LL_...)")
    ap.add_argument("--target-mb", type=float, default=0,
                    help="repeat steps until each file is about this many MB")
    args = ap.parse_args()
    global RELATIVE
    RELATIVE = args.base_time
    if args.target_mb > 0:
        # One step's size, measured on a one-step run, sets the step count.
        probe = argparse.Namespace(**{**vars(args), "steps": 1})
        ranks, _ = generate(probe)
        per_step = sum(len(e) + 2 for e in ranks[0].events)
        args.steps = max(1, int(args.target_mb * 1e6 / per_step))
    ranks, groups = generate(args)
    for path, size in write(args, ranks, groups):
        print(f"{path}\t{size} bytes")
    print(f"planted: slow compute on rank {args.slow_rank} (x{args.slow_factor}), "
          f"late arrival on rank {args.late_rank} (+{args.late_us} us)")


if __name__ == "__main__":
    main()
