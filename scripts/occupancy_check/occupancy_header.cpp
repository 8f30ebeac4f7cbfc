// occupancy_header.cpp: reference data from NVIDIA's own occupancy calculator header,
// cuda_occupancy.h (ships with the CUDA toolkit; host-only, no GPU needed).
//
//   occupancy_header --table          CSV for every compute capability below (stdout)
//   occupancy_header --check FILE     FILE = occupancy_h100.csv from occupancy_check: compares
//                                     the 9.0 row below with the measured attributes, and
//                                     the header's answer with the driver's for every row
//                                     that is not an error (report on stdout)
//
// Per-architecture limits used for cudaOccDeviceProp. Source: CUDA C++ Programming Guide,
// "Technical Specifications per Compute Capability" table (rows "Maximum number of resident
// threads per SM", "... resident blocks per SM", "Number of 32-bit registers per SM",
// "Maximum number of 32-bit registers per thread block", "Maximum amount of shared memory
// per SM", "Maximum amount of shared memory per thread block" (the opt-in maximum; 48 KiB
// without opt-in on every architecture)), and its per-architecture "Shared Memory" sections
// for the 1 KiB that the driver reserves per block from compute capability 8.0 on (the
// per-SM figure is the largest carveout; the per-block opt-in figure is it minus that 1 KiB).
// Only the 9.0 row was verified when this was written: it equals, field by field, the
// attributes that occupancy_check read from an H200 (--check). The other rows were not
// re-checked against the guide then.
// max_blocks_per_sm is for reference only: cuda_occupancy.h hard-codes its own value per cc
// (cudaOccMaxBlocksPerMultiprocessor) and has no device-property field for it.
// (*) 12.0: 24 is the value cuda_occupancy.h (CUDA 13.0) hard-codes for every 12.x; it was not
// checked against the guide's table here.
//
//   cc    threads/SM  blocks/SM  regs/SM  regs/block  shared/SM       shared/block  opt-in/block    reserved
//   5.0   2048        32         65536    65536       65536  (64K)    49152         49152  (48K)    0
//   5.2   2048        32         65536    65536       98304  (96K)    49152         49152  (48K)    0
//   5.3   2048        32         65536    32768       65536  (64K)    49152         49152  (48K)    0
//   6.0   2048        32         65536    65536       65536  (64K)    49152         49152  (48K)    0
//   6.1   2048        32         65536    65536       98304  (96K)    49152         49152  (48K)    0
//   6.2   2048        32         65536    32768       65536  (64K)    49152         49152  (48K)    0
//   7.0   2048        32         65536    65536       98304  (96K)    49152         98304  (96K)    0
//   7.2   2048        32         65536    65536       98304  (96K)    49152         98304  (96K)    0
//   7.5   1024        16         65536    65536       65536  (64K)    49152         65536  (64K)    0
//   8.0   2048        32         65536    65536       167936 (164K)   49152         166912 (163K)   1024
//   8.6   1536        16         65536    65536       102400 (100K)   49152         101376 (99K)    1024
//   8.7   1536        16         65536    65536       167936 (164K)   49152         166912 (163K)   1024
//   8.9   1536        24         65536    65536       102400 (100K)   49152         101376 (99K)    1024
//   9.0   2048        32         65536    65536       233472 (228K)   49152         232448 (227K)   1024
//   10.0  2048        32         65536    65536       233472 (228K)   49152         232448 (227K)   1024
//   10.3  2048        32         65536    65536       233472 (228K)   49152         232448 (227K)   1024
//   12.0  1536        24 (*)     65536    65536       102400 (100K)   49152         101376 (99K)    1024
// maxThreadsPerBlock 1024 and warpSize 32 everywhere; numSms 1 (unused by this call).
//
// Function attributes: a default-constructed cudaOccFuncAttributes, then numRegs,
// sharedSizeBytes (static), maxThreadsPerBlock = 1024, maxDynamicSharedSizeBytes = opt-in
// maximum - static, and shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN (without it the header
// ignores maxDynamicSharedSizeBytes and caps static + dynamic at sharedMemPerBlock, 48 KiB:
// FUNC_SHMEM_LIMIT_DEFAULT). numBlockBarriers and virtualResourceCount (CUDA 13.0) stay at the
// default constructor's 0. (numBlockBarriers=1, what the cudaFuncAttributes conversion sets,
// changes no block count here; it only adds the barriers bit on some cc 12.0 rows.)
// Device state: default cudaOccDeviceState (no cache or carveout preference).
//
// Limiting-factor bits are the header's cudaOccLimitingFactor values (printed from the enum
// itself into the CSV comment): OCC_LIMIT_WARPS, OCC_LIMIT_REGISTERS,
// OCC_LIMIT_SHARED_MEMORY, OCC_LIMIT_BLOCKS = 1, 2, 4, 8; OCC_LIMIT_BARRIERS = 16 and (CUDA 13.0)
// OCC_LIMIT_VIRTUAL_RESOURCES = 32 cannot occur with the inputs above.

