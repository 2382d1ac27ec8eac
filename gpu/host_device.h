// SHARDFEED_HOST_DEVICE: `__host__ __device__` under nvcc, nothing under a
// host compiler, for functions both the CUDA kernels and host code run.
#ifndef SHARDFEED_GPU_HOST_DEVICE_H_
#define SHARDFEED_GPU_HOST_DEVICE_H_

#if defined(__CUDACC__)
#define SHARDFEED_HOST_DEVICE __host__ __device__
#else
#define SHARDFEED_HOST_DEVICE
#endif

#endif  // SHARDFEED_GPU_HOST_DEVICE_H_
