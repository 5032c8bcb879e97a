// The store Pods' security contexts: the restricted defaults, what a declared context keeps, and
// the two combinations the API server would refuse (no escalation beside privileged or
// CAP_SYS_ADMIN), which the hardening must not create.
#include "kvc/policy/store/pod_hardening.h"

#include <gtest/gtest.h>

namespace kvc::policy {
namespace {

TEST(PodHardening, TheLeaderRunsAsTheStoreUserWhateverTheImage) {
  const Json pod = leaderPodSecurityContext();
  EXPECT_EQ(pod["runAsNonRoot"], true);
  EXPECT_EQ(pod["runAsUser"], kStoreImageUser);
  EXPECT_EQ(pod["seccompProfile"]["type"], "RuntimeDefault");
  const Json container = restrictedContainerSecurityContext();
  EXPECT_EQ(container["allowPrivilegeEscalation"], false);
  EXPECT_EQ(container["readOnlyRootFilesystem"], true);
  EXPECT_EQ(container["capabilities"]["drop"], Json::array({"ALL"}));
}

TEST(PodHardening, NothingDeclaredGivesTheRestrictedDefaults) {
  EXPECT_EQ(hardenedContainerSecurityContext(Json(), Json::object()),
            restrictedContainerSecurityContext());
  EXPECT_EQ(memberPodSecurityContext(Json())["runAsNonRoot"], true);
}

TEST(PodHardening, AFabricAddsBackOnlyItsCapabilities) {
  const Json out =
      hardenedContainerSecurityContext(Json(), {{"capabilities", {{"add", {"IPC_LOCK"}}}}});
  EXPECT_EQ(out["capabilities"]["drop"], Json::array({"ALL"}));
  EXPECT_EQ(out["capabilities"]["add"], Json::array({"IPC_LOCK"}));
  EXPECT_EQ(out["allowPrivilegeEscalation"], false);
}

TEST(PodHardening, DeclaredFieldsWinAndADeclaredAddKeepsTheDrop) {
  const Json declared = {{"readOnlyRootFilesystem", false},
                         {"runAsUser", 1000},
                         {"capabilities", {{"add", {"NET_ADMIN"}}}}};
  const Json out =
      hardenedContainerSecurityContext(declared, {{"capabilities", {{"add", {"IPC_LOCK"}}}}});
  EXPECT_EQ(out["readOnlyRootFilesystem"], false);
  EXPECT_EQ(out["runAsUser"], 1000);
  EXPECT_EQ(out["capabilities"]["drop"], Json::array({"ALL"}));
  EXPECT_EQ(out["capabilities"]["add"], Json::array({"IPC_LOCK", "NET_ADMIN"}));
  const Json dropped_nothing = hardenedContainerSecurityContext(
      {{"capabilities", {{"drop", Json::array()}}}}, Json::object());
  EXPECT_EQ(dropped_nothing["capabilities"]["drop"], Json::array()) << "a declared drop wins";
}

TEST(PodHardening, PrivilegedOrSysAdminLeavesEscalationToTheRuntime) {
  // The API server refuses allowPrivilegeEscalation: false beside either.
  for (const Json& declared :
       {Json{{"privileged", true}}, Json{{"capabilities", {{"add", {"SYS_ADMIN"}}}}},
        Json{{"capabilities", {{"add", {"CAP_SYS_ADMIN"}}}}}}) {
    const Json out = hardenedContainerSecurityContext(declared, Json::object());
    EXPECT_FALSE(out.contains("allowPrivilegeEscalation")) << out.dump();
    EXPECT_EQ(out["readOnlyRootFilesystem"], true) << out.dump();
  }
  const Json explicit_choice = hardenedContainerSecurityContext(
      {{"privileged", true}, {"allowPrivilegeEscalation", true}}, Json::object());
  EXPECT_EQ(explicit_choice["allowPrivilegeEscalation"], true) << "a declared value is kept";
}

TEST(PodHardening, ADeclaredRootUserIsNotForcedNonRoot) {
  // Its tier files belong to root, and the cleanup Pod must be able to remove them.
  EXPECT_FALSE(memberPodSecurityContext({{"runAsUser", 0}}).contains("runAsNonRoot"));
  EXPECT_FALSE(memberPodSecurityContext({{"runAsNonRoot", false}}).contains("runAsNonRoot"));
  EXPECT_EQ(memberPodSecurityContext({{"runAsUser", 1000}})["runAsNonRoot"], true);
  EXPECT_EQ(memberPodSecurityContext({{"runAsUser", 0}})["seccompProfile"]["type"],
            "RuntimeDefault");
}

}  // namespace
}  // namespace kvc::policy
