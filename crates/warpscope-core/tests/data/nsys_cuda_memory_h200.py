# Tiny PyTorch program for warpscope's Nsight Systems memory fixture:
# a few cudaMalloc-level segments made and released in three NVTX steps.
import json
import torch

MiB = 1 << 20
dev = torch.device("cuda:0")
torch.cuda.init()
torch.zeros(1, device=dev)  # context + first small segment (2 MiB small pool)
pin = torch.empty(MiB, dtype=torch.uint8, pin_memory=True)  # pinned host memory
torch.cuda.synchronize()

torch.cuda.nvtx.range_push("step0")
a = torch.ones(16 * MiB, device=dev)        # 64 MiB
b = torch.ones(8 * MiB, device=dev)         # 32 MiB
c = a * 2                                   # 64 MiB
del b
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()

torch.cuda.nvtx.range_push("step1")
d = torch.ones(32 * MiB, device=dev)        # 128 MiB, new segment
del d, c
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()

torch.cuda.nvtx.range_push("empty_cache")
torch.cuda.empty_cache()                    # cudaFree of the unused segments
torch.cuda.nvtx.range_pop()

torch.cuda.nvtx.range_push("step2")
e = torch.ones(24 * MiB, device=dev)        # 96 MiB
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()

stats = {
    "max_memory_allocated": torch.cuda.max_memory_allocated(dev),
    "max_memory_reserved": torch.cuda.max_memory_reserved(dev),
    "memory_allocated_end": torch.cuda.memory_allocated(dev),
    "memory_reserved_end": torch.cuda.memory_reserved(dev),
    "torch": torch.__version__,
    "segments": [
        {"address": s["address"], "total_size": s["total_size"], "pool": s["segment_type"]}
        for s in torch.cuda.memory_snapshot()
    ],
}
print("TORCHSTATS " + json.dumps(stats))
