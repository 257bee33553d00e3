// SPDX-License-Identifier: MIT
// (RunConfig is a plain aggregate; this file keeps the subsystem non-empty until runner.cpp lands.)
#include <memfail/run/run_config.hpp>
