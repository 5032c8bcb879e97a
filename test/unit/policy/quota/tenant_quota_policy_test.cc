#include "kvc/policy/quota/tenant_quota_policy.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../../store/fixtures.h"

namespace kvc::policy {
namespace {

TEST(TenantQuotaPolicyTest, EmptyLedgerRendersAnEmptySequence) {
  auto text = renderPolicyFile({});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "version: 1\ntenants: []\n");
}

TEST(TenantQuotaPolicyTest, TenantsAreSortedQuotedAndInBytes) {
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

TEST(TenantQuotaPolicyTest, RenderedFilesReadBackToTheSameTenants) {
  const std::vector<TenantPolicy> tenants = {{"yes", 1},  {"123", 2},        {"#x", 3},
                                             {"x: y", 4}, {"-x", 5},         {"ünï", 6},
                                             {"a'b", 7},  {"max", INT64_MAX}};
  auto text = renderPolicyFile(tenants);
  ASSERT_TRUE(text.ok()) << text.status().message();
  auto back = parsePolicyFile(*text);
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << *text;
  std::vector<TenantPolicy> sorted = tenants;
  std::sort(sorted.begin(), sorted.end(),
            [](const TenantPolicy& a, const TenantPolicy& b) { return a.name < b.name; });
  EXPECT_EQ(*back, sorted);
}

TEST(TenantQuotaPolicyTest, ReadsTheMastersOwnRewrite) {
  auto tenants = parsePolicyFile(
      store::testing::readFixture(store::testing::kCurrent, "policy_file_saved_by_master.yaml"));
  ASSERT_TRUE(tenants.ok()) << tenants.status().message();
  ASSERT_EQ(tenants->size(), 1u);
  EXPECT_EQ((*tenants)[0], (TenantPolicy{"team-a", 67108864}));
}

TEST(TenantQuotaPolicyTest, RefusesTheQuotaPast2To63ThatAn0312MasterSaved) {
  // 0.3.12.post1 accepted a PUT of 2^63 bytes and wrote it to its file; 0.3.13 refuses such a
  // file at start, and so do we.
  auto tenants = parsePolicyFile(
      store::testing::readFixture(store::testing::kLegacy, "policy_file_saved_by_master.yaml"));
  ASSERT_FALSE(tenants.ok());
  EXPECT_NE(tenants.status().message().find("tenants[1]"), std::string::npos)
      << tenants.status().message();
  EXPECT_NE(tenants.status().message().find("2^63"), std::string::npos)
      << tenants.status().message();
}

TEST(TenantQuotaPolicyTest, NothingInvalidIsRendered) {
  const std::vector<std::vector<TenantPolicy>> bad = {
      {{"", 1}},     {{"_system", 1}}, {{std::string("a\0b", 3), 1}},
      {{"a\nb", 1}}, {{"a\x7f", 1}},   {{"\xff\xfe", 1}},
      {{"\xc3", 1}}, {{"ok", 0}},      {{"ok", -5}},
  };
  for (const auto& tenants : bad) {
    auto text = renderPolicyFile(tenants);
    ASSERT_FALSE(text.ok()) << tenants[0].name;
    EXPECT_EQ(text.status().code(), StatusCode::InvalidArgument);
  }
}

TEST(TenantQuotaPolicyTest, DuplicateIsReportedAtItsSecondOccurrence) {
  auto text = renderPolicyFile({{"a", 1}, {"b", 1}, {"a", 2}});
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("tenants[2]"), std::string::npos)
      << text.status().message();
}

TEST(TenantQuotaPolicyTest, QuotaUnitsAreTheMastersBinaryCaseSensitiveOnes) {
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

TEST(TenantQuotaPolicyTest, ParsingFollowsTheMastersRules) {
  auto units = parsePolicyFile("version: 1\ntenants:\n  - name: a\n    quota: 1MB\n");
  ASSERT_TRUE(units.ok()) << units.status().message();
  EXPECT_EQ((*units)[0].quota_bytes, 1048576);
  for (const char* bad : {
           "tenants: []\n",                                         // no version
           "version: 2\ntenants: []\n",                             // unknown version
           "version: 1\n",                                          // no tenants
           "version: 1\ntenants: {}\n",                             // not a sequence
           "version: 1\ntenants:\n  - name: a\n",                   // no quota
           "version: 1\ntenants:\n  - quota: 1\n",                  // no name
           "version: 1\ntenants:\n  - name: yes\n    quota: 1\n",   // a boolean, not a name
           "version: 1\ntenants:\n  - name: _a\n    quota: 1\n",    // reserved
           "version: 1\ntenants:\n  - name: a\n    quota: 1MiB\n",  // unit
           "version: 1\ntenants:\n  - name: a\n    quota: 1\n  - name: a\n    quota: 2\n",
       }) {
    EXPECT_FALSE(parsePolicyFile(bad).ok()) << bad;
  }
}

TEST(TenantQuotaPolicyTest, TheSeedConfigMapHoldsTheDocumentLabelledLikeTheBackend) {
  auto cm = tenantQuotaPolicyConfigMap("mooncake-dram", "gpustack-system",
                                       {{"team-b", 8589934592}, {"default", 8589934592}});
  ASSERT_TRUE(cm.ok()) << cm.status().message();
  EXPECT_EQ((*cm)["metadata"]["name"], "mooncake-dram-tenant-quota-policy");
  EXPECT_EQ((*cm)["metadata"]["namespace"], "gpustack-system");
  EXPECT_EQ((*cm)["metadata"]["labels"]["app.kubernetes.io/instance"], "mooncake-dram");
  EXPECT_EQ((*cm)["metadata"]["labels"]["app.kubernetes.io/component"], "tenant-quota-policy");
  EXPECT_EQ((*cm)["data"]["tenant-quota-policy.yaml"],
            "version: 1\ntenants:\n  - name: \"default\"\n    quota: 8589934592\n"
            "  - name: \"team-b\"\n    quota: 8589934592\n");
  // Nothing partial is ever rendered.
  EXPECT_FALSE(tenantQuotaPolicyConfigMap("b", "ns", {{"_reserved", 1}}).ok());
  EXPECT_FALSE(tenantQuotaPolicyConfigMap("b", "ns", {{"a", 1}, {"a", 2}}).ok());
}

// Found by test/fuzz/fuzz_tenant_quota_policy: `version: 1^^\xde^^` read as a string that was
// not UTF-8, and the refusal's own message (version->dump()) threw out of parsePolicyFile.
TEST(TenantQuotaPolicyTest, AFileThatIsNotUtf8IsRefusedNotThrown) {
  for (const char* text : {"version: 1^^\xde^^\ntenants: []\n",
                           "version: 1\ntenants:\n  - name: \"\xff\"\n    quota: 1\n"}) {
    Result<std::vector<TenantPolicy>> tenants = invalidArgument("not run");
    EXPECT_NO_THROW(tenants = parsePolicyFile(text)) << text;
    EXPECT_FALSE(tenants.ok()) << text;
  }
}

}  // namespace
}  // namespace kvc::policy
