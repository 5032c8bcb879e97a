// Which store images are this project's build (issue 27 §3): the repository of the reference,
// compared with the Setting's.
#include "kvc/policy/store/store_image.h"

#include <gtest/gtest.h>

namespace kvc::policy {
namespace {

TEST(StoreImage, TheRepositoryDropsTagDigestAndDockerHubPrefixes) {
  EXPECT_EQ(imageRepository("kvcache-operator/store:0.3.13.post1-cpu"), "kvcache-operator/store");
  EXPECT_EQ(imageRepository("docker.io/kvcacheai/mooncake:v0.3.13"), "kvcacheai/mooncake");
  EXPECT_EQ(imageRepository("index.docker.io/kvcacheai/mooncake"), "kvcacheai/mooncake");
  EXPECT_EQ(imageRepository("docker.io/library/debian:bookworm"), "debian");
  EXPECT_EQ(imageRepository("library/debian"), "debian");
  // A registry's port is not a tag; a digest goes with or without a tag.
  EXPECT_EQ(imageRepository("localhost:5000/team/store"), "localhost:5000/team/store");
  EXPECT_EQ(imageRepository("localhost:5000/team/store:1@sha256:abc"), "localhost:5000/team/store");
  EXPECT_EQ(imageRepository("[::1]:5000/team/store@sha256:abc"), "[::1]:5000/team/store");
}

TEST(StoreImage, EveryTagOfTheSettingsRepositoryIsThisProjectsBuild) {
  const std::string setting = "kvcache-operator/store:0.3.13.post1-cpu";
  EXPECT_TRUE(projectStoreImage("kvcache-operator/store:0.3.13.post1-cuda13.0", setting));
  EXPECT_TRUE(projectStoreImage("docker.io/kvcache-operator/store:0.3.10.post2-cpu", setting));
  EXPECT_TRUE(projectStoreImage("kvcache-operator/store@sha256:abc", setting));
  EXPECT_FALSE(projectStoreImage("kvcacheai/mooncake:v0.3.13", setting));
  EXPECT_FALSE(
      projectStoreImage("registry.local/kvcache-operator/store:0.3.13.post1-cpu", setting));
  // A mirror is this project's build once the Setting names the mirror.
  EXPECT_TRUE(projectStoreImage("registry.local/kvcache-operator/store:0.3.13.post1-cpu",
                                "registry.local/kvcache-operator/store:0.3.13.post1-cpu"));
}

TEST(StoreImage, WithTheSettingClearedEveryImageCountsAsOurs) {
  EXPECT_TRUE(projectStoreImage("kvcacheai/mooncake:v0.3.13", ""));
}

}  // namespace
}  // namespace kvc::policy
