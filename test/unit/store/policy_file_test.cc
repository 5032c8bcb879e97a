// Writing the tenant-quota policy file: atomically, next to the target, nothing left behind.
#include "kvc/store/policy_file.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace kvc::store {
namespace {

class PolicyFileWriteTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/kvc-policy-test.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const std::string& name : entries()) {
      ::unlink((dir_ + "/" + name).c_str());
    }
    ::rmdir(dir_.c_str());
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    if (DIR* d = ::opendir(dir_.c_str())) {
      while (dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") {
          names.push_back(name);
        }
      }
      ::closedir(d);
    }
    return names;
  }
  std::string read(const std::string& path) const {
    std::ifstream in(path);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }

  std::string dir_;
};

TEST_F(PolicyFileWriteTest, ReplacesTheFileAndLeavesNoTemporary) {
  const std::string path = dir_ + "/tenant_quotas.yaml";
  ASSERT_TRUE(writePolicyFileAtomic(path, "version: 1\ntenants: []\n").ok());
  EXPECT_EQ(read(path), "version: 1\ntenants: []\n");
  const std::string text = "version: 1\ntenants:\n  - name: \"team-a\"\n    quota: 1024\n";
  ASSERT_TRUE(writePolicyFileAtomic(path, text).ok());
  EXPECT_EQ(read(path), text);
  EXPECT_EQ(entries(), std::vector<std::string>{"tenant_quotas.yaml"});
}

TEST_F(PolicyFileWriteTest, MissingDirectoryFailsWithoutWriting) {
  const Status status = writePolicyFileAtomic(dir_ + "/missing/tenant_quotas.yaml", "x");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::FailedPrecondition);
  EXPECT_NE(status.message().find("writable"), std::string::npos) << status.message();
}

TEST_F(PolicyFileWriteTest, ADirectoryInTheWayFailsAndCleansUp) {
  const std::string path = dir_ + "/tenant_quotas.yaml";
  ASSERT_EQ(::mkdir(path.c_str(), 0755), 0);
  EXPECT_FALSE(writePolicyFileAtomic(path, "x").ok());
  ::rmdir(path.c_str());
  EXPECT_TRUE(entries().empty());
}

}  // namespace
}  // namespace kvc::store