#include <cuda_occupancy.h>
#if defined(__has_include)
#if __has_include(<cuda.h>)
#include <cuda.h>
#endif
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <vector>

struct Arch {
    int major, minor;
    int threads_sm, blocks_sm, regs_sm, regs_block;
    size_t smem_sm, smem_block, smem_optin, reserved;
};

static const Arch kArchs[] = {
    {5, 0, 2048, 32, 65536, 65536, 65536, 49152, 49152, 0},
    {5, 2, 2048, 32, 65536, 65536, 98304, 49152, 49152, 0},
    {5, 3, 2048, 32, 65536, 32768, 65536, 49152, 49152, 0},
    {6, 0, 2048, 32, 65536, 65536, 65536, 49152, 49152, 0},
    {6, 1, 2048, 32, 65536, 65536, 98304, 49152, 49152, 0},
    {6, 2, 2048, 32, 65536, 32768, 65536, 49152, 49152, 0},
    {7, 0, 2048, 32, 65536, 65536, 98304, 49152, 98304, 0},
    {7, 2, 2048, 32, 65536, 65536, 98304, 49152, 98304, 0},
    {7, 5, 1024, 16, 65536, 65536, 65536, 49152, 65536, 0},
    {8, 0, 2048, 32, 65536, 65536, 167936, 49152, 166912, 1024},
    {8, 6, 1536, 16, 65536, 65536, 102400, 49152, 101376, 1024},
    {8, 7, 1536, 16, 65536, 65536, 167936, 49152, 166912, 1024},
    {8, 9, 1536, 24, 65536, 65536, 102400, 49152, 101376, 1024},
    {9, 0, 2048, 32, 65536, 65536, 233472, 49152, 232448, 1024},
    {10, 0, 2048, 32, 65536, 65536, 233472, 49152, 232448, 1024},
    {10, 3, 2048, 32, 65536, 65536, 233472, 49152, 232448, 1024},
    {12, 0, 1536, 24, 65536, 65536, 102400, 49152, 101376, 1024},
};

static cudaOccDeviceProp make_prop(const Arch& a) {
    cudaOccDeviceProp p;
    p.computeMajor = a.major;
    p.computeMinor = a.minor;
    p.maxThreadsPerBlock = 1024;
    p.maxThreadsPerMultiprocessor = a.threads_sm;
    p.regsPerBlock = a.regs_block;
    p.regsPerMultiprocessor = a.regs_sm;
    p.warpSize = 32;
    p.sharedMemPerBlock = a.smem_block;
    p.sharedMemPerMultiprocessor = a.smem_sm;
    p.numSms = 1;
    p.sharedMemPerBlockOptin = a.smem_optin;
    p.reservedSharedMemPerBlock = a.reserved;
    return p;
}

static cudaOccFuncAttributes make_attr(int regs, size_t static_smem, size_t optin) {
    cudaOccFuncAttributes f;
    f.numRegs = regs;
    f.sharedSizeBytes = static_smem;
    f.maxThreadsPerBlock = 1024;
    f.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
    f.maxDynamicSharedSizeBytes = optin >= static_smem ? optin - static_smem : 0;
    return f;
}

static const char* err_name(cudaOccError e) {
    switch (e) {
        case CUDA_OCC_SUCCESS: return "CUDA_OCC_SUCCESS";
        case CUDA_OCC_ERROR_INVALID_INPUT: return "CUDA_OCC_ERROR_INVALID_INPUT";
        case CUDA_OCC_ERROR_UNKNOWN_DEVICE: return "CUDA_OCC_ERROR_UNKNOWN_DEVICE";
        default: return "CUDA_OCC_ERROR_OTHER";
    }
}

static std::string today() {
    time_t now = time(nullptr);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    return date;
}

