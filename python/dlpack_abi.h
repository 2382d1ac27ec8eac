// The DLPack ABI (https://dmlc.github.io/dlpack/latest/, version 0.8): the
// structs a producer hands to torch/jax/numpy/tensorflow `from_dlpack`.
// Only what shardfeed produces: CPU and CUDA tensors, compact row-major.
#ifndef SHARDFEED_PYTHON_DLPACK_ABI_H_
#define SHARDFEED_PYTHON_DLPACK_ABI_H_

#include <cstdint>

extern "C" {

enum DLDeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2 };

struct DLDevice {
  DLDeviceType device_type;
  int32_t device_id;
};

enum DLDataTypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4 };

struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // null: compact row-major
  uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

}  // extern "C"

#endif  // SHARDFEED_PYTHON_DLPACK_ABI_H_
