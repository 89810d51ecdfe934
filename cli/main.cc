#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const int code = clustersim::cli::run_clustersim(args, std::cout, std::cerr);
  std::cout.flush();
  return code;
}
