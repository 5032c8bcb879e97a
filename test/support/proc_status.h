#pragma once
// One figure of /proc/<pid>/status in KiB (VmRSS, VmHWM, ...): how the benchmarks read a
// process's memory. -1 when the process or the field is not there.

#include <cstdlib>
#include <fstream>
#include <string>

namespace kvc::testing {

// `pid`: a process id, or "self".
inline long procStatusKib(const std::string& pid, const char* field) {
  std::ifstream in("/proc/" + pid + "/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) {
      return std::atol(line.c_str() + prefix.size());
    }
  }
  return -1;
}

}  // namespace kvc::testing
