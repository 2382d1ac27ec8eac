// _shardfeed.Writer and _shardfeed.merge: the Python writer's engine
// (python/shardfeed/writer.py is the public API). Registered into the
// extension module by RegisterWriter() from shardfeed_ext.cc.
//
// Each record (a dict: name -> bytes, str, int, float, a list of those, a
// numpy array or scalar, or None for "absent") is encoded into an Example with
// the GIL held (the values are Python objects; bytes are copied once, into
// the record), then framed (CRCs) and written with the GIL released. The
// schema is declared (every record is checked against it) or inferred: each
// record's features are folded into it (converter/schema_fold.h). Numpy
// arrays are recorded as the converters do: uint8 arrays as raw bytes with
// dtype "uint8" and their shape (CIFAR's image), other integer arrays as
// int64 lists, float32/float16 arrays as float lists, with their dtype and
// shape. float64 (numpy arrays and scalars, or a feature declared "float64")
// has no TFRecord list that holds it: it is stored exactly, as raw
// little-endian doubles in one bytes value with dtype "float64" and its
// shape ([-1] when it varies), and the reader delivers float64. A plain
// Python float is a float (float32) value, as in tf.train.FloatList; one
// float32 cannot hold (overflow to inf, or a nonzero value that would be 0)
// is refused, as is an integer outside int64 (uint64 arrays included).
//
// Errors are shardfeed exceptions (shardfeed.InvalidArgumentError, also a
// ValueError, for a bad record), raised by the caller-supplied `raise`.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cmath>
#include <cctype>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "converter/convert.h"
#include "converter/dataset_writer.h"
#include "converter/example_encoder.h"
#include "converter/merge.h"
#include "converter/schema_fold.h"
#include "converter/source.h"
#include "python/writer_binding.h"

namespace py = pybind11;

namespace shardfeed::python {
namespace {

void (*g_raise)(const absl::Status&) = nullptr;

[[noreturn]] void Fail(const absl::Status& s) {
  g_raise(s);
  throw std::logic_error("unreachable");
}

[[noreturn]] void BadValue(const std::string& name, const std::string& what) {
  Fail(absl::InvalidArgumentError(absl::StrCat("feature '", name, "': ", what)));
}

// A feature as the writer saw it (no description): the sources' MakeFeature.
FeatureSchema Seen(const std::string& name, const char* kind, int64_t length,
                   const std::string& dtype = "", std::vector<int64_t> shape = {}) {
  return MakeFeature(name, kind, length, /*description=*/"", dtype, std::move(shape));
}

// Values built while encoding one record, referenced by the encoder until
// Finish: deques, so that adding one never moves the others.
struct Held {
  std::deque<std::string> strings;
  std::deque<std::vector<std::string>> lists;
};

// A Python int as int64, or a message naming the feature and the range.
int64_t ToInt64(const std::string& name, const py::handle& value) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    BadValue(name, absl::StrCat("the integer ", std::string(py::str(value)),
                                " is outside int64's range [-2**63, 2**63 - 1]"));
  }
  return v;
}

// A Python float as float32, refusing what float32 cannot hold at all.
float ToFloat32(const std::string& name, double d) {
  const float f = static_cast<float>(d);
  if ((std::isinf(f) && std::isfinite(d)) || (f == 0 && d != 0)) {
    BadValue(name, absl::StrCat(d, " is outside float32's range (about 1.2e-38 to 3.4e38 in "
                                   "magnitude; floats are stored as float32): for doubles, give "
                                   "a numpy float64 array or scalar (stored exactly)"));
  }
  return f;
}

// Doubles stored exactly: raw little-endian bytes, dtype "float64".
FeatureSchema AddDoubles(const std::string& name, const char* data, size_t count,
                         std::vector<int64_t> shape, ExampleEncoder* e, Held* keep) {
  static_assert(sizeof(double) == 8, "IEEE-754 doubles");
  keep->strings.emplace_back(data, count * sizeof(double));
  e->AddBytes(name, keep->strings.back());
  return Seen(name, "bytes", 1, "float64", std::move(shape));
}

