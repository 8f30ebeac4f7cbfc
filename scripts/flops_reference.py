#!/usr/bin/env python3
"""An independent reference of warpscope's FLOPs attribution for PyTorch profiler traces,
written from docs/flops.md (sections 1-4 and 6) alone, standard library only.

    python3 scripts/flops_reference.py TRACE.json[.gz]

Prints JSON: per operator name the calls that count FLOPs or own GPU work, their counted FLOPs
and bytes and the GPU time they own; per kernel name the same, split from its owners (section
4); per device the model and hardware FLOPs; and per operator
name the FLOPs of every event with a formula, counted or not (`all_events`, what PyTorch's own
profiler sums). crates/warpscope-core/tests/flops.rs compares it with warpscope.
"""
import decimal
import gzip
import json
import math
import sys

ELEMENTWISE = set("""add add_ sub sub_ rsub mul mul_ div div_ neg neg_ abs exp exp_ log sqrt
sqrt_ rsqrt pow pow_ reciprocal relu relu_ clamp clamp_ clamp_min clamp_min_ clamp_max
clamp_max_ threshold threshold_ threshold_backward gelu gelu_ gelu_backward silu silu_
silu_backward sigmoid sigmoid_ sigmoid_backward tanh tanh_ tanh_backward hardtanh hardtanh_
hardtanh_backward leaky_relu leaky_relu_ where addcmul addcmul_ addcdiv addcdiv_ lerp lerp_
maximum minimum masked_fill masked_fill_""".split())
NORM_FORWARD = set("""batch_norm native_batch_norm cudnn_batch_norm miopen_batch_norm
_native_batch_norm_legit _native_batch_norm_legit_no_training layer_norm native_layer_norm
group_norm native_group_norm rms_norm _fused_rms_norm softmax _softmax log_softmax
_log_softmax""".split())
NORM_BACKWARD = set("""native_batch_norm_backward cudnn_batch_norm_backward
miopen_batch_norm_backward native_layer_norm_backward native_group_norm_backward
_fused_rms_norm_backward _softmax_backward_data _log_softmax_backward_data""".split())
REDUCTION = {"sum", "mean", "amax", "amin", "norm", "linalg_vector_norm"}
COPY = {"copy_", "clone", "fill_", "zero_"}
# Kernels that only move data for their operator (section 4).
LAYOUT_KERNELS = ("nchwToNhwc", "nhwcToNchw", "init_device_workspace")
MATMUL = {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "_scaled_mm"}
# name: (stride, padding, dilation, transposed (bool or arg index), output_padding, groups)
CONV = {
    "conv1d": (3, 4, 5, False, None, 6),
    "conv2d": (3, 4, 5, False, None, 6),
    "conv3d": (3, 4, 5, False, None, 6),
    "conv_transpose1d": (3, 4, 7, True, 5, 6),
    "conv_transpose2d": (3, 4, 7, True, 5, 6),
    "conv_transpose3d": (3, 4, 7, True, 5, 6),
    "convolution": (3, 4, 5, 6, 7, 8),
    "_convolution": (3, 4, 5, 6, 7, 8),
    "cudnn_convolution": (3, 2, 4, False, None, 5),
    "cudnn_convolution_transpose": (4, 2, 5, True, 3, 6),
    "miopen_convolution": (4, 3, 5, False, None, 6),
}
# name: (index of q, heads before sequence, backward)
ATTENTION = {
    "scaled_dot_product_attention": (0, True, False),
    "_scaled_dot_product_flash_attention": (0, True, False),
    "_scaled_dot_product_efficient_attention": (0, True, False),
    "_scaled_dot_product_cudnn_attention": (0, True, False),
    "_flash_attention_forward": (0, False, False),
    "_efficient_attention_forward": (0, False, False),
    "_scaled_dot_product_flash_attention_backward": (1, True, True),
    "_scaled_dot_product_efficient_attention_backward": (1, True, True),
    "_scaled_dot_product_cudnn_attention_backward": (1, True, True),
    "_flash_attention_backward": (1, False, True),
    "_efficient_attention_backward": (1, False, True),
}
DTYPE_BYTES = {
    "double": 8, "float": 4, "c10::Half": 2, "c10::BFloat16": 2, "long int": 8, "long": 8,
    "int64_t": 8, "int": 4, "short int": 2, "short": 2, "signed char": 1, "unsigned char": 1,
    "bool": 1, "c10::complex<c10::Half>": 4, "c10::complex<float>": 8,
    "c10::complex<double>": 16,
}
FLOATS = {"double", "float", "c10::Half", "c10::BFloat16"}
NOT_TENSOR = {"", "Scalar", "ScalarList", "TensorList", "GenericList", "Device", "Layout",
              "ScalarType", "MemoryFormat", "String", "None", "Stream", "Generator"}
