// Device-to-device copies of n floats: a scalar one, and a bandwidth-tuned one that moves 16 bytes
// per load (float4), keeps four loads in flight per thread and strides over the grid.
extern "C" __global__ void copy_scalar(const float *__restrict__ src, float *__restrict__ dst,
                                       unsigned long long n) {
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        dst[i] = src[i];
    }
}

// n4 = n / 4 float4 elements; the tail (n % 4 floats) is copied by the first threads.
extern "C" __global__ void copy_vec4(const float4 *__restrict__ src, float4 *__restrict__ dst,
                                     unsigned long long n4, const float *__restrict__ src_tail,
                                     float *__restrict__ dst_tail, unsigned int tail) {
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        float4 v0 = src[i];
        float4 v1 = src[i + stride];
        float4 v2 = src[i + 2 * stride];
        float4 v3 = src[i + 3 * stride];
        dst[i] = v0;
        dst[i + stride] = v1;
        dst[i + 2 * stride] = v2;
        dst[i + 3 * stride] = v3;
    }
    for (; i < n4; i += stride) {
        dst[i] = src[i];
    }
    unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < tail) {
        dst_tail[t] = src_tail[t];
    }
}
