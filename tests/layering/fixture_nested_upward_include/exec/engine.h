// Fixture for the layering check: exec/ sits below workloads/schedules/, so
// this include (a layer whose folder is nested) must be reported.
#pragma once
#include "workloads/schedules/step_program.h"