U64 = 2 ** 64
I64 = 2 ** 63
MODEL = {"matmul", "conv", "attention"}
GPU_CATS = {"kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset"}
OTHER_GPU_CATS = {"gpu_user_annotation", "cuda_sync"}
API_CATS = {"cuda_runtime", "runtime", "cuda_driver", "xpu_runtime", "xpu_driver",
            "mtia_runtime", "privateuse1_runtime", "privateuse1_driver"}
OP_CATS = {"cpu_op", "operator", "hpu_op"}


class Unknown(Exception):
    """A figure that cannot be known."""


def check(v):
    if v is None or v < 0 or v >= U64:
        raise Unknown()
    return v


def prod(xs):
    r = 1
    for x in xs:
        r = check(r * x)
    return r


def dtype_bytes(t):
    if t in DTYPE_BYTES:
        return DTYPE_BYTES[t]
    if t.startswith("c10::Float8_"):
        return 1
    return None


class Input:
    def __init__(self, dims, typ, concrete):
        self.typ = typ if isinstance(typ, str) else ""
        t = self.typ.strip()
        ok = isinstance(dims, list) and all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in dims)
        if ok:
            n = 1
            for d in dims:
                n *= d
            ok = n < I64
        has_dims = not ok or len(dims) > 0
        if not isinstance(typ, str):
            self.kind = "unknown" if has_dims else "none"
        elif dtype_bytes(t) is not None:
            self.kind = "tensor"
        elif t in NOT_TENSOR:
            self.kind = "none"
        else:
            self.kind = "unknown" if has_dims else "none"
        self.invalid = not ok and self.kind != "none"
        self.shape = list(dims) if ok and self.kind != "none" else None
        self.ints = parse_ints(concrete)
        self.size = dtype_bytes(t)

    def numel(self):
        return prod(self.shape)

    def nbytes(self):
        if self.size is None:
            raise Unknown()
        return check(self.numel() * self.size)


def parse_ints(text):
    if not isinstance(text, str):
        return None
    t = text.strip()

    def word(w):
        w = w.strip()
        if w in ("True", "true"):
            return 1
        if w in ("False", "false"):
            return 0
        try:
            return int(w)
        except ValueError:
            return None

    if t.startswith("[") and t.endswith("]"):
        inner = t[1:-1]
        if not inner.strip():
            return []
        vals = [word(w) for w in inner.split(",")]
        return None if any(v is None for v in vals) else vals
    if not t:
        return None
    v = word(t)
    return None if v is None else [v]


def family(op):
    if op in MATMUL:
        return "matmul"
    if op in CONV or op == "convolution_backward":
        return "conv"
    if op in ATTENTION:
        return "attention"
    if op in ELEMENTWISE:
        return "elementwise"
    if op in NORM_FORWARD or op in NORM_BACKWARD:
        return "norm"
    if op in REDUCTION:
        return "reduction"
    if op in COPY:
        return "copy"
    return None


def tensors(inputs):
    return [i for i in inputs if i.kind != "none"]


def shape(inputs, i):
    if i >= len(inputs) or inputs[i].kind == "none" or inputs[i].shape is None:
        raise Unknown()
    return inputs[i].shape


def bytes_with_output(inputs, out):
    """Tensor arguments plus `out` elements of the first one's type; None when unknown."""
    try:
        return bytes_sum(inputs, out)
    except Unknown:
        return None


