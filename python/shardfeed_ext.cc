// _shardfeed: shardfeed's C++ pipeline as a Python extension (pybind11).
// The pure-Python layer in shardfeed/__init__.py is the public API; this
// module is its engine.
//
// Tensors cross as DLPack capsules with no copy: each capsule (and each
// Tensor object) holds a reference to its batch; the batch's ring slot is
// handed back only when the last of them is gone. Device tensors make the
// consumer's stream wait on the batch's copy event (__dlpack__(stream=S)),
// or synchronize on it when no stream is given; the consumer's stream is
// fenced when it frees the capsule (see HeldBatch).
//
// Threading: the GIL is released while waiting for a batch, converting and
// checking; waits poll for signals every 100 ms, so Ctrl-C raises
// KeyboardInterrupt promptly. DLPack deleters never touch Python objects, so
// consumers may run them from any thread. Errors: absl::Status becomes
// shardfeed.Error (DATA_LOSS: shardfeed.DataLossError; INVALID_ARGUMENT:
// shardfeed.InvalidArgumentError, also a ValueError; NOT_FOUND: also a
// FileNotFoundError) carrying the Status message (file and offset).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "record/remote/remote_files.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "check/check.h"
#include "gpu/device_guard.h"
#include "converter/convert.h"
#include "converter/task_part.h"
#include "python/cli_binding.h"
#include "python/dlpack_abi.h"
#include "python/dlpack_consumer.h"
#include "python/writer_binding.h"
#include "reader/feature_transforms.h"
#include "reader/loader.h"

namespace py = pybind11;

namespace shardfeed::python {
namespace {

PyObject* g_error = nullptr;
PyObject* g_data_loss = nullptr;
PyObject* g_invalid = nullptr;
PyObject* g_not_found = nullptr;

[[noreturn]] void Raise(const absl::Status& s) {
  PyObject* cls = g_error;
  if (absl::IsDataLoss(s)) cls = g_data_loss;
  if (absl::IsInvalidArgument(s) || absl::IsOutOfRange(s)) cls = g_invalid;
  if (absl::IsNotFound(s)) cls = g_not_found;
  PyErr_SetString(cls, absl::StrCat(absl::StatusCodeToString(s.code()), ": ", s.message()).c_str());
  throw py::error_already_set();
}

// Whether the interpreter is finalizing (Python 3.13 made it public and
// removed the private _Py_IsFinalizing).
bool IsFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

// Runs a blocking C++ call with the GIL released when the calling thread
// holds it (a DLPack deleter run by the garbage collector, a Tensor object
// freed by Python), so the syncs while the last batch of a closed loader
// tears its ring down never stall every other Python thread. Not while the
// interpreter finalizes.
class GilReleasedIfHeld {
 public:
  GilReleasedIfHeld() {
    if (Py_IsInitialized() && !IsFinalizing() && PyGILState_Check()) {
      saved_ = PyEval_SaveThread();
    }
  }
  ~GilReleasedIfHeld() {
    if (saved_ != nullptr) PyEval_RestoreThread(saved_);
  }
  GilReleasedIfHeld(const GilReleasedIfHeld&) = delete;
  GilReleasedIfHeld& operator=(const GilReleasedIfHeld&) = delete;