float HalfToFloat(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  float v = exponent == 0    ? std::ldexp(static_cast<float>(mantissa), -24)
            : exponent == 31 ? (mantissa != 0 ? NAN : INFINITY)
                             : std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  return (h & 0x8000) != 0 ? -v : v;
}

// bytes or str, referenced in place (the record dict keeps it alive; a str
// caches its UTF-8 form).
absl::string_view TextView(const py::handle& value) {
  char* data = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_Check(value.ptr())) {
    PyBytes_AsStringAndSize(value.ptr(), &data, &size);
  } else {
    const char* utf8 = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
    if (utf8 == nullptr) throw py::error_already_set();
    return absl::string_view(utf8, static_cast<size_t>(size));
  }
  return absl::string_view(data, static_cast<size_t>(size));
}

// A C-contiguous buffer (numpy array or scalar) as a feature; `declared`:
// the declared schema's entry, if any (a declared float list takes a float64
// array as float32, as asked).
FeatureSchema AddBuffer(const std::string& name, const py::handle& value, ExampleEncoder* e,
                        Held* keep, const FeatureSchema* declared) {
  Py_buffer view;
  if (PyObject_GetBuffer(value.ptr(), &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
    PyErr_Clear();
    BadValue(name, "an array that is not C-contiguous (use numpy.ascontiguousarray)");
  }
  std::unique_ptr<Py_buffer, void (*)(Py_buffer*)> release(&view, PyBuffer_Release);
  std::string format = view.format != nullptr ? view.format : "B";
  if (!format.empty() && std::strchr("@=<>!", format[0]) != nullptr) format.erase(0, 1);
  std::vector<int64_t> shape(view.shape, view.shape + view.ndim);
  const int64_t n = view.itemsize > 0 ? view.len / view.itemsize : 0;
  const char c = format.size() == 1 ? format[0] : '?';
  const char* p = static_cast<const char*>(view.buf);
  if (c == 'B' || c == 'c') {  // raw bytes: a uint8 tensor
    keep->strings.emplace_back(p, static_cast<size_t>(view.len));
    e->AddBytes(name, keep->strings.back());
    return Seen(name, "bytes", 1, "uint8", shape);
  }
  const std::string bits = std::to_string(8 * view.itemsize);
  if (std::strchr("bhilqBHILQ?", c) != nullptr) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const char* x = p + i * view.itemsize;
      switch (c) {
        case 'b': v[i] = *reinterpret_cast<const int8_t*>(x); break;
        case 'h': v[i] = *reinterpret_cast<const int16_t*>(x); break;
        case 'i': v[i] = *reinterpret_cast<const int32_t*>(x); break;
        case 'l': case 'q': v[i] = *reinterpret_cast<const int64_t*>(x); break;
        case 'H': v[i] = *reinterpret_cast<const uint16_t*>(x); break;
        case 'I': v[i] = *reinterpret_cast<const uint32_t*>(x); break;
        case '?': v[i] = *reinterpret_cast<const bool*>(x) ? 1 : 0; break;
        default: {
          uint64_t u = 0;  // 'L' / 'Q': 64-bit unsigned
          std::memcpy(&u, x, sizeof(u));
          if (view.itemsize == 8 && u > static_cast<uint64_t>(INT64_MAX)) {
            BadValue(name, absl::StrCat("uint64 value ", u, " at index ", i,
                                        " is outside int64's range (stored as int64): use "
                                        "values below 2**63"));
          }
          v[i] = static_cast<int64_t>(view.itemsize == 8 ? u : *reinterpret_cast<const uint32_t*>(x));
          break;
        }
      }
    }
    e->AddInt64List(name, v);
    const std::string dtype = c == '?' ? "bool" : (std::islower(c) ? "int" : "uint") + bits;
    return Seen(name, "int64", n, dtype, shape);
  }
  if (c == 'd' && !(declared != nullptr && declared->kind() == "float")) {
    return AddDoubles(name, p, static_cast<size_t>(n), shape, e, keep);  // exact
  }
  if (c == 'f' || c == 'd' || c == 'e') {
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const char* x = p + i * view.itemsize;
      if (c == 'f') v[i] = *reinterpret_cast<const float*>(x);
      if (c == 'd') v[i] = static_cast<float>(*reinterpret_cast<const double*>(x));
      if (c == 'e') {
        uint16_t h;
        std::memcpy(&h, x, 2);
        v[i] = HalfToFloat(h);
      }
    }
    e->AddFloatList(name, v);
    return Seen(name, "float", n, "float" + bits, shape);
  }
  BadValue(name, absl::StrCat("an array of type '", format, "' (use integers, floats or uint8)"));
}