def bytes_sum(inputs, out):
    total = 0
    for t in tensors(inputs):
        total = check(total + t.nbytes())
    if out is not None:
        ts = tensors(inputs)
        if not ts or ts[0].size is None:
            raise Unknown()
        total = check(total + check(out * ts[0].size))
    return total


def broadcast(a, b):
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + list(a)
    b = [1] * (n - len(b)) + list(b)
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise Unknown()
    return out


def matmul(op, inputs):
    if op in ("mm", "_scaled_mm", "addmm"):
        a, b = (0, 1) if op != "addmm" else (1, 2)
        x, y = shape(inputs, a), shape(inputs, b)
        if len(x) != 2 or len(y) != 2:
            raise Unknown()
        batch, m, k, n = 1, x[0], x[1], y[1]
    elif op in ("bmm", "baddbmm"):
        a = 1 if op == "baddbmm" else 0
        x, y = shape(inputs, a), shape(inputs, a + 1)
        if len(x) != 3 or len(y) != 3:
            raise Unknown()
        batch, m, k, n = x[0], x[1], x[2], y[2]
    elif op == "linear":
        x, w = shape(inputs, 0), shape(inputs, 1)
        if not x:
            raise Unknown()
        if len(w) == 2:
            n = w[0]
        elif len(w) == 1:
            n = 1
        else:
            raise Unknown()
        batch, m, k = 1, prod(x[:-1]), x[-1]
    else:  # matmul
        x, y = shape(inputs, 0), shape(inputs, 1)
        if not x or not y:
            raise Unknown()
        if len(x) == 1:
            m, k, xb = 1, x[0], []
        else:
            m, k, xb = x[-2], x[-1], x[:-2]
        if len(y) == 1:
            n, yb = 1, []
        else:
            n, yb = y[-1], y[:-2]
        batch = prod(broadcast(xb, yb))
    flops = prod([2, batch, m, k, n])
    return flops, bytes_with_output(inputs, prod([batch, m, n]))


def conv_flop_count(x, w, out, transposed):
    if not x or len(w) < 2:
        raise Unknown()
    conv_shape = x[2:] if transposed else out[2:]
    return prod([prod(conv_shape), prod(w[2:]), x[0], w[0], w[1], 2])


def int_at(inputs, i):
    if i >= len(inputs) or inputs[i].ints is None or len(inputs[i].ints) != 1:
        raise Unknown()
    return inputs[i].ints[0]


def spatial(inputs, i, dims):
    if i >= len(inputs) or inputs[i].ints is None:
        raise Unknown()
    v = inputs[i].ints
    if len(v) == 1:
        return v * dims
    if len(v) == dims:
        return v
    raise Unknown()


def conv(op, inputs):
    if op == "convolution_backward":
        return conv_backward(inputs)
    s_i, p_i, d_i, tr, op_i, g_i = CONV[op]
    x, w = shape(inputs, 0), shape(inputs, 1)
    dims = len(x) - 2
    if dims <= 0 or len(w) != dims + 2:
        raise Unknown()
    transposed = tr if isinstance(tr, bool) else int_at(inputs, tr) != 0
    stride, padding, dilation = (spatial(inputs, i, dims) for i in (s_i, p_i, d_i))
    out_pad = spatial(inputs, op_i, dims) if (op_i is not None and transposed) else [0] * dims
    groups = int_at(inputs, g_i)
    out = [x[0], w[1] * groups if transposed else w[0]]
    for d in range(dims):
        i, k = x[d + 2], w[d + 2]
        span = dilation[d] * (k - 1)
        if transposed:
            size = (i - 1) * stride[d] - 2 * padding[d] + span + out_pad[d] + 1
        else:
            if stride[d] <= 0:
                raise Unknown()
            size = (i + 2 * padding[d] - span - 1) // stride[d] + 1
        if size < 0:
            raise Unknown()
        out.append(size)
    return conv_flop_count(x, w, out, transposed), bytes_with_output(inputs, prod(out))