 private:
  PyThreadState* saved_ = nullptr;
};

// A delivered batch, shared by its Tensor objects and DLPack capsules. Its
// slot is reused after the work each consumer queued on the stream it gave
// to __dlpack__(stream=...), fenced when that consumer freed its capsule
// (when its stream surely still exists, not when the batch dies; the
// per-thread stream is fenced on the legacy default stream, which follows
// it); after the device is idle if a device tensor was exported with no
// stream (TensorFlow, JAX, NumPy: the DLPack standard reads None as the
// legacy default stream, but TensorFlow then reads on its own non-blocking
// stream); at once if no device tensor was exported (nothing on the device
// reads it).
struct HeldBatch {
  Batch batch;
  std::atomic<bool> unknown_consumer{false};
  ~HeldBatch() {
    GilReleasedIfHeld unlocked;  // the release may tear the ring down (syncs)
    if (unknown_consumer.load()) {
      batch.ReleaseAfterDeviceIdle();
    } else {
      batch.ReleaseAfter({});  // every known consumer's stream is fenced already
    }
  }
};

// A DLPack `stream` argument as a cudaStream_t: 1 is the legacy default
// stream, 2 the per-thread default stream, 0 (disallowed by the standard) is
// taken as stream 0, others are handles.
void* DlpackStream(intptr_t s) {
  if (s == 1) return reinterpret_cast<void*>(cudaStreamLegacy);
  if (s == 2) return reinterpret_cast<void*>(cudaStreamPerThread);
  return reinterpret_cast<void*>(s);
}

DLDataType DlType(DType d) {
  switch (d) {
    case DType::kUint8:
      return {kDLUInt, 8, 1};
    case DType::kInt64:
      return {kDLInt, 64, 1};
    case DType::kFloat32:
      return {kDLFloat, 32, 1};
    case DType::kFloat16:
      return {kDLFloat, 16, 1};
    case DType::kBFloat16:
      return {kDLBfloat, 16, 1};
    case DType::kFloat64:
      return {kDLFloat, 64, 1};
  }
  return {kDLUInt, 8, 1};
}

struct ManagerContext {
  std::shared_ptr<HeldBatch> batch;
  std::vector<int64_t> shape;
  bool fence = false;      // a device tensor given to a consumer's stream:
  void* stream = nullptr;  // fenced on it when the consumer frees the capsule
};

// The consumer is done with the tensor (any thread, GIL or not).
void DeleteManaged(DLManagedTensor* self) {
  auto* ctx = static_cast<ManagerContext*>(self->manager_ctx);
  if (ctx->fence) ctx->batch->batch.FenceAfter(ctx->stream);
  delete ctx;
  delete self;
}

void CapsuleDestructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "used_dltensor")) return;  // a consumer owns it
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (m == nullptr) {
    PyErr_Clear();
    return;
  }
  m->deleter(m);
}

class PyTensor {
 public:
  PyTensor(std::shared_ptr<HeldBatch> batch, Tensor t) : batch_(std::move(batch)), t_(std::move(t)) {}

  const std::string& name() const { return t_.name; }
  std::string dtype() const { return DTypeName(t_.dtype); }
  py::tuple shape() const { return py::cast(t_.shape); }
  int device() const { return t_.device; }
  size_t nbytes() const { return t_.bytes; }

  py::tuple DlpackDevice() const {
    return t_.device >= 0 ? py::make_tuple(static_cast<int>(kDLCUDA), t_.device)
                          : py::make_tuple(static_cast<int>(kDLCPU), 0);
  }

