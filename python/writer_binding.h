// Registers the Python writer's engine (Writer, merge) into the extension
// module; see writer_binding.cc. `raise` turns a Status into the module's
// exception and throws (it does not return).
#ifndef SHARDFEED_PYTHON_WRITER_BINDING_H_
#define SHARDFEED_PYTHON_WRITER_BINDING_H_

#include <pybind11/pybind11.h>

#include <atomic>
#include <functional>

#include "absl/status/status.h"

namespace shardfeed::python {

void RegisterWriter(pybind11::module_& m, void (*raise)(const absl::Status&));

// A `cancelled` poll for long C++ work run with the GIL released (convert,
// a Writer's upload): it takes the GIL and runs Python's signal handlers
// (on the main thread); once one raised (KeyboardInterrupt), *interrupted
// is set and the poll answers true. The caller then throws
// pybind11::error_already_set. `interrupted` must outlive the poll.
std::function<bool()> PythonSignalPoll(std::atomic<bool>* interrupted);

}  // namespace shardfeed::python

#endif  // SHARDFEED_PYTHON_WRITER_BINDING_H_