def conv_backward(inputs):
    go, x, w = shape(inputs, 0), shape(inputs, 1), shape(inputs, 2)
    transposed = int_at(inputs, 7) != 0
    if 10 >= len(inputs) or inputs[10].ints is None:
        raise Unknown()
    mask = inputs[10].ints

    def wants(i):
        return i < len(mask) and mask[i] != 0

    def t(s):
        if len(s) < 2:
            raise Unknown()
        return [s[1], s[0]] + list(s[2:])

    flops, out = 0, 0
    if wants(0):
        flops = check(flops + conv_flop_count(go, w, x, not transposed))
        out = check(out + prod(x))
    if wants(1):
        if transposed:
            f = conv_flop_count(t(go), t(x), t(w), False)
        else:
            f = conv_flop_count(t(x), t(go), t(w), False)
        flops = check(flops + f)
        out = check(out + prod(w))
    if wants(2):
        if len(go) < 2:
            raise Unknown()
        out = check(out + go[1])
    return flops, bytes_with_output(inputs, out)


def bsd(s, heads_first):
    if len(s) == 4:
        if heads_first:
            b, h, sq, d = s
        else:
            b, sq, h, d = s
        return check(b * h), sq, d
    if heads_first and len(s) >= 2 and len(s) != 4:
        return prod(s[:-2]), s[-2], s[-1]
    raise Unknown()


def attention(op, inputs):
    first, heads_first, backward = ATTENTION[op]
    bh, s_q, d_q = bsd(shape(inputs, first), heads_first)
    _, s_k, _ = bsd(shape(inputs, first + 1), heads_first)
    _, _, d_v = bsd(shape(inputs, first + 2), heads_first)
    qk = prod([2, bh, s_q, s_k, d_q])
    sv = prod([2, bh, s_q, s_k, d_v])
    if backward:
        flops = check(check(3 * qk) + check(2 * sv))
        out = 0
        for i in (first, first + 1, first + 2):
            out = check(out + prod(shape(inputs, i)))
    else:
        flops = check(qk + sv)
        out = prod([bh, s_q, d_v])
    read = 0
    for i in range(first + 3):
        if i >= len(inputs):
            raise Unknown()
        read = check(read + inputs[i].nbytes())
    size = inputs[first].size
    if size is None:
        raise Unknown()
    return flops, check(read + check(out * size))


def work(op, inputs):
    """(family, flops, bytes, first float dtype) of a call; flops/bytes None when unknown."""
    fam = family(op)
    if fam is None:
        return None
    if inputs is None or any(i.invalid or i.kind == "unknown" for i in inputs):
        return fam, None, None
    try:
        if fam == "matmul":
            f, b = matmul(op, inputs)
        elif fam == "conv":
            f, b = conv(op, inputs)
        elif fam == "attention":
            f, b = attention(op, inputs)
        elif fam == "elementwise":
            ts = tensors(inputs)
            if not ts:
                raise Unknown()
            out = []
            for t in ts:
                if t.shape is None:
                    raise Unknown()
                out = broadcast(out, t.shape)
            n = prod(out)
            f, b = n, bytes_with_output(inputs, n)
        else:
            ts = tensors(inputs)
            if not ts or ts[0].shape is None:
                raise Unknown()
            n = prod(ts[0].shape)
            if fam == "norm":
                per = 10 if op in NORM_BACKWARD else 5
                f, b = check(n * per), bytes_with_output(inputs, n)
            elif fam == "reduction":
                f, b = n, bytes_with_output(inputs, None)
            else:
                f, b = 0, bytes_with_output(inputs, n if op == "clone" else None)
    except Unknown:
        return fam, None, None
    return fam, f, b


def count(v):
    """A JSON integer of 0 or more, else None."""
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < I64:
        return v
    return None


def recorded(args):
    """The FLOPs (and bytes) a call without a formula states in its args."""
    flops = args.get("flops")
    if isinstance(flops, bool) or not isinstance(flops, (int, decimal.Decimal)):
        return None
    return "recorded", count(flops), count(args.get("bytes"))


def to_ns(v):
    d = decimal.Decimal(str(v)) * 1000
    return int(d.to_integral_value(rounding=decimal.ROUND_HALF_UP))


