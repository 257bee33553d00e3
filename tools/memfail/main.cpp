// SPDX-License-Identifier: MIT
// The memfail command-line tool: everything lives in libmemfail and commands/.
#include <commands/cli.hpp>

int main(int argc, char** argv) { return memfail::cli::main(argc, argv); }
