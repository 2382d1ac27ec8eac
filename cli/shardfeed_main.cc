// The shardfeed binary: the whole command is RunShardfeed (cli/main.cc), which
// the Python package's console script runs too.
#include "cli/command.h"

int main(int argc, char** argv) { return shardfeed::cli::RunShardfeed(argc, argv); }