  py::object Dlpack(py::object stream) {
    bool fence = false;
    void* fence_stream = nullptr;
    if (t_.device >= 0 && batch_->batch.cuda_event() != nullptr) {
      auto event = static_cast<cudaEvent_t>(batch_->batch.cuda_event());
      cudaError_t e = cudaSuccess;
      const intptr_t s = stream.is_none() ? -1 : stream.cast<intptr_t>();
      gpu::ScopedDevice on(t_.device);  // never a bare call (it would initialize device 0)
      if (s == -1) {  // no stream: the copy is waited for here; consumers unknown
        batch_->unknown_consumer = true;
        py::gil_scoped_release release;
        e = cudaEventSynchronize(event);
      } else {
        e = cudaStreamWaitEvent(static_cast<cudaStream_t>(DlpackStream(s)), event, 0);
        // 2 (per-thread default stream) means *this* thread's stream; the
        // capsule may be freed on another thread, where the same handle
        // names another stream: fenced on the legacy default stream, which
        // follows every thread's per-thread stream (a blocking stream).
        fence = true;
        fence_stream = DlpackStream(s == 2 ? 1 : s);
      }
      if (e != cudaSuccess) {
        Raise(absl::InternalError(absl::StrCat("waiting for the batch copy: ", cudaGetErrorString(e))));
      }
    }
    auto* ctx = new ManagerContext{batch_, t_.shape, fence, fence_stream};
    auto* m = new DLManagedTensor{};
    m->dl_tensor.data = t_.data;
    m->dl_tensor.device = t_.device >= 0 ? DLDevice{kDLCUDA, t_.device} : DLDevice{kDLCPU, 0};
    m->dl_tensor.ndim = static_cast<int32_t>(ctx->shape.size());
    m->dl_tensor.dtype = DlType(t_.dtype);
    m->dl_tensor.shape = ctx->shape.data();
    m->dl_tensor.strides = nullptr;
    m->dl_tensor.byte_offset = 0;
    m->manager_ctx = ctx;
    m->deleter = &DeleteManaged;
    PyObject* capsule = PyCapsule_New(m, "dltensor", &CapsuleDestructor);
    if (capsule == nullptr) {
      DeleteManaged(m);
      throw py::error_already_set();
    }
    return py::reinterpret_steal<py::object>(capsule);
  }

 private:
  std::shared_ptr<HeldBatch> batch_;
  Tensor t_;
};

class PyLoader {
 public:
  PyLoader(const std::vector<std::string>& paths, const std::string& split, const std::string& spec,
           int64_t batch_size, bool shuffle, uint64_t seed, int64_t shuffle_buffer, int64_t epochs,
           bool drop_remainder, int io_threads, int decode_threads, int prefetch, int device,
           int rank, int world_size, bool skip_corrupt, bool cache,
           const std::vector<std::string>& cache_features, int64_t cache_budget_bytes,
           const std::map<std::string, std::string>& transforms, bool grow_ring,
           const std::string& resume, const std::string& shuffle_mode,
           const std::map<std::string, std::string>& decode, const std::string& cache_dir,
           uint64_t cache_limit, uint64_t extent_bytes) {
    LoaderOptions o;
    o.decode = decode;
    o.remote.cache_dir = cache_dir;
    o.remote.cache_limit = cache_limit;
    o.remote.extent_bytes = extent_bytes;
    if (!resume.empty()) {
      auto state = LoaderState::Parse(resume);
      if (!state.ok()) Raise(state.status());
      o.resume = *state;
    }
    if (shuffle_mode == "quasi") {
      o.shuffle_mode = ShuffleMode::kQuasi;
    } else if (shuffle_mode != "global") {
      Raise(absl::InvalidArgumentError(absl::StrCat("shuffle must be True, False, 'global' or "
                                                    "'quasi', not '", shuffle_mode, "'")));
    }
    o.grow_ring = grow_ring;
    if (!spec.empty()) {
      auto parsed = ParseSpec(spec);
      if (!parsed.ok()) Raise(parsed.status());
      o.features = *parsed;
    }
    o.batch_size = batch_size;
    o.shuffle = shuffle;
    o.seed = seed;
    o.shuffle_buffer = shuffle_buffer;
    o.epochs = epochs;
    o.drop_remainder = drop_remainder;
    o.io_threads = io_threads;
    o.decode_threads = decode_threads;
    o.prefetch = prefetch;
    o.device = device;
    o.rank = rank;
    o.world_size = world_size;
    o.skip_corrupt = skip_corrupt;
    o.cache.enabled = cache;
    o.cache.features = cache_features;
    o.cache.budget_bytes = cache_budget_bytes;
    for (const auto& [feature, text] : transforms) {
      auto t = ParseTransform(absl::StrCat(feature, "=", text));
      if (!t.ok()) Raise(t.status());
      o.transforms.push_back(*t);
    }
    absl::StatusOr<std::unique_ptr<Loader>> loader;
    {
      py::gil_scoped_release release;
      auto ds = Dataset::Open(paths, split);
      if (ds.ok()) notes_ = ds->notes;
      loader = ds.ok() ? Loader::Create(*std::move(ds), o) : ds.status();
    }
    if (!loader.ok()) Raise(loader.status());
    loader_ = std::shared_ptr<Loader>(*std::move(loader));
  }

