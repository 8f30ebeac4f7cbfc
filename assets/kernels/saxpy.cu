// y = alpha * x + y over n floats, one element per thread (grid-stride for safety).
extern "C" __global__ void saxpy(float alpha, const float *__restrict__ x, float *__restrict__ y,
                                 unsigned long long n) {
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        y[i] = alpha * x[i] + y[i];
    }
}
