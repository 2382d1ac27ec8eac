// _shardfeed.run_cli(argv) -> exit status: runs the shardfeed command
// (cli/main.cc RunShardfeed: convert, check, bench, cat, copy, index, merge)
// in this process, as the binary would; shardfeed/_cli.py is the wheel's
// `shardfeed` console script around it.
//
// Contract: argv[0] is the program's name. Output goes to the process's
// stdout/stderr (C stdio and the extension's private iostreams, both flushed
// before returning). The GIL is released while the command runs; commands
// install their own SIGINT/SIGTERM handlers (Ctrl-C stops them cleanly and
// they return their exit status). Errors are exit statuses, never
// exceptions: 0 success, 1 a data problem, 2 usage or I/O error.
#include "python/cli_binding.h"

#include <pybind11/stl.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command.h"

namespace shardfeed::python {

void RegisterCli(pybind11::module_& m) {
  m.def(
      "run_cli",
      [](std::vector<std::string> args) {
        std::vector<char*> argv;
        for (std::string& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        int status;
        {
          pybind11::gil_scoped_release release;
          status = cli::RunShardfeed(static_cast<int>(args.size()), argv.data());
          std::cout.flush();
          std::cerr.flush();
          std::fflush(nullptr);
        }
        return status;
      },
      pybind11::arg("argv"),
      "Runs the shardfeed command line (argv[0] is the program name); returns its exit status.");
}

}  // namespace shardfeed::python
