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

// Register blocking: a block of 256 threads computes a 128 x 128 tile of C, each thread an 8 x 8
// sub-tile (two 4 x 4 quadrants 64 apart, so a warp's shared-memory reads do not conflict) held
// in registers. K advances 8 at a time; the next A and B tiles are fetched into registers with
// float4 loads while the current ones, double-buffered in shared memory, are multiplied. A is
// stored transposed so a thread reads its 8 A values as two float4. Needs m, n multiples of 128
// and k a multiple of 8. Launch with 256 threads and an (n / 128, m / 128) grid.
#define RB_BM 128
#define RB_BN 128
#define RB_BK 8

extern "C" __global__ void __launch_bounds__(256)
    sgemm_regblock(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c,
                   int m, int n, int k) {
    __shared__ __align__(16) float as[2][RB_BK][RB_BM];
    __shared__ __align__(16) float bs[2][RB_BK][RB_BN];
    const int tid = threadIdx.x;
    const int tx = tid % 16, ty = tid / 16;
    const int row0 = blockIdx.y * RB_BM, col0 = blockIdx.x * RB_BN;
    // Which float4 of each tile this thread fetches.
    const int a_row = tid / 2, a_col = (tid % 2) * 4;
    const int b_row = tid / 32, b_col = (tid % 32) * 4;
    const float *a_ptr = a + (size_t)(row0 + a_row) * k + a_col;
    const float *b_ptr = b + (size_t)b_row * n + col0 + b_col;

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

    float4 a_next = *reinterpret_cast<const float4 *>(a_ptr);
    float4 b_next = *reinterpret_cast<const float4 *>(b_ptr);
    as[0][a_col + 0][a_row] = a_next.x;
    as[0][a_col + 1][a_row] = a_next.y;
    as[0][a_col + 2][a_row] = a_next.z;
    as[0][a_col + 3][a_row] = a_next.w;
    *reinterpret_cast<float4 *>(&bs[0][b_row][b_col]) = b_next;
    __syncthreads();

    const int tiles = k / RB_BK;
    for (int t = 0; t < tiles; ++t) {
        const int cur = t & 1;
        const bool more = t + 1 < tiles;
        if (more) {
            a_next = *reinterpret_cast<const float4 *>(a_ptr + (t + 1) * RB_BK);
            b_next = *reinterpret_cast<const float4 *>(b_ptr + (size_t)(t + 1) * RB_BK * n);
        }
#pragma unroll
        for (int p = 0; p < RB_BK; ++p) {
            float4 a0 = *reinterpret_cast<const float4 *>(&as[cur][p][ty * 4]);
            float4 a1 = *reinterpret_cast<const float4 *>(&as[cur][p][ty * 4 + 64]);
            float4 b0 = *reinterpret_cast<const float4 *>(&bs[cur][p][tx * 4]);
            float4 b1 = *reinterpret_cast<const float4 *>(&bs[cur][p][tx * 4 + 64]);
            float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        if (more) {
            const int nxt = cur ^ 1;
            as[nxt][a_col + 0][a_row] = a_next.x;
            as[nxt][a_col + 1][a_row] = a_next.y;
            as[nxt][a_col + 2][a_row] = a_next.z;
            as[nxt][a_col + 3][a_row] = a_next.w;
            *reinterpret_cast<float4 *>(&bs[nxt][b_row][b_col]) = b_next;
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = row0 + ty * 4 + (i % 4) + (i / 4) * 64;
        float *out = c + (size_t)row * n + col0 + tx * 4;
        *reinterpret_cast<float4 *>(out) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        *reinterpret_cast<float4 *>(out + 64) =
            make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
}

// Tensor Cores: FP16 A and B (row-major, as 16-bit halves), FP32 C and accumulation, with the
// warp-level mma.sync.m16n8k16 instruction. A block of 128 threads (4 warps, 2 x 2) computes a
// 128 x 128 tile of C, each warp 64 x 64 (4 x 8 mma tiles, 128 accumulators per thread), so each
// fragment loaded from shared memory feeds 4 or 8 products. K advances 32 at a time through three
// shared-memory stages filled with cp.async: two tiles are in flight while one is multiplied, with
// one barrier per tile. The 16-byte chunks of each row are XOR-swizzled so that ldmatrix's eight
// rows always fall in different banks (no padding: 3 x 16 KiB fits the 48 KiB of static shared
// memory). No headers needed: the half type is a 16-bit integer and every instruction is inline
// PTX. Needs m, n multiples of 128 and k a multiple of 32. Launch with 128 threads and an
// (n / 128, m / 128) grid.
#define TC_BM 128
#define TC_BN 128
#define TC_BK 32
#define TC_STAGES 3

__device__ __forceinline__ unsigned smem_addr(const void *p) {
    unsigned addr;
    asm("{ .reg .u64 u; cvta.to.shared.u64 u, %1; cvt.u32.u64 %0, u; }" : "=r"(addr) : "l"(p));
    return addr;
}

__device__ __forceinline__ void cp_async16(unsigned smem, const void *gmem) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem), "l"(gmem));
}

