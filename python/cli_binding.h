// Registers _shardfeed.run_cli(argv): the `shardfeed` command inside the
// extension, so the wheel's console script needs no separate binary (see
// cli_binding.cc).
#ifndef SHARDFEED_PYTHON_CLI_BINDING_H_
#define SHARDFEED_PYTHON_CLI_BINDING_H_

#include <pybind11/pybind11.h>

namespace shardfeed::python {

void RegisterCli(pybind11::module_& m);

}  // namespace shardfeed::python

#endif  // SHARDFEED_PYTHON_CLI_BINDING_H_