// A list or tuple: of ints, of floats (ints allowed), or of bytes/str.
// Numbers of a feature declared float64 are stored as doubles.
FeatureSchema AddList(const std::string& name, const py::sequence& list, ExampleEncoder* e,
                      Held* keep, const FeatureSchema* known) {
  const size_t n = list.size();
  bool all_int = true, any_text = false;
  for (const py::handle item : list) {
    if (py::isinstance<py::bytes>(item) || py::isinstance<py::str>(item)) any_text = true;
    else if (py::isinstance<py::float_>(item)) all_int = false;
    else if (!py::isinstance<py::int_>(item)) BadValue(name, "a list of something other than numbers or bytes");
  }
  std::string kind = any_text ? "bytes" : all_int ? "int64" : "float";
  if (n == 0) {
    if (known == nullptr) BadValue(name, "an empty list before any record gave its type: declare it in schema=");
    kind = known->kind();
  } else if (any_text && !all_int) {
    BadValue(name, "a list mixing bytes and numbers");
  }
  if (known != nullptr && known->dtype() == "float64" && kind != "bytes") {
    std::vector<double> v;
    for (const py::handle item : list) v.push_back(item.cast<double>());
    return AddDoubles(name, reinterpret_cast<const char*>(v.data()), v.size(),
                      {static_cast<int64_t>(n)}, e, keep);
  }
  if (kind == "bytes") {
    keep->lists.emplace_back();
    std::vector<std::string>& values = keep->lists.back();
    for (const py::handle item : list) {
      if (!(py::isinstance<py::bytes>(item) || py::isinstance<py::str>(item))) {
        BadValue(name, "a list mixing bytes and numbers");
      }
      values.emplace_back(TextView(item));
    }
    e->AddBytesList(name, values);
  } else if (kind == "int64" && all_int) {
    std::vector<int64_t> v;
    for (const py::handle item : list) v.push_back(ToInt64(name, item));
    e->AddInt64List(name, v);
  } else {
    std::vector<float> v;
    for (const py::handle item : list) v.push_back(ToFloat32(name, item.cast<double>()));
    e->AddFloatList(name, v);
    kind = "float";
  }
  return Seen(name, kind.c_str(), static_cast<int64_t>(n));
}

const FeatureSchema* Find(const std::vector<FeatureSchema>& schema, const std::string& name) {
  for (const FeatureSchema& f : schema) {
    if (f.name() == name) return &f;
  }
  return nullptr;
}

// A record against a declared schema: known names, the declared kind and,
// where fixed, the declared length (and byte length of a raw tensor).
void CheckDeclared(const FeatureSchema& declared, const FeatureSchema& seen, size_t bytes) {
  if (declared.kind() != seen.kind()) {
    BadValue(seen.name(), absl::StrCat("is ", seen.kind(), ", the schema says ",
                                       declared.dtype() == "float64" ? "float64" : declared.kind()));
  }
  if (declared.length() > 0 && declared.length() != seen.length()) {
    BadValue(seen.name(), absl::StrCat(seen.length(), " values, the schema says ", declared.length()));
  }
  if (declared.kind() == "bytes" && !declared.dtype().empty() && seen.dtype() != declared.dtype() &&
      (declared.dtype() == "float64" || seen.dtype() == "float64")) {
    BadValue(seen.name(), absl::StrCat("is ", seen.dtype().empty() ? "bytes" : seen.dtype(),
                                       ", the schema says ", declared.dtype()));
  }
  bool fixed = declared.kind() == "bytes" && declared.shape_size() > 0;
  int64_t want = declared.dtype() == "float64" ? 8 : 1;
  for (int64_t d : declared.shape()) {
    fixed = fixed && d >= 0;
    want *= d;
  }
  if (declared.kind() == "bytes" && declared.dtype() == "float64" && declared.shape_size() == 0) {
    fixed = true;  // a float64 scalar: 8 bytes
  }
  if (fixed) {
    if (static_cast<int64_t>(bytes) != want) {
      BadValue(seen.name(), absl::StrCat(bytes, " bytes, the schema's ", declared.dtype(),
                                         " tensor has ", want));
    }
  }
}

