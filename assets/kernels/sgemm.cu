// C = A * B for row-major m x k and k x n float matrices.

// One thread per element of C, reading A and B straight from global memory.
extern "C" __global__ void sgemm_naive(const float *__restrict__ a, const float *__restrict__ b,
                                       float *__restrict__ c, int m, int n, int k) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        float acc = 0.0f;
        for (int p = 0; p < k; ++p) {
            acc += a[row * k + p] * b[p * n + col];
        }
        c[row * n + col] = acc;
    }
}

#define TILE 32

// 32 x 32 tiles of A and B staged through shared memory: each element is read from global memory
// k / 32 times instead of k times. Launch with 32 x 32 threads per block.
extern "C" __global__ void sgemm_tiled(const float *__restrict__ a, const float *__restrict__ b,
                                       float *__restrict__ c, int m, int n, int k) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE + 1];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < k; t += TILE) {
        int ac = t + threadIdx.x;
        int br = t + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = (row < m && ac < k) ? a[row * k + ac] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = (br < k && col < n) ? b[br * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int p = 0; p < TILE; ++p) {
            acc += as[threadIdx.y][p] * bs[p][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < m && col < n) {
        c[row * n + col] = acc;
    }
}
