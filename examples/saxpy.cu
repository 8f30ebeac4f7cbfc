// y = a * x + y, written by hand: try it in the live lab with
//
//   warpscope live --source examples/saxpy.cu --kernel saxpy \
//       --args 'f32=2.5 f32[N]=rand f32[N]=rand i32=N' --sizes 1M,10M,100M --flops 2*N
//
// and sweep its block size with --blocks 32,64,128,256,512,1024.

extern "C" __global__ void saxpy(float a, const float *__restrict__ x, float *__restrict__ y,
                                 int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

// The same with a grid-stride loop, as a C++ function (its symbol is mangled; the lab finds it
// by name all the same). Launch it with fewer blocks: --grid 1056 (8 per SM on 132 SMs).
__global__ void saxpy_grid_stride(float a, const float *__restrict__ x, float *__restrict__ y,
                                  int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = a * x[i] + y[i];
    }
}
