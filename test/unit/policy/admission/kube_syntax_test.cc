#include "kvc/policy/admission/kube_syntax.h"

#include <gtest/gtest.h>

#include <string>

namespace kvc::policy {
namespace {

TEST(KubeSyntax, Dns1123LabelsAndSubdomains) {
  EXPECT_TRUE(isDns1123Label("regcred"));
  EXPECT_TRUE(isDns1123Label("0-a"));
  EXPECT_TRUE(isDns1123Label(std::string(63, 'a')));
  EXPECT_FALSE(isDns1123Label(std::string(64, 'a')));
  EXPECT_FALSE(isDns1123Label(""));
  EXPECT_FALSE(isDns1123Label("-a"));
  EXPECT_FALSE(isDns1123Label("a-"));
  EXPECT_FALSE(isDns1123Label("A"));
  EXPECT_FALSE(isDns1123Label("a.b"));

  EXPECT_TRUE(isDns1123Subdomain("nvidia"));
  EXPECT_TRUE(isDns1123Subdomain("runtime.example.com"));
  EXPECT_FALSE(isDns1123Subdomain("a..b"));
  EXPECT_FALSE(isDns1123Subdomain(".a"));
  EXPECT_FALSE(isDns1123Subdomain("a."));
  EXPECT_FALSE(isDns1123Subdomain("Reg_Cred"));
  EXPECT_TRUE(isDns1123Subdomain(std::string(253, 'a')));
  EXPECT_FALSE(isDns1123Subdomain(std::string(254, 'a')));
}

TEST(KubeSyntax, Dns1035LabelsStartWithALetter) {
  EXPECT_TRUE(isDns1035Label("mooncake-dram-member-0"));
  EXPECT_FALSE(isDns1035Label("0cache-leader"));
  EXPECT_FALSE(isDns1035Label("cache.example-leader"));
  EXPECT_FALSE(isDns1035Label(std::string(55, 'a') + "-member-0"));
}

TEST(KubeSyntax, QualifiedNamesAndLabelValues) {
  EXPECT_TRUE(isQualifiedName("kubernetes.io/os"));
  EXPECT_TRUE(isQualifiedName("kvcache"));
  EXPECT_TRUE(isQualifiedName("node-role.kubernetes.io/Cache_1.x"));
  EXPECT_FALSE(isQualifiedName("bad key"));
  EXPECT_FALSE(isQualifiedName("/os"));
  EXPECT_FALSE(isQualifiedName("a/b/c"));
  EXPECT_FALSE(isQualifiedName("Example.com/os"));
  EXPECT_FALSE(isQualifiedName("example.com/"));
  EXPECT_FALSE(isQualifiedName("example.com/" + std::string(64, 'a')));

  EXPECT_TRUE(isLabelValue(""));
  EXPECT_TRUE(isLabelValue("true"));
  EXPECT_TRUE(isLabelValue("A-b_c.9"));
  EXPECT_FALSE(isLabelValue("not valid!"));
  EXPECT_FALSE(isLabelValue("-a"));
  EXPECT_FALSE(isLabelValue(std::string(64, 'a')));
}

TEST(KubeSyntax, ImageReferences) {
  for (const char* good :
       {"mooncake", "kvcache-operator/store:0.3.13.post1-cpu", "gpustack/mirrored-mooncake:latest",
        "registry.example.com/team/store", "localhost:5000/store:1", "[::1]:5000/store",
        "Registry.Example.com/store", "a/b__c/d.e-f---g:TAG_1",
        "store@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "store:1@sha256:0123456789abcdef0123456789abcdef"}) {
    EXPECT_TRUE(isImageReference(good)) << good;
  }
  for (const char* bad :
       {"", "Store", "team/Store", "store:", "store:-1", "store:bad tag", ":1", "a//b", "/store",
        "store/", "a_-b", "a..b", "store@sha256:abc",
        "store@sha256:"
        "0123456789abcdef0123456789abcdefg",
        "store@1sha:0123456789abcdef0123456789abcdef", "[::1/store", "host:port/store"}) {
    EXPECT_FALSE(isImageReference(bad)) << bad;
  }
  EXPECT_FALSE(isImageReference("store:" + std::string(129, 't')));
  EXPECT_TRUE(isImageReference("store:" + std::string(128, 't')));
  EXPECT_FALSE(isImageReference(std::string(256, 'a')));
}

}  // namespace
}  // namespace kvc::policy