def norm_id(v):
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        return int(v.strip())
    return v


def cat_class(cat):
    for part in (cat or "").split(","):
        p = part.strip().lower()
        if p in GPU_CATS:
            return "gpu"
        if p in OTHER_GPU_CATS:
            return "gpu_other"
        if p in API_CATS:
            return "api"
        if p in OP_CATS:
            return "op"
        if p in ("python_function", "python", "user_annotation", "trace", "fwdbwd",
                 "external_correlation", "cuda_event", "cuda_profiler_range",
                 "collective_comm", "overhead", "nvtx", "unified_memory", "ac2g", "async",
                 "async_cpu_to_gpu", "cpu_to_cuda", "cpu_instant_event", "memory"):
            return "other"
    return "other"


def share(total, part, whole):
    """total × part / whole in double precision, rounded half away from zero (section 4)."""
    if whole <= 0:
        return None
    return int(math.floor(float(total) * float(part) / float(whole) + 0.5))


def kernel_rows(tracks, owned, launches):
    """Per kernel (and copy and set) name: its owners' FLOPs and bytes split by GPU time over
    the owner's kernels that do arithmetic (section 4)."""
    rows = {}
    for (t, o), ls in launches.items():
        works, counted = tracks[t][2], tracks[t][3]
        w = works[o]
        flops = w[1] if counted[o] and w is not None else None
        nbytes = w[2] if flops is not None else None
        total = owned[(t, o)][0]
        arith_total = sum(d for _, d, a in ls if a)
        for kname, dur, arith in ls:
            r = rows.setdefault(kname, {"name": kname, "calls": 0, "flops": None,
                                        "bytes": None, "gpu_time_ns": 0})
            r["calls"] += 1
            r["gpu_time_ns"] += dur
            if flops is None:
                continue
            if arith_total <= 0:
                f, b = share(flops, dur, total), share(nbytes, dur, total) if nbytes is not None else None
            elif arith:
                f = share(flops, dur, arith_total)
                b = share(nbytes, dur, arith_total) if nbytes is not None else None
            else:
                f, b = 0, None
            if f is None:
                continue
            r["flops"] = (r["flops"] or 0) + f
            if b is not None:
                r["bytes"] = (r["bytes"] or 0) + b
    return rows


