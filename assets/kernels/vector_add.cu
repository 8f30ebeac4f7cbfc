// c = a + b over n floats. A grid-stride loop, so the same kernel runs as one thread, one block
// of 256 threads or a full grid: the three launch shapes compared by the live lab.
extern "C" __global__ void vector_add(const float *__restrict__ a, const float *__restrict__ b,
                                      float *__restrict__ c, unsigned long long n) {
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        c[i] = a[i] + b[i];
    }
}