  // The loader, kept alive for the caller even if close() runs meanwhile on
  // another thread; FAILED_PRECONDITION once closed.
  std::shared_ptr<Loader> Get() const {
    std::lock_guard<std::mutex> lock(mu_);
    if (loader_ == nullptr) {
      Raise(absl::FailedPreconditionError("the loader is closed (close() was called)"));
    }
    return loader_;
  }

  // (tensors, epoch, rows), or None after the last epoch.
  py::object Next() {
    for (;;) {
      std::shared_ptr<Loader> loader = Get();  // re-checked every poll: close() stops us
      absl::StatusOr<Batch> b;
      {
        py::gil_scoped_release release;
        b = loader->Next(absl::Milliseconds(100));
        // If close() ran meanwhile this is the last reference: ~Loader joins
        // its threads (maybe in a device sync) here, not with the GIL held.
        loader.reset();
      }
      if (absl::IsDeadlineExceeded(b.status())) {
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // e.g. KeyboardInterrupt
        continue;
      }
      if (absl::IsOutOfRange(b.status())) return py::none();
      if (!b.ok()) Raise(b.status());
      auto held = std::make_shared<HeldBatch>();
      held->batch = *std::move(b);
      py::list tensors;
      for (const Tensor& t : held->batch.tensors()) tensors.append(PyTensor(held, t));
      return py::make_tuple(tensors, held->batch.epoch(), held->batch.size());
    }
  }

  // Another thread's next() holds its own reference: the loader is
  // destroyed when the last user lets go, never under it.
  void Close() {
    std::shared_ptr<Loader> last;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last = std::move(loader_);
    }
    py::gil_scoped_release release;
    last.reset();
  }

  std::string State() const { return Get()->state().ToString(); }

  // Dataset::notes of the opened dataset (e.g. which split was chosen).
  const std::vector<std::string>& notes() const { return notes_; }

  py::dict Stats() const {
    py::dict d;
    std::shared_ptr<Loader> loader;
    {
      std::lock_guard<std::mutex> lock(mu_);
      loader = loader_;
    }
    if (loader == nullptr) return d;
    LoaderStats s = loader->stats();
    d["batches"] = s.batches;
    d["records"] = s.records;
    d["bytes"] = s.bytes;
    d["skipped_records"] = s.skipped_records;
    d["wall_seconds"] = s.wall_seconds;
    d["read_seconds"] = s.read_seconds;
    d["crc_seconds"] = s.crc_seconds;
    d["decode_seconds"] = s.decode_seconds;
    d["copy_seconds"] = s.copy_seconds;
    d["wait_seconds"] = s.wait_seconds;
    d["cache_bytes"] = s.cache_bytes;
    // Remote datasets: requests and bytes per record read (amplification).
    d["remote_requests"] = s.remote_requests;
    d["remote_bytes"] = s.remote_bytes;
    d["extent_cache_hits"] = s.extent_cache_hits;
    d["remote_requests_in_flight"] = s.remote_in_flight;
    d["remote_first_byte_seconds"] = s.remote_first_byte_seconds;
    d["remote_bytes_per_second"] = s.remote_bytes_per_second;
    d["requests_per_record"] =
        s.records > 0 ? static_cast<double>(s.remote_requests) / s.records : 0.0;
    d["remote_bytes_per_record"] =
        s.records > 0 ? static_cast<double>(s.remote_bytes) / s.records : 0.0;
    return d;
  }

  std::shared_ptr<Loader> loader() const { return Get(); }

 private:
  mutable std::mutex mu_;  // guards loader_ (the pointer)
  std::shared_ptr<Loader> loader_;
  std::vector<std::string> notes_;  // set once by the constructor
};

