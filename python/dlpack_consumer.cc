#include "python/dlpack_consumer.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gpu/device_guard.h"
#include "python/dlpack_abi.h"

namespace py = pybind11;

namespace shardfeed::python {
namespace {

PyObject* g_consumer_error = nullptr;

void Check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  PyErr_SetString(g_consumer_error,
                  absl::StrCat(what, ": ", cudaGetErrorName(e), ": ", cudaGetErrorString(e)).c_str());
  throw py::error_already_set();
}

cudaStream_t ConsumerStream(intptr_t s) {
  if (s == 1) return cudaStreamLegacy;
  if (s == 2) return cudaStreamPerThread;
  if (s == -1) return nullptr;
  return reinterpret_cast<cudaStream_t>(s);
}

size_t ElementBytes(const DLDataType& t) { return (t.bits * size_t{t.lanes} + 7) / 8; }

py::bytes CopyFromDlpack(py::object obj, py::object stream) {
  py::tuple device = obj.attr("__dlpack_device__")();
  const int type = device[0].cast<int>();
  py::object capsule = obj.attr("__dlpack__")(py::arg("stream") = stream);
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (m == nullptr) throw py::error_already_set();
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");  // this consumer owns it now
  const DLTensor& t = m->dl_tensor;
  if (t.device.device_type != type) {
    m->deleter(m);
    throw py::value_error("__dlpack__ and __dlpack_device__ disagree on the device");
  }
  size_t bytes = ElementBytes(t.dtype);
  for (int i = 0; i < t.ndim; ++i) bytes *= static_cast<size_t>(t.shape[i]);
  std::string out(bytes, '\0');
  const char* src = static_cast<const char*>(t.data) + t.byte_offset;
  if (t.device.device_type == kDLCPU) {
    if (bytes > 0) std::memcpy(out.data(), src, bytes);
    m->deleter(m);
    return py::bytes(out);
  }
  const cudaStream_t s = ConsumerStream(stream.is_none() ? -1 : stream.cast<intptr_t>());
  cudaError_t e = cudaSuccess;
  {
    gpu::ScopedDevice on(t.device.device_id);
    char* pinned = nullptr;
    e = cudaHostAlloc(reinterpret_cast<void**>(&pinned), bytes == 0 ? 1 : bytes, 0);
    if (e == cudaSuccess) {
      e = cudaMemcpyAsync(pinned, src, bytes, cudaMemcpyDeviceToHost, s);
      m->deleter(m);  // done with the tensor: its last use is queued on `s`
      m = nullptr;
      if (e == cudaSuccess) {
        py::gil_scoped_release release;
        e = cudaStreamSynchronize(s);
      }
      if (e == cudaSuccess && bytes > 0) std::memcpy(out.data(), pinned, bytes);
      (void)cudaFreeHost(pinned);
    }
    if (m != nullptr) m->deleter(m);
  }
  Check(e, "copying a DLPack tensor to the host");
  return py::bytes(out);
}

intptr_t CreateStream(int device) {
  gpu::ScopedDevice on(device);
  cudaStream_t s = nullptr;
  Check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  return reinterpret_cast<intptr_t>(s);
}

// The host function HoldStream queues: sleeps, then frees its argument.
void SleepOnStream(void* milliseconds) {
  auto* ms = static_cast<int64_t*>(milliseconds);
  std::this_thread::sleep_for(std::chrono::milliseconds(*ms));
  delete ms;
}

void HoldStream(int device, intptr_t handle, double seconds) {
  if (!(seconds >= 0 && seconds <= 60)) throw py::value_error("seconds must be in [0, 60]");
  gpu::ScopedDevice on(device);
  auto* ms = new int64_t(static_cast<int64_t>(seconds * 1000));
  const cudaError_t e =
      cudaLaunchHostFunc(reinterpret_cast<cudaStream_t>(handle), &SleepOnStream, ms);
  if (e != cudaSuccess) delete ms;
  Check(e, "cudaLaunchHostFunc");
}

void DestroyStream(intptr_t handle) {
  Check(cudaStreamDestroy(reinterpret_cast<cudaStream_t>(handle)), "cudaStreamDestroy");
}

}  // namespace

void RegisterDlpackConsumer(py::module_& m, PyObject* error_class) {
  g_consumer_error = error_class;
  m.def("_copy_from_dlpack", &CopyFromDlpack, py::arg("obj"), py::arg("stream") = py::none());
  m.def("_cuda_stream_create", &CreateStream, py::arg("device"));
  m.def("_cuda_stream_destroy", &DestroyStream, py::arg("handle"));
  m.def("_cuda_stream_hold", &HoldStream, py::arg("device"), py::arg("handle"),
        py::arg("seconds"));
}

}  // namespace shardfeed::python