def main():
    path = sys.argv[1]
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        data = json.load(f, parse_float=decimal.Decimal)
    events = data.get("traceEvents", []) if isinstance(data, dict) else data
    threads = {}
    gpu = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e:
            continue
        cls = cat_class(e.get("cat"))
        start = to_ns(e["ts"])
        dur = max(to_ns(e.get("dur", 0)), 0)
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        if cls == "gpu":
            is_kernel = "kernel" in [p.strip().lower() for p in (e.get("cat") or "").split(",")]
            gpu.append((start, dur, args, e.get("pid"), e.get("name", ""), is_kernel))
            continue
        if cls == "gpu_other":
            continue
        key = (norm_id(e.get("pid")), norm_id(e.get("tid")))
        threads.setdefault(key, []).append((start, dur, e.get("name", ""), cls, args))
    # Nesting per thread: sorted by start, longer first; parent = innermost open event.
    calls_by_corr = {}
    tracks = []
    for key in sorted(threads, key=str):
        evs = sorted(threads[key], key=lambda x: (x[0], -x[1]))
        parent = []
        stack = []
        for i, (start, dur, _, _, _) in enumerate(evs):
            while stack and stack[-1][0] <= start:
                stack.pop()
            parent.append(stack[-1][1] if stack else None)
            stack.append((start + dur, i))
        tracks.append((evs, parent))
    # The work of each operator call.
    report_all = {}
    for t, (evs, parent) in enumerate(tracks):
        works = []
        for start, dur, name, cls, args in evs:
            w = None
            if cls == "op" and name.startswith("aten::"):
                dims = args.get("Input Dims")
                if isinstance(dims, list):
                    types = args.get("Input type")
                    types = types if isinstance(types, list) else []
                    conc = args.get("Concrete Inputs") if "conv" in name else None
                    conc = conc if isinstance(conc, list) else []
                    n = max(len(dims), len(types))
                    inputs = [Input(dims[i] if i < len(dims) else [],
                                    types[i] if i < len(types) else None,
                                    conc[i] if i < len(conc) else None) for i in range(n)]
                else:
                    inputs = None
                w = work(name[len("aten::"):], inputs)
                if w is not None and w[1] is not None:
                    report_all[name] = report_all.get(name, 0) + w[1]
            if w is None and cls == "op" and not isinstance(args.get("Input Dims"), list):
                w = recorded(args)
            works.append(w)
        # Count once (docs/flops.md section 3).
        n = len(evs)
        heavy_below = [False] * n
        known_below = [False] * n
        for i in range(n - 1, -1, -1):
            w = works[i]
            known = w is not None and w[1] is not None
            heavy = known and w[0] in MODEL
            p = parent[i]
            if p is not None:
                heavy_below[p] = heavy_below[p] or heavy_below[i] or heavy
                known_below[p] = known_below[p] or known_below[i] or known
        counted = [False] * n
        inside = [False] * n
        owner = [None] * n
        for i in range(n):
            p = parent[i]
            w = works[i]
            known = w is not None and w[1] is not None
            heavy = known and w[0] in MODEL
            if p is not None:
                pw = works[p]
                p_heavy = pw is not None and pw[1] is not None and pw[0] in MODEL
                inside[i] = inside[p] or (counted[p] and p_heavy)
            if heavy:
                counted[i] = not heavy_below[i]
            elif known:
                counted[i] = not inside[i] and not known_below[i]
            po = owner[p] if p is not None else None
            if counted[i]:
                owner[i] = i
            elif po is not None and counted[po]:
                owner[i] = po
            elif evs[i][3] == "op":
                owner[i] = i
            else:
                owner[i] = po
        tracks[t] = (evs, parent, works, counted, owner)
        for i, (start, dur, name, cls, args) in enumerate(evs):
            if cls == "api" and "correlation" in args:
                c = args["correlation"]
                calls_by_corr.setdefault(c, (t, i))
    owned = {}
    # Per owner: its launches (name, duration, does arithmetic), for the kernel rows.
    launches = {}
    for start, dur, args, pid, kname, is_kernel in gpu:
        c = args.get("correlation")
        if c is None or c not in calls_by_corr:
            continue
        t, i = calls_by_corr[c]
        o = tracks[t][4][i]
        if o is None:
            continue
        device = args.get("device", pid)
        g = owned.setdefault((t, o), [0, None, None])
        g[0] += dur
        if g[1] is None or start < g[1]:
            g[1], g[2] = start, device
        arith = is_kernel and not any(p in kname for p in LAYOUT_KERNELS)
        launches.setdefault((t, o), []).append((kname, dur, arith))
    rows = {}
    devices = {}
    for t, (evs, parent, works, counted, owner) in enumerate(tracks):
        for i, (start, dur, name, cls, args) in enumerate(evs):
            own = owned.get((t, i))
            if not counted[i] and own is None:
                continue
            r = rows.setdefault(name, {"name": name, "calls": 0, "flops": None,
                                       "bytes": None, "gpu_time_ns": 0})
            r["calls"] += 1
            gpu_ns = own[0] if own else 0
            r["gpu_time_ns"] += gpu_ns
            w = works[i]
            if counted[i]:
                r["flops"] = (r["flops"] or 0) + w[1]
                if w[2] is not None:
                    r["bytes"] = (r["bytes"] or 0) + w[2]
                if own is not None:
                    d = devices.setdefault(own[2], {"device": own[2], "model_flops": 0,
                                                    "hardware_flops": 0})
                    d["hardware_flops"] += w[1]
                    if w[0] in MODEL:
                        d["model_flops"] += w[1]
    kernels = kernel_rows(tracks, owned, launches)
    out = {
        "operators": sorted(rows.values(), key=lambda r: r["name"]),
        "kernels": sorted(kernels.values(), key=lambda r: r["name"]),
        "devices": sorted(devices.values(), key=lambda d: str(d["device"])),
        "all_events": dict(sorted(report_all.items())),
    }
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
