// Sum of n floats: each thread adds a grid-strided slice, warps reduce with shuffles, each block
// adds its partial sum to *out with one atomic. *out must be zero before the launch.
extern "C" __global__ void reduce_sum(const float *__restrict__ x, float *__restrict__ out,
                                      unsigned long long n) {
    __shared__ float warp_sums[32];
    float acc = 0.0f;
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        acc += x[i];
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        acc += __shfl_down_sync(0xffffffffu, acc, offset);
    }
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    if (lane == 0) {
        warp_sums[warp] = acc;
    }
    __syncthreads();
    if (warp == 0) {
        int warps = (blockDim.x + 31) >> 5;
        acc = lane < warps ? warp_sums[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) {
            acc += __shfl_down_sync(0xffffffffu, acc, offset);
        }
        if (lane == 0) {
            atomicAdd(out, acc);
        }
    }
}