// Offsets (in halves) of the 16-byte chunk `chunk` of row `row` in the swizzled tiles.
__device__ __forceinline__ int a_off(int row, int chunk) {
    return row * TC_BK + ((chunk ^ ((row >> 1) & 3)) << 3);
}
__device__ __forceinline__ int b_off(int row, int chunk) {
    return row * TC_BN + ((chunk ^ (row & 7)) << 3);
}

extern "C" __global__ void __launch_bounds__(128)
    gemm_tensor_fp16(const unsigned short *__restrict__ a, const unsigned short *__restrict__ b,
                     float *__restrict__ c, int m, int n, int k) {
    __shared__ __align__(128) unsigned short as[TC_STAGES][TC_BM * TC_BK];
    __shared__ __align__(128) unsigned short bs[TC_STAGES][TC_BK * TC_BN];
    const int tid = threadIdx.x;
    const int lane = tid & 31, warp = tid >> 5;
    const int warp_m = warp >> 1, warp_n = warp & 1;  // 2 x 2 warps
    const int row0 = blockIdx.y * TC_BM, col0 = blockIdx.x * TC_BN;

    float acc[4][8][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

    // Each thread copies four 16-byte chunks of A (128 x 32) and four of B (32 x 128) per tile.
    auto load_tile = [&](int t, int stage) {
        const unsigned sa = smem_addr(as[stage]), sb = smem_addr(bs[stage]);
#pragma unroll
        for (int h = 0; h < 4; ++h) {
            const int q = tid + h * 128;
            const int ar = q >> 2, ac = q & 3;
            cp_async16(sa + 2 * a_off(ar, ac), a + (size_t)(row0 + ar) * k + t * TC_BK + ac * 8);
            const int br = q >> 4, bc = q & 15;
            cp_async16(sb + 2 * b_off(br, bc), b + (size_t)(t * TC_BK + br) * n + col0 + bc * 8);
        }
    };

    const int tiles = k / TC_BK;
#pragma unroll
    for (int s = 0; s < TC_STAGES - 1; ++s) {
        if (s < tiles) load_tile(s, s);
        asm volatile("cp.async.commit_group;\n" ::);
    }
    for (int t = 0; t < tiles; ++t) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(TC_STAGES - 2));
        __syncthreads();
        // The stage of tile t - 1 is free now: every warp is past it.
        if (t + TC_STAGES - 1 < tiles) load_tile(t + TC_STAGES - 1, (t + TC_STAGES - 1) % TC_STAGES);
        asm volatile("cp.async.commit_group;\n" ::);
        const int cur = t % TC_STAGES;
        const unsigned sa = smem_addr(as[cur]), sb = smem_addr(bs[cur]);
#pragma unroll
        for (int kk = 0; kk < TC_BK; kk += 16) {
            unsigned af[4][4], bf[8][2];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int r = warp_m * 64 + i * 16 + (lane & 15);
                const int chunk = (kk >> 3) + (lane >> 4);
                asm volatile(
                    "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                    : "=r"(af[i][0]), "=r"(af[i][1]), "=r"(af[i][2]), "=r"(af[i][3])
                    : "r"(sa + 2 * a_off(r, chunk)));
            }
#pragma unroll
            for (int j = 0; j < 8; j += 2) {
                const int r = kk + (lane & 15);
                const int chunk = ((warp_n * 64 + j * 8) >> 3) + (lane >> 4);
                asm volatile(
                    "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                    : "=r"(bf[j][0]), "=r"(bf[j][1]), "=r"(bf[j + 1][0]), "=r"(bf[j + 1][1])
                    : "r"(sb + 2 * b_off(r, chunk)));
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    asm volatile(
                        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                        "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                        : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]), "+f"(acc[i][j][2]),
                          "+f"(acc[i][j][3])
                        : "r"(af[i][0]), "r"(af[i][1]), "r"(af[i][2]), "r"(af[i][3]),
                          "r"(bf[j][0]), "r"(bf[j][1]));
        }
    }
    asm volatile("cp.async.wait_group 0;\n" ::);

#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int row = row0 + warp_m * 64 + i * 16 + (lane >> 2);
            const int col = col0 + warp_n * 64 + j * 8 + (lane & 3) * 2;
            *reinterpret_cast<float2 *>(c + (size_t)row * n + col) =
                make_float2(acc[i][j][0], acc[i][j][1]);
            *reinterpret_cast<float2 *>(c + (size_t)(row + 8) * n + col) =
                make_float2(acc[i][j][2], acc[i][j][3]);
        }
}