[[noreturn]] void RefusePickling(const char* what) {
  PyErr_SetString(PyExc_TypeError,
                  absl::StrCat("a shardfeed ", what, " cannot be pickled or sent to another "
                               "process (e.g. torch DataLoader with num_workers > 0): the Loader "
                               "already reads and decodes in parallel threads and batches; "
                               "iterate it directly in the training process")
                      .c_str());
  throw py::error_already_set();
}

std::string ConvertJson(const std::string& type, const std::string& input,
                        const std::string& output, const std::string& prefix, int64_t shard_size,
                        int64_t num_shards, bool shuffle, uint64_t seed,
                        const std::string& compression, int threads, bool overwrite, bool strict,
                        const std::string& validation_from, bool allow_small_shards,
                        int compression_level, int max_side, int quality, int64_t task_index,
                        int64_t task_count) {
  ConvertOptions o;
  o.type = type;
  o.input = input;
  o.output_dir = output;
  o.prefix = prefix;
  o.shard_size = static_cast<uint64_t>(shard_size);
  o.num_shards = num_shards;
  o.shuffle = shuffle;
  o.seed = seed;
  auto c = ParseCompression(compression);
  if (!c.ok()) Raise(c.status());
  o.compression = *c;
  o.threads = threads;
  o.overwrite = overwrite;
  o.strict = strict;
  o.validation_from = validation_from;
  o.allow_small_shards = allow_small_shards;
  o.compression_level = compression_level;
  o.max_side = max_side;
  o.quality = quality;
  auto task = ResolveTask(task_index, task_count);  // as the CLI: -1, then Slurm / K8s
  if (!task.ok()) Raise(task.status());
  o.task_index = task->first;
  o.task_count = task->second;
  // Ctrl-C: the main thread's signal handlers run from the poll; the
  // conversion is cancelled (temporaries removed) and KeyboardInterrupt raised.
  std::atomic<bool> interrupted{false};
  o.cancelled = PythonSignalPoll(&interrupted);
  absl::StatusOr<ConvertSummary> summary;
  {
    py::gil_scoped_release release;
    summary = Convert(o);
  }
  if (interrupted.load()) throw py::error_already_set();
  if (!summary.ok()) Raise(summary.status());
  return SummaryToJson(*summary);
}

std::string CheckJson(const std::vector<std::string>& paths, bool raw, int threads,
                      const std::string& salvage_dir, bool overwrite, int decode) {
  CheckOptions o;
  o.raw = raw;
  o.decode = decode;  // -1 the default per dataset, 0 headers only, 1 whole decode
  o.threads = threads;
  o.salvage_dir = salvage_dir;
  o.overwrite = overwrite;
  absl::StatusOr<CheckReport> report;
  {
    py::gil_scoped_release release;
    report = Check(paths, o);
  }
  if (!report.ok()) Raise(report.status());
  return ReportToJson(*report);
}

}  // namespace
}  // namespace shardfeed::python

using namespace shardfeed::python;  // NOLINT: the module's bindings

