// A synthetic compute kernel for the overlap benchmark: `iterations` dependent
// FMAs per element of a float buffer (arithmetic-bound, little memory
// traffic), standing in for a training step. Compiled by nvcc.
#ifndef SHARDFEED_BENCH_COMPUTE_KERNEL_H_
#define SHARDFEED_BENCH_COMPUTE_KERNEL_H_

#include <cuda_runtime_api.h>

namespace shardfeed::bench {

cudaError_t LaunchBusyCompute(float* data, int n, int iterations, cudaStream_t stream);

}  // namespace shardfeed::bench

#endif  // SHARDFEED_BENCH_COMPUTE_KERNEL_H_
