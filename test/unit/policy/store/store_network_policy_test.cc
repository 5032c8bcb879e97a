// A managed store's NetworkPolicies: who the leader's two ports admit, the members' ranges and
// where they come from, and what a fabric (host-network) group changes. The whole rendered
// objects are golden-tested (test/golden/store).
#include "kvc/policy/store/store_network_policy.h"

#include <gtest/gtest.h>

#include "kvc/policy/inject/keys.h"

namespace kvc::policy {
namespace {

api::KVCacheBackend backendOf(const std::string& members) {
  auto decoded = api::backendFromJson(Json::parse(
      R"({"metadata": {"name": "b", "uid": "u"}, "spec": {"transport": {"protocol": "TCP"},
          "connection": {"managed": {"leader": {}, "members": )" +
      members + "}}}}"));
  EXPECT_TRUE(decoded.ok()) << decoded.status().message();
  return *decoded;
}

const StoreInputs kInputs{"gpustack-system", "store:1"};

// The ingress rule of `policy` that opens `port`.
Json ruleFor(const Json& policy, int port) {
  for (const Json& rule : policy["spec"]["ingress"]) {
    for (const Json& entry : rule["ports"]) {
      if (entry["port"] == port) {
        return rule;
      }
    }
  }
  ADD_FAILURE() << "no rule opens " << port << " in " << policy.dump();
  return Json::object();
}

TEST(StoreNetworkPolicy, TheAdminPortAdmitsTheOperatorAloneAndRpcItsClients) {
  const auto out = storeNetworkPolicies(
      backendOf(R"([{"nodeSelector": {}, "medium": "DRAM", "capacityPerMember": "1Gi"}])"),
      kInputs);
  ASSERT_EQ(out.size(), 2U);
  const Json& leader = out[0].object;
  EXPECT_EQ(leader["metadata"]["name"], "b-leader");
  EXPECT_EQ(leader["spec"]["policyTypes"], Json::array({"Ingress"}));
  EXPECT_EQ(leader["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/component"], "leader");

  const Json admin = ruleFor(leader, kMasterAdminPort);
  ASSERT_EQ(admin["from"].size(), 1U);
  EXPECT_FALSE(admin["from"][0].contains("namespaceSelector")) << "the operator's namespace only";
  EXPECT_EQ(admin["from"][0]["podSelector"]["matchLabels"],
            Json({{"app.kubernetes.io/name", "kvcache-operator"}}));

  const Json rpc = ruleFor(leader, kMasterRpcPort);
  ASSERT_EQ(rpc["from"].size(), 4U);
  EXPECT_EQ(rpc["from"][0]["namespaceSelector"], Json::object()) << "injected Pods, any namespace";
  EXPECT_EQ(rpc["from"][0]["podSelector"]["matchLabels"][std::string(kLabelInject)], "true");
  EXPECT_EQ(rpc["from"][2]["podSelector"]["matchLabels"]["app.kubernetes.io/instance"], "b");
  EXPECT_EQ(rpc["from"][3], admin["from"][0]) << "the operator reaches both ports";
  EXPECT_EQ(rpc["ports"].size(), 1U);
}

TEST(StoreNetworkPolicy, MembersOpenRangesNotLists) {
  const auto backend = backendOf(R"([{"nodeSelector": {}, "medium": "DRAM",
      "capacityPerMember": "1Gi"}])");
  const auto ranges = memberTransferPorts(backend, 0);
  ASSERT_EQ(ranges.size(), 2U);
  EXPECT_EQ(ranges[0].start, 15000);
  EXPECT_EQ(ranges[0].end, 17000);
  EXPECT_EQ(ranges[1].start, 12300);
  EXPECT_EQ(ranges[1].end, 14300);
  const Json member = storeNetworkPolicies(backend, kInputs)[1].object;
  EXPECT_EQ(member["metadata"]["name"], "b-member-0");
  EXPECT_EQ(member["spec"]["ingress"][0]["ports"][0],
            Json({{"protocol", "TCP"}, {"port", 15000}, {"endPort", 17000}}));
}

TEST(StoreNetworkPolicy, ExtraEnvMovesTheRangesAndWhatItCannotSayIsIgnored) {
  const auto moved = backendOf(R"([{"nodeSelector": {}, "medium": "DRAM",
      "capacityPerMember": "1Gi", "extraEnv": [
        {"name": "MC_MIN_RPC_PORT", "value": "16000"},
        {"name": "MC_STORE_CLIENT_MAX_PORT", "value": "13000"}]}])");
  auto ranges = memberTransferPorts(moved, 0);
  EXPECT_EQ(ranges[0].start, 16000) << "each end defaults alone";
  EXPECT_EQ(ranges[0].end, 17000);
  EXPECT_EQ(ranges[1].end, 13000);

  const auto inverted = backendOf(R"([{"nodeSelector": {}, "medium": "DRAM",
      "capacityPerMember": "1Gi", "extraEnv": [
        {"name": "MC_MIN_RPC_PORT", "value": "30000"},
        {"name": "MC_MAX_RPC_PORT", "value": "20000"},
        {"name": "MC_STORE_CLIENT_MIN_PORT", "valueFrom": {"configMapKeyRef": {"name": "x", "key": "y"}}},
        {"name": "MC_STORE_CLIENT_MAX_PORT", "value": "70000"}]}])");
  ranges = memberTransferPorts(inverted, 0);
  EXPECT_EQ(ranges[0].start, 15000) << "MIN above MAX: the default range";
  EXPECT_EQ(ranges[0].end, 17000);
  EXPECT_EQ(ranges[1].start, 12300) << "valueFrom is not known until the Pod runs";
  EXPECT_EQ(ranges[1].end, 14300) << "70000 is no port";
}

TEST(StoreNetworkPolicy, ADiskTierAddsTheEphemeralRange) {
  const auto backend = backendOf(R"([{"nodeSelector": {}, "medium": "DRAM",
      "capacityPerMember": "1Gi", "localDisks": [{"path": "/var/lib/kvcache"}]}])");
  const auto ranges = memberTransferPorts(backend, 0);
  ASSERT_EQ(ranges.size(), 3U);
  EXPECT_EQ(ranges[2].start, 32768);
  EXPECT_EQ(ranges[2].end, 60999);
}

TEST(StoreNetworkPolicy, AFabricGroupGetsNoPolicyAndOpensTheRpcPortToAll) {
  const auto out = storeNetworkPolicies(
      backendOf(R"([{"nodeSelector": {}, "medium": "DRAM", "capacityPerMember": "1Gi"},
                    {"nodeSelector": {}, "medium": "DRAM", "capacityPerMember": "1Gi",
                     "transport": {"protocol": "RDMA"}}])"),
      kInputs);
  ASSERT_EQ(out.size(), 2U) << "the leader and group 0 only";
  EXPECT_EQ(out[1].object["metadata"]["name"], "b-member-0");
  const Json rpc = ruleFor(out[0].object, kMasterRpcPort);
  EXPECT_FALSE(rpc.contains("from")) << "host-network clients come from node addresses";
  EXPECT_EQ(ruleFor(out[0].object, kMasterAdminPort)["from"].size(), 1U) << "admin stays closed";
}

}  // namespace
}  // namespace kvc::policy