class PyWriter {
 public:
  PyWriter(const DatasetWriterOptions& o, std::vector<FeatureSchema> declared)
      : declared_(!declared.empty()), schema_(std::move(declared)) {
    absl::StatusOr<std::unique_ptr<DatasetWriter>> w;
    {
      py::gil_scoped_release release;
      w = DatasetWriter::Create(o);
    }
    if (!w.ok()) Fail(w.status());
    writer_ = *std::move(w);
  }

  void Write(const py::dict& record) {
    if (writer_ == nullptr) Fail(absl::FailedPreconditionError("the writer is closed"));
    ExampleEncoder e;
    Held keep;  // values built here; referenced until Finish
    std::vector<FeatureSchema> seen;
    for (const auto& [key, value] : record) {
      const std::string name = py::str(key);
      if (value.is_none()) continue;
      FeatureSchema f;
      size_t bytes = 0;
      // The schema so far (declared, or inferred from earlier records): a
      // float64 feature takes later ints and floats as doubles.
      const FeatureSchema* known = Find(schema_, name);
      if (py::isinstance<py::bytes>(value) || py::isinstance<py::str>(value)) {
        const absl::string_view text = TextView(value);
        e.AddBytes(name, text);
        bytes = text.size();
        f = Seen(name, "bytes", 1);
      } else if (py::isinstance<py::bool_>(value) || py::isinstance<py::int_>(value)) {
        if (known != nullptr && known->dtype() == "float64") {
          const double d = value.cast<double>();
          f = AddDoubles(name, reinterpret_cast<const char*>(&d), 1, {}, &e, &keep);
          bytes = sizeof(double);
        } else {
          e.AddInt64(name, ToInt64(name, value));
          f = Seen(name, "int64", 1);
        }
      } else if (PyFloat_CheckExact(value.ptr()) ||
                 (py::isinstance<py::float_>(value) && !PyObject_CheckBuffer(value.ptr()))) {
        const double d = value.cast<double>();
        if (known != nullptr && known->dtype() == "float64") {
          f = AddDoubles(name, reinterpret_cast<const char*>(&d), 1, {}, &e, &keep);
          bytes = sizeof(double);
        } else {
          e.AddFloatList(name, {ToFloat32(name, d)});
          f = Seen(name, "float", 1);
        }
      } else if (PyObject_CheckBuffer(value.ptr())) {  // numpy arrays and scalars (np.float64)
        f = AddBuffer(name, value, &e, &keep, declared_ ? known : nullptr);
        if (f.kind() == "bytes") bytes = keep.strings.back().size();
      } else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
        f = AddList(name, value.cast<py::sequence>(), &e, &keep, known);
        if (f.dtype() == "float64") bytes = keep.strings.back().size();
      } else {
        BadValue(name, absl::StrCat("a value of type ", std::string(py::str(value.get_type().attr("__name__"))),
                                    " (expected bytes, str, int, float, a list or a numpy array)"));
      }
      if (declared_) {
        const FeatureSchema* d = Find(schema_, name);
        if (d == nullptr) BadValue(name, "is not in the declared schema");
        CheckDeclared(*d, f, bytes);
        // The declared dtype and shape describe the feature, not the value.
      } else {
        seen.push_back(std::move(f));
      }
    }
    if (!declared_) {
      absl::Status s = FoldSchema(&schema_, seen, /*first=*/writer_->records() == 0);
      if (!s.ok()) Fail(absl::InvalidArgumentError(absl::StrCat("record ", writer_->records(), ": ", s.message())));
    }
    std::string unframed = e.FinishUnframed();
    absl::Status s;
    {
      py::gil_scoped_release release;
      s = writer_->Write(std::move(unframed));
    }
    if (!s.ok()) Fail(s);
  }

  std::string Close() {
    if (writer_ == nullptr) Fail(absl::FailedPreconditionError("the writer is closed"));
    // Ctrl-C while a bucket output uploads: the upload stops between parts
    // (nothing left, no manifest) and KeyboardInterrupt is raised.
    std::atomic<bool> interrupted{false};
    const std::function<bool()> cancelled = PythonSignalPoll(&interrupted);
    absl::StatusOr<Manifest> m;
    {
      py::gil_scoped_release release;
      m = writer_->Close(schema_, cancelled);
      writer_.reset();
    }
    if (interrupted.load()) throw py::error_already_set();
    if (!m.ok()) Fail(m.status());
    ConvertSummary summary;
    summary.manifest = *m;
    return SummaryToJson(summary);
  }

  // Without Close(): the temporaries are removed, nothing is renamed.
  void Abort() {
    py::gil_scoped_release release;
    writer_.reset();
  }

  uint64_t records() const { return writer_ ? writer_->records() : 0; }

 private:
  bool declared_;
  std::vector<FeatureSchema> schema_;
  std::unique_ptr<DatasetWriter> writer_;
};