PYBIND11_MODULE(_shardfeed, m) {
  m.doc() = "shardfeed's C++ engine; use the `shardfeed` package";
  g_error = PyErr_NewException("shardfeed.Error", PyExc_RuntimeError, nullptr);
  g_data_loss = PyErr_NewException("shardfeed.DataLossError", g_error, nullptr);
  g_invalid = PyErr_NewException("shardfeed.InvalidArgumentError",
                                 PyTuple_Pack(2, g_error, PyExc_ValueError), nullptr);
  g_not_found = PyErr_NewException("shardfeed.NotFoundError",
                                   PyTuple_Pack(2, g_error, PyExc_FileNotFoundError), nullptr);
  m.attr("Error") = py::handle(g_error);
  m.attr("DataLossError") = py::handle(g_data_loss);
  m.attr("InvalidArgumentError") = py::handle(g_invalid);
  m.attr("NotFoundError") = py::handle(g_not_found);

  py::class_<PyTensor>(m, "Tensor")
      .def_property_readonly("name", &PyTensor::name)
      .def_property_readonly("dtype", &PyTensor::dtype)
      .def_property_readonly("shape", &PyTensor::shape)
      .def_property_readonly("device", &PyTensor::device)
      .def_property_readonly("nbytes", &PyTensor::nbytes)
      .def("__dlpack__",
           [](PyTensor& t, py::object stream, py::object, py::object dl_device, py::object copy) {
             // Zero-copy export only: a copy or another device is refused
             // (the consumer copies after importing, where it can).
             if (!copy.is_none() && copy.cast<bool>()) {
               throw py::buffer_error(
                   "shardfeed exports batch memory without copying (copy=True refused): import "
                   "it, then copy (e.g. torch.from_dlpack(t).clone())");
             }
             if (!dl_device.is_none()) {
               py::tuple want = dl_device;
               py::tuple have = t.DlpackDevice();
               if (want.size() != 2 || want[0].cast<int>() != have[0].cast<int>() ||
                   want[1].cast<int>() != have[1].cast<int>()) {
                 throw py::buffer_error(absl::StrCat(
                     "shardfeed exports tensors where they are (dl_device=",
                     std::string(py::str(want)), " refused: this tensor is on ",
                     std::string(py::str(have)), ")"));
               }
             }
             return t.Dlpack(std::move(stream));
           },
           py::kw_only(), py::arg("stream") = py::none(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
           py::arg("copy") = py::none())
      .def("__dlpack_device__", &PyTensor::DlpackDevice)
      .def("__reduce__", [](const PyTensor&) -> py::object { RefusePickling("Tensor"); });

  py::class_<PyLoader>(m, "Loader")
      .def(py::init<const std::vector<std::string>&, const std::string&, const std::string&,
                    int64_t, bool, uint64_t, int64_t, int64_t, bool, int, int, int, int, int, int,
                    bool, bool, const std::vector<std::string>&, int64_t,
                    const std::map<std::string, std::string>&, bool, const std::string&,
                    const std::string&, const std::map<std::string, std::string>&,
                    const std::string&, uint64_t, uint64_t>())
      .def("next", &PyLoader::Next)
      .def("close", &PyLoader::Close)
      .def("stats", &PyLoader::Stats)
      .def("state", &PyLoader::State)
      .def("__reduce__", [](const PyLoader&) -> py::object { RefusePickling("Loader"); })
      .def_property_readonly("device", [](const PyLoader& l) { return l.loader()->device(); })
      .def_property_readonly("device_note",
                             [](const PyLoader& l) { return l.loader()->device_note(); })
      .def_property_readonly("cache_note",
                             [](const PyLoader& l) { return l.loader()->cache_note(); })
      .def_property_readonly("notes", &PyLoader::notes)
      .def_property_readonly("feature_notes",
                             [](const PyLoader& l) { return l.loader()->notes(); })
      .def_property_readonly("path_note", [](const PyLoader& l) { return l.loader()->path_note(); })
      .def_property_readonly("batches_per_epoch",
                             [](const PyLoader& l) { return l.loader()->batches_per_epoch(); })
      .def_property_readonly("spec",
                             [](const PyLoader& l) {
                               return shardfeed::SpecToString(l.loader()->features());
                             });

  m.def("convert", &ConvertJson);
  // anonymous=True: s3:// and gs:// reads are not signed (public buckets).
  m.def("set_anonymous", [](bool anonymous) { shardfeed::remote::SetAnonymousAccess(anonymous); });
  m.def("check", &CheckJson);
  RegisterWriter(m, &Raise);  // Writer, merge: python/writer_binding.cc
  RegisterDlpackConsumer(m, g_error);  // tests' consumer: python/dlpack_consumer.cc
  RegisterCli(m);                      // run_cli: python/cli_binding.cc
}
