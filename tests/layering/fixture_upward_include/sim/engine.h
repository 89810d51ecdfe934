// Test fixture: the engine must not know about the command line.
#pragma once
#include "cli/main_command.h"
