// How many thread-block clusters can be resident at once on this GPU, for each cluster size and shared
// memory per block (cudaOccupancyMaxActiveClusters), and which SMs the blocks of co-resident clusters
// land on. Sizes a persistent cluster grid: asking for more clusters than fit runs a second wave.
// Build: nvcc -arch=sm_90 -o cluster_probe tools/gpu/cluster_probe.cu
#include <cstdio>
#include <set>
#include <vector>
#include <cuda_runtime.h>

__global__ void where(unsigned *sm)
{
    extern __shared__ unsigned char pad[];
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    if (threadIdx.x == 0) sm[blockIdx.x] = id;
    pad[threadIdx.x] = 0;
}

static int maxClusters(int cl, int threads, int smem)
{
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cl; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3(cl * 64); cfg.blockDim = dim3(threads); cfg.dynamicSmemBytes = smem;
    cfg.attrs = attr; cfg.numAttrs = 1;
    int n = -1;
    cudaError_t e = cudaOccupancyMaxActiveClusters(&n, where, &cfg);
    return e == cudaSuccess ? n : -(int)e;
}

int main()
{
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    printf("%s: %d SMs, %zu B shared per SM, %zu B opt-in per block\n", p.name, p.multiProcessorCount, p.sharedMemPerMultiprocessor, p.sharedMemPerBlockOptin);
    cudaFuncSetAttribute(where, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    cudaFuncSetAttribute(where, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p.sharedMemPerBlockOptin);
    const int smems[] = {0, 48 << 10, 64 << 10, (64 << 10) + 2048, 96 << 10, 112 << 10, 128 << 10, 200 << 10};
    printf("max active clusters (256 threads per block); columns: dynamic shared KiB per block\n  cl ");
    for (int s : smems) printf("%7d", s >> 10);
    printf("\n");
    for (int cl : {1, 2, 4, 8, 16}) {
        printf("%4d ", cl);
        for (int s : smems) printf("%7d", maxClusters(cl, 256, s));
        printf("\n");
    }
    // The SMs of each co-resident cluster at one block per SM: the GPCs as the scheduler sees them.
    for (int cl : {8, 16}) {
        int n = maxClusters(cl, 256, 200 << 10);
        if (n <= 0) continue;
        unsigned *d; cudaMalloc(&d, n * cl * sizeof(unsigned));
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = cl; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
        cfg.gridDim = dim3(n * cl); cfg.blockDim = dim3(256); cfg.dynamicSmemBytes = 200 << 10; cfg.attrs = attr; cfg.numAttrs = 1;
        cudaError_t e = cudaLaunchKernelEx(&cfg, where, d);
        cudaDeviceSynchronize();
        std::vector<unsigned> h(n * cl);
        cudaMemcpy(h.data(), d, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost);
        printf("cl=%d, %d clusters at 200 KiB (%s): SMs per cluster:\n", cl, n, cudaGetErrorString(e));
        for (int c = 0; c < n; ++c) {
            std::set<unsigned> s(h.begin() + c * cl, h.begin() + (c + 1) * cl);
            printf("  ");
            for (unsigned v : s) printf("%u ", v);
            printf("\n");
        }
        cudaFree(d);
    }
    return 0;
}
