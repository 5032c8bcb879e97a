#pragma once
// Recorded answers of real Mooncake masters (test/store/capture-fixtures.sh writes them):
// fixtures/<version>/<name> plus fixtures/<version>/index.tsv (name, status, method, path, note).

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef KVC_STORE_FIXTURES_DIR
#error "KVC_STORE_FIXTURES_DIR must name test/unit/store/fixtures"
#endif

namespace kvc::store::testing {

inline constexpr const char* kCurrent = "0.3.13.post1";  // the pinned wheel
inline constexpr const char* kLegacy = "0.3.12.post1";   // the older ledger generation

inline std::string fixturePath(const std::string& version, const std::string& name) {
  return std::string(KVC_STORE_FIXTURES_DIR) + "/" + version + "/" + name;
}

// The file's bytes; an empty string with a failed read is reported by the caller's EXPECTs.
inline std::string readFixture(const std::string& version, const std::string& name) {
  std::ifstream in(fixturePath(version, name), std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct RecordedAnswer {
  std::string name;
  int status = 0;
  std::string method;
  std::string path;
  std::string note;
};

inline std::vector<RecordedAnswer> readIndex(const std::string& version) {
  std::vector<RecordedAnswer> answers;
  std::istringstream in(readFixture(version, "index.tsv"));
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    RecordedAnswer answer;
    std::string status;
    std::getline(fields, answer.name, '\t');
    std::getline(fields, status, '\t');
    std::getline(fields, answer.method, '\t');
    std::getline(fields, answer.path, '\t');
    std::getline(fields, answer.note, '\t');
    answer.status = std::stoi(status);
    answers.push_back(answer);
  }
  return answers;
}

inline RecordedAnswer findAnswer(const std::string& version, const std::string& name) {
  for (const RecordedAnswer& answer : readIndex(version)) {
    if (answer.name == name) {
      return answer;
    }
  }
  return {};
}

}  // namespace kvc::store::testing
