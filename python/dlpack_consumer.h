// A DLPack consumer inside the extension, for tests: CPU-only torch and
// numpy cannot import CUDA tensors, so device batches exported through
// __dlpack__ are checked by copying them back here, as a GPU framework
// would consume them (stream handshake, capsule renamed, deleter called).
//
//   _shardfeed._copy_from_dlpack(obj, stream=None) -> bytes
//       obj.__dlpack__(stream=stream); a CUDA tensor is copied to the host
//       with cudaMemcpyAsync on that stream (None/-1: stream 0, 1: the
//       legacy stream, 2: the per-thread stream, else a cudaStream_t),
//       which is then synchronized; the deleter runs after the copy is
//       queued, as a consumer that frees the capsule when done would.
//   _shardfeed._cuda_stream_create(device) -> int (a non-blocking stream)
//   _shardfeed._cuda_stream_destroy(handle)
//   _shardfeed._cuda_stream_hold(device, handle, seconds)
//       queues a host function sleeping `seconds` (0 to 60) on the stream of
//       `device`: work queued after it, a fence included, waits that long
//       (a consumer's long-running work)
// Errors raise shardfeed.Error with the CUDA error's name.
#ifndef SHARDFEED_PYTHON_DLPACK_CONSUMER_H_
#define SHARDFEED_PYTHON_DLPACK_CONSUMER_H_

#include <pybind11/pybind11.h>

namespace shardfeed::python {

void RegisterDlpackConsumer(pybind11::module_& m, PyObject* error_class);

}  // namespace shardfeed::python

#endif  // SHARDFEED_PYTHON_DLPACK_CONSUMER_H_