std::string MergeJson(const std::string& dir, int threads, const std::string& upload_to,
                      bool overwrite) {
  absl::StatusOr<MergeSummary> summary;
  {
    py::gil_scoped_release release;
    MergeOptions o;
    o.threads = threads;
    o.output = upload_to;
    o.overwrite = overwrite;
    summary = Merge(dir, o);
  }
  if (!summary.ok()) Fail(summary.status());
  ConvertSummary s;
  s.manifest = summary->manifest;
  s.seconds = summary->seconds;
  return SummaryToJson(s);
}

}  // namespace

std::function<bool()> PythonSignalPoll(std::atomic<bool>* interrupted) {
  return [interrupted] {
    if (!interrupted->load()) {
      py::gil_scoped_acquire acquire;
      if (PyErr_CheckSignals() != 0) interrupted->store(true);
    }
    return interrupted->load();
  };
}

void RegisterWriter(py::module_& m, void (*raise)(const absl::Status&)) {
  g_raise = raise;
  py::class_<PyWriter>(m, "Writer")
      .def(py::init([](const std::string& dir, const std::string& prefix, const std::string& split,
                       uint64_t shard_size, const std::string& compression, int level,
                       bool overwrite, uint64_t shuffle_window, uint64_t seed, int task_index,
                       int task_count,
                       const std::vector<std::tuple<std::string, std::string, int64_t, std::string,
                                                    std::vector<int64_t>>>& schema) {
             DatasetWriterOptions o;
             o.output_dir = dir;
             o.prefix = prefix;
             o.split = split;
             o.shard_size = shard_size;
             auto c = ParseCompression(compression);
             if (!c.ok()) Fail(c.status());
             o.compression = *c;
             o.compression_level = level;
             o.overwrite = overwrite;
             o.shuffle_window = shuffle_window;
             o.seed = seed;
             o.task_index = task_index;
             o.task_count = task_count;
             std::vector<FeatureSchema> declared;
             for (const auto& [name, kind, length, dtype, shape] : schema) {
               declared.push_back(Seen(name, kind.c_str(), length, dtype, shape));
             }
             return std::make_unique<PyWriter>(o, std::move(declared));
           }))
      .def("write", &PyWriter::Write)
      .def("close", &PyWriter::Close)
      .def("abort", &PyWriter::Abort)
      .def_property_readonly("records", &PyWriter::records);
  m.def("merge", &MergeJson);
}

}  // namespace shardfeed::python
