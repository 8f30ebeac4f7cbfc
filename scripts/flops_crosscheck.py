#!/usr/bin/env python3
"""Cross-check of warpscope's FLOPs against torch.utils.flop_counter.FlopCounterMode
(docs/flops.md, section 8), in two halves.

On a GPU machine with PyTorch and torchvision:

    python3 scripts/flops_crosscheck.py gpu OUTDIR

trains ResNet-50 at batch 32 (synthetic inputs, Adam) in FP32 and under bf16 autocast: three
warm-up steps, one step under FlopCounterMode (its total and per-operator counts, forward and
backward), then two steps under torch.profiler with record_shapes=True, saved as
OUTDIR/resnet50_b32_{fp32,bf16}_crosscheck.pt.trace.json.gz, and the counts in
OUTDIR/flop_counter.json.

Then, where warpscope is built:

    BIN=target/release/warpscope python3 scripts/flops_crosscheck.py compare OUTDIR > docs/flops_crosscheck.json

runs `warpscope roofline --format json` on those traces (and on the committed samples of the
same model and batch, ../shared/samples/kineto-h200-mem/) and sets warpscope's model FLOPs per
step beside FlopCounterMode's, per operator family.
"""
import gzip
import json
import os
import subprocess
import sys

STEPS_PROFILED = 2


def gpu(out):
    import torch
    import torch.nn.functional as F
    import torchvision
    from torch.utils.flop_counter import FlopCounterMode

    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    result = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "runs": {}}
    for amp in (False, True):
        name = "bf16" if amp else "fp32"
        model = torchvision.models.resnet50().cuda()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        x = torch.randn(32, 3, 224, 224, device="cuda")
        y = torch.randint(0, 1000, (32,), device="cuda")

        def step():
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
                loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

        for _ in range(3):
            step()
        torch.cuda.synchronize()
        with FlopCounterMode(display=False) as counter:
            step()
        torch.cuda.synchronize()
        by_op = {str(k): int(v) for k, v in counter.get_flop_counts()["Global"].items()}
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts, record_shapes=True) as prof:
            for _ in range(STEPS_PROFILED):
                step()
                prof.step()
        torch.cuda.synchronize()
        raw = os.path.join(out, f"resnet50_b32_{name}_crosscheck.pt.trace.json")
        prof.export_chrome_trace(raw)
        with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb", compresslevel=9) as g:
            g.write(f.read())
        os.remove(raw)
        result["runs"][name] = {
            "flop_counter_total_per_step": int(counter.get_total_flops()),
            "flop_counter_by_op_per_step": by_op,
            "trace": os.path.basename(raw) + ".gz",
            "steps_in_trace": STEPS_PROFILED,
        }
        print(name, result["runs"][name]["flop_counter_total_per_step"], by_op, flush=True)
    with open(os.path.join(out, "flop_counter.json"), "w") as f:
        json.dump(result, f, indent=1)


# flop_counter's operator names (aten.X.default) and the families of docs/flops.md.
FAMILY = {
    "aten.convolution": "conv",
    "aten.convolution_backward": "conv",
    "aten.mm": "matmul",
    "aten.addmm": "matmul",
    "aten.bmm": "matmul",
    "aten.baddbmm": "matmul",
}


def family_of(op):
    base = op.rsplit(".", 1)[0] if op.count(".") >= 2 else op
    return FAMILY.get(base, "attention" if "attention" in base else "other")


def warpscope_roofline(binary, trace):
    out = subprocess.run([binary, "roofline", trace, "--format", "json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def compare(out):
    binary = os.environ.get("BIN", "target/release/warpscope")
    counts = json.load(open(os.path.join(out, "flop_counter.json")))
    samples = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "samples",
                           "kineto-h200-mem")
    report = {"what": "warpscope's model FLOPs per training step against "
                      "torch.utils.flop_counter.FlopCounterMode, ResNet-50 batch 32 on an H200 "
                      "(scripts/flops_crosscheck.py; docs/flops.md section 8)",
              "torch": counts["torch"], "device": counts["device"], "runs": {}}
    for name, run in counts["runs"].items():
        steps = run["steps_in_trace"]
        fc_total = run["flop_counter_total_per_step"]
        fc_family = {}
        for op, v in run["flop_counter_by_op_per_step"].items():
            fam = family_of(op)
            fc_family[fam] = fc_family.get(fam, 0) + v
        entry = {"flop_counter": {"total": fc_total, "by_op": run["flop_counter_by_op_per_step"],
                                  "by_family": fc_family}}
        traces = {"crosscheck_trace": os.path.join(out, run["trace"]),
                  "committed_sample": os.path.join(
                      samples, f"resnet50_b32_{name}_mem_flops.pt.trace.json.gz")}
        for label, path in traces.items():
            if not os.path.exists(path):
                continue
            r = warpscope_roofline(binary, path)
            model = sum(d["model_flops"] for d in r["devices"])
            fam = {}
            for o in r["operators"]:
                if o["family"] in ("matmul", "conv", "attention") and o["flops"] is not None:
                    fam[o["family"]] = fam.get(o["family"], 0) + o["flops"]
            per_step = {k: v // steps for k, v in fam.items()}
            entry[label] = {
                "trace": os.path.basename(path),
                "steps": steps,
                "model_flops_per_step": model // steps,
                "by_family_per_step": per_step,
                "by_operator": {o["name"]: o["flops"] // steps for o in r["operators"]
                                if o["family"] in ("matmul", "conv", "attention")
                                and o["flops"] is not None},
                "difference_pct": 100.0 * (model / steps - fc_total) / fc_total,
            }
        report["runs"][name] = entry
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("gpu", "compare"):
        sys.exit(__doc__)
    (gpu if sys.argv[1] == "gpu" else compare)(sys.argv[2])