static int table() {
#ifdef CUDA_VERSION
    printf("# made by: bash scripts/occupancy_check/run.sh, cuda_occupancy.h from CUDA %d.%d (CUDA_VERSION %d, __CUDA_OCC_MAJOR__.__CUDA_OCC_MINOR__ = %d.%d), %s\n",
           CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10, CUDA_VERSION, __CUDA_OCC_MAJOR__,
           __CUDA_OCC_MINOR__, today().c_str());
#else
    printf("# made by: bash scripts/occupancy_check/run.sh, cuda_occupancy.h (CUDA version unknown), %s\n", today().c_str());
#endif
    printf("# limiting_factors bits: %d=warps,%d=registers,%d=shared_memory,%d=blocks (as defined in the header;",
           (int)OCC_LIMIT_WARPS, (int)OCC_LIMIT_REGISTERS, (int)OCC_LIMIT_SHARED_MEMORY,
           (int)OCC_LIMIT_BLOCKS);
    printf(" also %d=barriers", (int)OCC_LIMIT_BARRIERS);
#if __CUDA_OCC_MAJOR__ >= 12
    printf(", %d=virtual_resources", (int)OCC_LIMIT_VIRTUAL_RESOURCES);
#endif
    printf(", which cannot occur here: numBlockBarriers=0, virtualResourceCount=0)\n");
    printf("# inputs: cudaOccDeviceProp from the per-architecture table in scripts/occupancy_check/occupancy_header.cpp (maxThreadsPerBlock=1024, warpSize=32);\n");
    printf("#   cudaOccFuncAttributes default-constructed, then numRegs, sharedSizeBytes=static, maxThreadsPerBlock=1024,\n");
    printf("#   shmemLimitConfig=FUNC_SHMEM_LIMIT_OPTIN, maxDynamicSharedSizeBytes=opt-in max - static (numBlockBarriers=0); default cudaOccDeviceState.\n");
    printf("#   max_active_blocks_per_sm and limiting_factors are empty when error is set (the cudaOccError name).\n");
    for (const Arch& a : kArchs)
        printf("# cc %d.%d: max_threads_per_sm=%d, max_blocks_per_sm=%d (reference only), regs_per_sm=%d, regs_per_block=%d, max_shared_per_sm=%zu, max_shared_per_block=%zu, max_shared_per_block_optin=%zu, reserved_shared_per_block=%zu\n",
               a.major, a.minor, a.threads_sm, a.blocks_sm, a.regs_sm, a.regs_block, a.smem_sm,
               a.smem_block, a.smem_optin, a.reserved);
    printf("compute_capability,registers_per_thread,static_shared_bytes,dynamic_shared_bytes,block_size,max_active_blocks_per_sm,limiting_factors,error\n");
    const int regs[] = {16, 32, 37, 64, 65, 96, 128, 168, 255};
    const size_t statics[] = {0, 1024, 12288, 49152};
    const size_t dyns[] = {0, 3000, 40000};
    const int blocks[] = {32, 64, 96, 128, 192, 256, 384, 512, 768, 1024};
    long rows = 0, errors = 0, barrier_diffs = 0;
    for (const Arch& a : kArchs) {
        cudaOccDeviceProp p = make_prop(a);
        for (int r : regs)
            for (size_t s : statics)
                for (size_t dy : dyns)
                    for (int b : blocks) {
                        cudaOccFuncAttributes f = make_attr(r, s, a.smem_optin);
                        cudaOccDeviceState st;
                        cudaOccResult res;
                        memset(&res, 0, sizeof res);
                        cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&res, &p, &f, &st, b, dy);
                        printf("%d.%d,%d,%zu,%zu,%d,", a.major, a.minor, r, s, dy, b);
                        if (e == CUDA_OCC_SUCCESS)
                            printf("%d,%u,\n", res.activeBlocksPerMultiprocessor, res.limitingFactors);
                        else {
                            printf(",,%s\n", err_name(e));
                            errors++;
                        }
                        rows++;
                        // Side check: does numBlockBarriers=1 (what the header's
                        // cudaFuncAttributes conversion sets) change anything?
                        cudaOccFuncAttributes f1 = f;
                        f1.numBlockBarriers = 1;
                        cudaOccResult res1;
                        memset(&res1, 0, sizeof res1);
                        cudaOccError e1 = cudaOccMaxActiveBlocksPerMultiprocessor(&res1, &p, &f1, &st, b, dy);
                        if (e1 != e || (e == CUDA_OCC_SUCCESS &&
                                        (res1.activeBlocksPerMultiprocessor != res.activeBlocksPerMultiprocessor ||
                                         res1.limitingFactors != res.limitingFactors))) {
                            barrier_diffs++;
                            if (barrier_diffs <= 20)
                                fprintf(stderr, "numBlockBarriers=1 differs: cc %d.%d regs %d static %zu dyn %zu block %d: %d/%u -> %d/%u\n",
                                        a.major, a.minor, r, s, dy, b, res.activeBlocksPerMultiprocessor,
                                        res.limitingFactors, res1.activeBlocksPerMultiprocessor, res1.limitingFactors);
                        }
                    }
    }
    fprintf(stderr, "calculator table: %ld rows, %ld errors; rows where numBlockBarriers=1 changes the answer: %ld\n",
            rows, errors, barrier_diffs);
    return 0;
}

