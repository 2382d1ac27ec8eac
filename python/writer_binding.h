// Registers the Python writer's engine (Writer, merge) into the extension
// module; see writer_binding.cc. `raise` turns a Status into the module's
// exception and throws (it does not return).
#ifndef SHARDFEED_PYTHON_WRITER_BINDING_H_
#define SHARDFEED_PYTHON_WRITER_BINDING_H_

#include <pybind11/pybind11.h>

#include "absl/status/status.h"

namespace shardfeed::python {

void RegisterWriter(pybind11::module_& m, void (*raise)(const absl::Status&));

}  // namespace shardfeed::python

#endif  // SHARDFEED_PYTHON_WRITER_BINDING_H_
