// The store leader's refresh of its master's policy file on winning the Lease, against the
// in-process fake API server: the ConfigMap's document replaces the seeded copy, an absent
// ConfigMap means the empty ledger, and a failed read or a document the master would refuse
// leaves the seeded copy untouched.
#include "internal/policy_refresh.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "fake_apiserver.h"
#include "kvc/kube/resource.h"
#include "matchers.h"

namespace kvc::cmd::internal {
namespace {

using kvc::testing::FakeApiServer;
using kvc::testing::IsOk;

constexpr const char* kSeeded = "version: 1\ntenants:\n  - name: \"stale\"\n    quota: 1\n";

class PolicyRefreshTest : public ::testing::Test {
protected:
  PolicyRefreshTest()
      : client_(*kube::Client::create(server_.config())),
        config_maps_(client_, kube::resources::configMaps(), "gpustack-system"),
        dir_(std::filesystem::temp_directory_path() /
             ("policy-refresh-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
    file_ = (dir_ / "tenant-quota-policy.yaml").string();
    std::ofstream(file_) << kSeeded;
  }
  ~PolicyRefreshTest() override { std::filesystem::remove_all(dir_); }

  std::string file() const {
    std::ifstream in(file_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  static std::string configMap(const std::string& document) {
    return Json{{"metadata", {{"name", "b-tenant-quota-policy"}}},
                {"data", {{"tenant-quota-policy.yaml", document}}}}
        .dump();
  }

  FakeApiServer server_;
  kube::ClientPtr client_;
  kube::Api config_maps_;
  std::filesystem::path dir_;
  std::string file_;
};

TEST(MasterPolicyFile, IsTheConnectorUriOfTheMasterCommand) {
  EXPECT_EQ(masterPolicyFile({"mooncake_master", "-enable_multi_tenants=true",
                              "-tenant_quota_connector_uri=/var/lib/mooncake/p.yaml"}),
            "/var/lib/mooncake/p.yaml");
  EXPECT_EQ(masterPolicyFile({"mooncake_master", "--tenant_quota_connector_uri=/x"}), "/x");
  EXPECT_EQ(masterPolicyFile({"mooncake_master", "-rpc_port=50051"}), std::nullopt);
  EXPECT_EQ(masterPolicyFile({"mooncake_master", "-tenant_quota_connector_uri="}), std::nullopt);
}

TEST_F(PolicyRefreshTest, TheConfigMapsDocumentReplacesTheSeededCopy) {
  const std::string latest = "version: 1\ntenants:\n  - name: \"team-a\"\n    quota: 8589934592\n";
  server_.setHandler(kvc::testing::answerWith(200, configMap(latest)));
  ASSERT_THAT(refreshPolicyFile(config_maps_, "b-tenant-quota-policy", file_), IsOk());
  EXPECT_EQ(file(), latest);
  const auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 1U);
  EXPECT_EQ(requests[0].path,
            "/api/v1/namespaces/gpustack-system/configmaps/b-tenant-quota-policy");
}

TEST_F(PolicyRefreshTest, NoConfigMapIsTheEmptyLedger) {
  server_.setHandler(kvc::testing::answerStatus(404, "NotFound", "configmaps not found"));
  ASSERT_THAT(refreshPolicyFile(config_maps_, "b-tenant-quota-policy", file_), IsOk());
  EXPECT_EQ(file(), "version: 1\ntenants: []\n");
}

TEST_F(PolicyRefreshTest, AFailedReadLeavesTheSeededCopy) {
  server_.setHandler(kvc::testing::answerStatus(403, "Forbidden", "no get on configmaps"));
  const Status refreshed = refreshPolicyFile(config_maps_, "b-tenant-quota-policy", file_);
  EXPECT_FALSE(refreshed.ok());
  EXPECT_NE(refreshed.message().find("reading ConfigMap b-tenant-quota-policy"), std::string::npos)
      << refreshed.message();
  EXPECT_EQ(file(), kSeeded);
}

TEST_F(PolicyRefreshTest, ADocumentTheMasterWouldRefuseLeavesTheSeededCopy) {
  for (const std::string& bad :
       {std::string("tenants: []\n"),  // no version: 1
        std::string("version: 1\ntenants:\n  - name: \"_x\"\n    quota: 1\n")}) {
    server_.setHandler(kvc::testing::answerWith(200, configMap(bad)));
    EXPECT_FALSE(refreshPolicyFile(config_maps_, "b-tenant-quota-policy", file_).ok()) << bad;
    EXPECT_EQ(file(), kSeeded) << bad;
  }
  server_.setHandler(kvc::testing::answerWith(200, R"({"metadata":{"name":"b"},"data":{}})"));
  EXPECT_FALSE(refreshPolicyFile(config_maps_, "b-tenant-quota-policy", file_).ok());
  EXPECT_EQ(file(), kSeeded);
}

}  // namespace
}  // namespace kvc::cmd::internal
