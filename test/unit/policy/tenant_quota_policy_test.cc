#include "kvc/store/policy_file.h"

#include <dirent.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures.h"

namespace kvc::store {
namespace {

TEST(PolicyFileTest, EmptyLedgerRendersAnEmptySequence) {
  auto text = renderPolicyFile({});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "version: 1\ntenants: []\n");
}

TEST(PolicyFileTest, TenantsAreSortedQuotedAndInBytes) {
  auto text = renderPolicyFile({{"team-b", 536870912}, {"team-a", 268435456}, {"a\"b\\c", 1}});
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text,
            "version: 1\n"
            "tenants:\n"
            "  - name: \"a\\\"b\\\\c\"\n"
            "    quota: 1\n"
            "  - name: \"team-a\"\n"
            "    quota: 268435456\n"
            "  - name: \"team-b\"\n"
            "    quota: 536870912\n");
}

TEST(PolicyFileTest, RenderedFilesReadBackToTheSameTenants) {
  const std::vector<TenantPolicy> tenants = {
      {"yes", 1}, {"123", 2}, {"#x", 3}, {"x: y", 4}, {"-x", 5}, {"ünï", 6}, {"a'b", 7},
      {"max", INT64_MAX}};
  auto text = renderPolicyFile(tenants);
  ASSERT_TRUE(text.ok()) << text.status().message();
  auto back = parsePolicyFile(*text);
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << *text;
  std::vector<TenantPolicy> sorted = tenants;
  std::sort(sorted.begin(), sorted.end(),
            [](const TenantPolicy& a, const TenantPolicy& b) { return a.name < b.name; });
  EXPECT_EQ(*back, sorted);
}

TEST(PolicyFileTest, ReadsTheMastersOwnRewrite) {
  auto tenants =
      parsePolicyFile(testing::readFixture(testing::kCurrent, "policy_file_saved_by_master.yaml"));
  ASSERT_TRUE(tenants.ok()) << tenants.status().message();
  ASSERT_EQ(tenants->size(), 1u);
  EXPECT_EQ((*tenants)[0], (TenantPolicy{"team-a", 67108864}));
}

TEST(PolicyFileTest, RefusesTheQuotaPast2To63ThatAn0312MasterSaved) {
  // 0.3.12.post1 accepted a PUT of 2^63 bytes and wrote it to its file; 0.3.13 refuses such a
  // file at start, and so do we.
  auto tenants =
      parsePolicyFile(testing::readFixture(testing::kLegacy, "policy_file_saved_by_master.yaml"));
  ASSERT_FALSE(tenants.ok());
  EXPECT_NE(tenants.status().message().find("tenants[1]"), std::string::npos)
      << tenants.status().message();
  EXPECT_NE(tenants.status().message().find("2^63"), std::string::npos)
      << tenants.status().message();
}

TEST(PolicyFileTest, NothingInvalidIsRendered) {
  const std::vector<std::vector<TenantPolicy>> bad = {
      {{"", 1}},
      {{"_system", 1}},
      {{std::string("a\0b", 3), 1}},
      {{"a\nb", 1}},
      {{"a\x7f", 1}},
      {{"\xff\xfe", 1}},
      {{"\xc3", 1}},
      {{"ok", 0}},
      {{"ok", -5}},
  };
  for (const auto& tenants : bad) {
    auto text = renderPolicyFile(tenants);
    ASSERT_FALSE(text.ok()) << tenants[0].name;
    EXPECT_EQ(text.status().code(), StatusCode::InvalidArgument);
  }
}

TEST(PolicyFileTest, DuplicateIsReportedAtItsSecondOccurrence) {
  auto text = renderPolicyFile({{"a", 1}, {"b", 1}, {"a", 2}});
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("tenants[2]"), std::string::npos)
      << text.status().message();
}

TEST(PolicyFileTest, QuotaUnitsAreTheMastersBinaryCaseSensitiveOnes) {
  EXPECT_EQ(*parsePolicyQuota("7"), 7);
  EXPECT_EQ(*parsePolicyQuota("5B"), 5);
  EXPECT_EQ(*parsePolicyQuota("3KB"), 3072);
  EXPECT_EQ(*parsePolicyQuota("1MB"), 1048576);
  EXPECT_EQ(*parsePolicyQuota("2GB"), 2147483648);
  EXPECT_EQ(*parsePolicyQuota("1TB"), 1099511627776);
  EXPECT_EQ(*parsePolicyQuota("9223372036854775807"), INT64_MAX);
  for (const char* bad : {"1MiB", "1mb", "1 MB", "1PB", "0", "0MB", "9223372036854775808",
                          "8388608TB", "", "MB", "-1", "1.5GB"}) {
    EXPECT_FALSE(parsePolicyQuota(bad).ok()) << bad;
  }
}

TEST(PolicyFileTest, ParsingFollowsTheMastersRules) {
  auto units = parsePolicyFile("version: 1\ntenants:\n  - name: a\n    quota: 1MB\n");
  ASSERT_TRUE(units.ok()) << units.status().message();
  EXPECT_EQ((*units)[0].quota_bytes, 1048576);
  for (const char* bad : {
           "tenants: []\n",                                            // no version
           "version: 2\ntenants: []\n",                                // unknown version
           "version: 1\n",                                             // no tenants
           "version: 1\ntenants: {}\n",                                // not a sequence
           "version: 1\ntenants:\n  - name: a\n",                      // no quota
           "version: 1\ntenants:\n  - quota: 1\n",                     // no name
           "version: 1\ntenants:\n  - name: yes\n    quota: 1\n",      // a boolean, not a name
           "version: 1\ntenants:\n  - name: _a\n    quota: 1\n",       // reserved
           "version: 1\ntenants:\n  - name: a\n    quota: 1MiB\n",     // unit
           "version: 1\ntenants:\n  - name: a\n    quota: 1\n  - name: a\n    quota: 2\n",
       }) {
    EXPECT_FALSE(parsePolicyFile(bad).ok()) << bad;
  }
}

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
  auto text = renderPolicyFile({{"team-a", 1024}});
  ASSERT_TRUE(text.ok());
  ASSERT_TRUE(writePolicyFileAtomic(path, *text).ok());
  EXPECT_EQ(read(path), *text);
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
