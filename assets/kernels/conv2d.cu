// Direct 2-D convolution forward, like a CNN's first layer on CIFAR-sized images:
// input [batch, 3, 32, 32], weights [64, 3, 5, 5], bias [64], zero padding 2, stride 1,
// output [batch, 64, 32, 32]. One thread per output element.
#define C_IN 3
#define C_OUT 64
#define H 32
#define W 32
#define KS 5
#define PAD 2

extern "C" __global__ void conv2d_forward(const float *__restrict__ input,
                                          const float *__restrict__ weight,
                                          const float *__restrict__ bias,
                                          float *__restrict__ output, unsigned int batch) {
    unsigned long long idx = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long total = (unsigned long long)batch * C_OUT * H * W;
    if (idx >= total) {
        return;
    }
    int x = idx % W;
    int y = (idx / W) % H;
    int co = (idx / (W * H)) % C_OUT;
    unsigned long long img = idx / ((unsigned long long)W * H * C_OUT);
    const float *in = input + img * C_IN * H * W;
    const float *wt = weight + co * C_IN * KS * KS;
    float acc = bias[co];
    for (int ci = 0; ci < C_IN; ++ci) {
        for (int ky = 0; ky < KS; ++ky) {
            int iy = y + ky - PAD;
            if (iy < 0 || iy >= H) {
                continue;
            }
            for (int kx = 0; kx < KS; ++kx) {
                int ix = x + kx - PAD;
                if (ix < 0 || ix >= W) {
                    continue;
                }
                acc += in[(ci * H + iy) * W + ix] * wt[(ci * KS + ky) * KS + kx];
            }
        }
    }
    output[idx] = acc;
}