// ---- --check ----

static std::vector<std::string> split(const std::string& s, char c) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : s) {
        if (ch == c) {
            out.push_back(cur);
            cur.clear();
        } else
            cur += ch;
    }
    out.push_back(cur);
    return out;
}

static long kv(const std::string& line, const char* key) {
    std::string k = std::string(key) + "=";
    size_t pos = 0;
    while ((pos = line.find(k, pos)) != std::string::npos) {
        if (pos == 0 || line[pos - 1] == ' ' || line[pos - 1] == ',')
            return strtol(line.c_str() + pos + k.size(), nullptr, 10);
        pos += k.size();
    }
    fprintf(stderr, "missing %s in: %s\n", key, line.c_str());
    exit(1);
}

static int check(const char* path) {
    FILE* fp = fopen(path, "r");
    if (!fp) {
        perror(path);
        return 1;
    }
    std::string dev_line, attr_line;
    std::map<std::string, long> max_dyn;
    std::vector<std::vector<std::string>> rows;
    char buf[8192];
    while (fgets(buf, sizeof buf, fp)) {
        std::string l(buf);
        while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
        if (l.rfind("# device:", 0) == 0) dev_line = l;
        else if (l.rfind("# attributes:", 0) == 0) attr_line = l;
        else if (l.rfind("# variant ", 0) == 0) {
            std::string name = l.substr(10, l.find(':') - 10);
            max_dyn[name] = kv(l, "max_dynamic_shared");
        } else if (l.rfind("#", 0) == 0 || l.rfind("variant,", 0) == 0 || l.empty())
            continue;
        else
            rows.push_back(split(l, ','));
    }
    fclose(fp);
    int major = 0, minor = 0, sms = 0;
    const char* cc = strstr(dev_line.c_str(), "compute capability ");
    if (!cc || sscanf(cc, "compute capability %d.%d, %d SMs", &major, &minor, &sms) != 3) {
        fprintf(stderr, "cannot parse device line: %s\n", dev_line.c_str());
        return 1;
    }
    cudaOccDeviceProp p;
    p.computeMajor = major;
    p.computeMinor = minor;
    p.maxThreadsPerBlock = (int)kv(attr_line, "max_threads_per_block");
    p.maxThreadsPerMultiprocessor = (int)kv(attr_line, "max_threads_per_sm");
    p.regsPerBlock = (int)kv(attr_line, "regs_per_block");
    p.regsPerMultiprocessor = (int)kv(attr_line, "regs_per_sm");
    p.warpSize = (int)kv(attr_line, "warp_size");
    p.sharedMemPerBlock = (size_t)kv(attr_line, "max_shared_per_block");
    p.sharedMemPerMultiprocessor = (size_t)kv(attr_line, "max_shared_per_sm");
    p.numSms = sms;
    p.sharedMemPerBlockOptin = (size_t)kv(attr_line, "max_shared_per_block_optin");
    p.reservedSharedMemPerBlock = (size_t)kv(attr_line, "reserved_shared_per_block");

    printf("== table row vs measured attributes (cc %d.%d) ==\n", major, minor);
    bool found = false;
    for (const Arch& a : kArchs) {
        if (a.major != major || a.minor != minor) continue;
        found = true;
        cudaOccDeviceProp t = make_prop(a);
        long blocks_sm = kv(attr_line, "max_blocks_per_sm");
        struct { const char* n; long table, measured; } f[] = {
            {"max_threads_per_sm", t.maxThreadsPerMultiprocessor, p.maxThreadsPerMultiprocessor},
            {"max_blocks_per_sm", a.blocks_sm, blocks_sm},
            {"regs_per_sm", t.regsPerMultiprocessor, p.regsPerMultiprocessor},
            {"regs_per_block", t.regsPerBlock, p.regsPerBlock},
            {"max_shared_per_sm", (long)t.sharedMemPerMultiprocessor, (long)p.sharedMemPerMultiprocessor},
            {"max_shared_per_block", (long)t.sharedMemPerBlock, (long)p.sharedMemPerBlock},
            {"max_shared_per_block_optin", (long)t.sharedMemPerBlockOptin, (long)p.sharedMemPerBlockOptin},
            {"reserved_shared_per_block", (long)t.reservedSharedMemPerBlock, (long)p.reservedSharedMemPerBlock},
            {"warp_size", t.warpSize, p.warpSize},
            {"max_threads_per_block", t.maxThreadsPerBlock, p.maxThreadsPerBlock},
        };
        for (auto& x : f)
            printf("  %-28s table %-8ld measured %-8ld %s\n", x.n, x.table, x.measured,
                   x.table == x.measured ? "same" : "DIFFERENT");
    }
    if (!found) printf("  no table row for cc %d.%d\n", major, minor);

    // Each row: variant,regs,static,dynamic,block,max_active,error
    for (int barriers = 1; barriers >= 0; barriers--) {
        long agree = 0, disagree = 0, skipped_err = 0;
        printf("== driver vs cuda_occupancy.h, shmemLimitConfig=OPTIN, numBlockBarriers=%d ==\n", barriers);
        for (auto& r : rows) {
            if (r.size() < 7) continue;
            if (!r[6].empty()) {
                skipped_err++;
                continue;
            }
            std::string var = r[0];
            if (var.rfind("measured:", 0) == 0) var = var.substr(9);
            auto it = max_dyn.find(var);
            if (it == max_dyn.end()) {
                fprintf(stderr, "no max_dynamic_shared for %s\n", var.c_str());
                return 1;
            }
            cudaOccFuncAttributes f;
            f.numRegs = atoi(r[1].c_str());
            f.sharedSizeBytes = (size_t)atol(r[2].c_str());
            f.maxThreadsPerBlock = 1024;
            f.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
            f.maxDynamicSharedSizeBytes = (size_t)it->second;
            f.numBlockBarriers = barriers;
            cudaOccDeviceState st;
            cudaOccResult res;
            memset(&res, 0, sizeof res);
            size_t dyn = (size_t)atol(r[3].c_str());
            int block = atoi(r[4].c_str());
            int driver = atoi(r[5].c_str());
            cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&res, &p, &f, &st, block, dyn);
            if (e == CUDA_OCC_SUCCESS && res.activeBlocksPerMultiprocessor == driver) {
                agree++;
            } else {
                disagree++;
                printf("  DISAGREE %s regs=%s static=%s dyn=%s block=%s: driver %d, header %s %d (limits: regs %d, smem %d, warps %d, blocks %d, barriers %d; factors %u; allocated regs/block %d, smem/block %zu)\n",
                       r[0].c_str(), r[1].c_str(), r[2].c_str(), r[3].c_str(), r[4].c_str(), driver,
                       err_name(e), res.activeBlocksPerMultiprocessor, res.blockLimitRegs,
                       res.blockLimitSharedMem, res.blockLimitWarps, res.blockLimitBlocks,
                       res.blockLimitBarriers, res.limitingFactors, res.allocatedRegistersPerBlock,
                       res.allocatedSharedMemPerBlock);
            }
        }
        printf("  agree %ld, disagree %ld (error rows not compared: %ld)\n", agree, disagree, skipped_err);
    }

    // For the record: what the header says on rows where the driver returned an error.
    printf("== header on the driver's error rows (not compared) ==\n");
    std::map<std::string, long> seen;
    for (auto& r : rows) {
        if (r.size() < 7 || r[6].empty()) continue;
        std::string var = r[0];
        auto it = max_dyn.find(var);
        cudaOccFuncAttributes f;
        f.numRegs = atoi(r[1].c_str());
        f.sharedSizeBytes = (size_t)atol(r[2].c_str());
        f.maxThreadsPerBlock = 1024;
        f.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
        f.maxDynamicSharedSizeBytes = it == max_dyn.end() ? 0 : (size_t)it->second;
        f.numBlockBarriers = 1;
        cudaOccDeviceState st;
        cudaOccResult res;
        memset(&res, 0, sizeof res);
        cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&res, &p, &f, &st, atoi(r[4].c_str()),
                                                                 (size_t)atol(r[3].c_str()));
        char key[256];
        snprintf(key, sizeof key, "driver %s -> header %s %d", r[6].c_str(), err_name(e),
                 res.activeBlocksPerMultiprocessor);
        seen[key]++;
    }
    for (auto& kvp : seen) printf("  %ld x %s\n", kvp.second, kvp.first.c_str());
    return 0;
}

int main(int argc, char** argv) {
    if (argc >= 2 && strcmp(argv[1], "--table") == 0) return table();
    if (argc >= 3 && strcmp(argv[1], "--check") == 0) return check(argv[2]);
    fprintf(stderr, "usage: %s --table | --check occupancy_h100.csv\n", argv[0]);
    return 2;
}
