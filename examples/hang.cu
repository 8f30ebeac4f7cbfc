// A kernel that never ends, to see the live lab's time limit (--timeout) at work:
//
//   warpscope live --source examples/hang.cu --kernel wait_for_flag \
//       --args 'i32[N]=0 f32[N]=0 i32=N' --sizes 1M,10M --timeout 10
//
// waits for a flag nobody sets: after 10 s the point fails with "the kernel did not finish
// within 10 s; it was stopped", the 10M point is reported as not run, and warpscope exits with 1
// (ending its process is what stops the kernel and frees the GPU). `finish_flag` is the same
// kernel with a flag that is set, and ends at once.

extern "C" __global__ void wait_for_flag(const volatile int *flag, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    while (flag[0] == 0) {
    }
    if (i < n) {
        out[i] = 1.0f;
    }
}

extern "C" __global__ void finish_flag(const volatile int *flag, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    while (flag[0] == 0) {
    }
    if (i < n) {
        out[i] = 2.0f;
    }
}
