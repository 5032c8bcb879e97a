#include "golden.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace kvc::golden {

bool updating() {
  const char* value = std::getenv("KVC_UPDATE_GOLDEN");
  return value != nullptr && std::string(value) == "1";
}

std::vector<std::string> discover(const std::filesystem::path& dir, const std::string& extension) {
  std::vector<std::string> stems;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.size() > extension.size() && name.ends_with(extension)) {
      stems.push_back(name.substr(0, name.size() - extension.size()));
    }
  }
  std::sort(stems.begin(), stems.end());
  return stems;
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

namespace {

void writeAtomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path temporary = path.string() + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
  }
  std::filesystem::rename(temporary, path);
}

std::string unifiedDiff(const std::filesystem::path& expected, const std::string& actual) {
  char pattern[] = "/tmp/kvc-golden-XXXXXX";
  const int fd = mkstemp(pattern);
  if (fd < 0) {
    return "(could not write a temporary file for the diff)";
  }
  close(fd);
  {
    std::ofstream out(pattern, std::ios::binary | std::ios::trunc);
    out << actual;
  }
  const std::string command =
      "diff -u --label expected --label actual '" + expected.string() + "' '" + pattern + "'";
  std::string output;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    std::array<char, 4096> chunk{};
    std::size_t n = 0;
    while ((n = fread(chunk.data(), 1, chunk.size(), pipe)) > 0) {
      output.append(chunk.data(), n);
    }
    pclose(pipe);
  }
  std::remove(pattern);
  return output;
}

}  // namespace

std::string compare(const std::filesystem::path& expected, const std::string& actual) {
  if (updating()) {
    writeAtomically(expected, actual);
    return {};
  }
  if (!std::filesystem::exists(expected)) {
    return expected.string() + " does not exist; run with KVC_UPDATE_GOLDEN=1 to create it";
  }
  if (readFile(expected) == actual) {
    return {};
  }
  return expected.string() + " differs (KVC_UPDATE_GOLDEN=1 regenerates it):\n" +
         unifiedDiff(expected, actual);
}

std::string caseName(const std::string& stem) {
  std::string name;
  for (char c : stem) {
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return name;
}

std::vector<std::string> goldensWithoutInput(const std::filesystem::path& dir,
                                             const std::string& input_extension) {
  const std::vector<std::string> inputs = discover(dir, input_extension);
  std::vector<std::string> orphans;
  for (const std::string& stem : discover(dir, ".golden")) {
    if (std::find(inputs.begin(), inputs.end(), stem) == inputs.end()) {
      orphans.push_back(stem);
    }
  }
  return orphans;
}

}  // namespace kvc::golden
