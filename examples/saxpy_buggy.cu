// Two broken SAXPYs and a correct one to check them against:
//
//   warpscope live --source examples/saxpy_buggy.cu --kernel saxpy_buggy \
//       --args 'f32=2.5 f32[N]=rand f32[N]=rand i32=N' --check-against saxpy_ref
//
// fails the check (the index uses blockDim.y, which is 1, so most of y is never written), and
//
//   warpscope live --source examples/saxpy_buggy.cu --kernel saxpy_fault \
//       --args 'f32=2.5 f32[N]=rand f32[N]=rand i32=N'
//
// faults (an out-of-bounds write): the point is reported as failed and nothing crashes.

extern "C" __global__ void saxpy_ref(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

extern "C" __global__ void saxpy_buggy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.y + threadIdx.x;  // bug: blockDim.y instead of blockDim.x
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

extern "C" __global__ void saxpy_fault(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[(long long)i * 4096] = a * x[i];  // bug: a stride far past the end of y
    }
}
