// Holds the stream until the host sets *flag (or a timeout passes), so that the timing events and
// the measured launch are all queued before the GPU reaches them: the CUDA-event interval then
// holds the launch alone, not the host's launch latency.
extern "C" __global__ void hold_stream(volatile const int *flag, unsigned long long timeout_ns) {
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (*flag == 0) {
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) {
            break;
        }
    }
}
