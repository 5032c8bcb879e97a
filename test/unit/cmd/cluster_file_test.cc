// The readers of the offline commands' files (cmd/internal): what is not the shape they expect
// is an error naming the document, never an exception out of `kvcache inject`.
#include "internal/cluster_file.h"

#include <gtest/gtest.h>

#include <string>

#include "internal/manifest.h"

namespace kvc::cmd {
namespace {

TEST(ClusterFile, ReadsPoolsBindingsAndBackendsInLists) {
  const auto file = parseClusterFile(R"(apiVersion: v1
kind: List
items:
- apiVersion: worker.gpustack.ai/v1
  kind: KVCachePool
  metadata: {name: p}
  spec: {backends: [b]}
- kind: Secret
  metadata: {name: ignored}
)",
                                     "cluster.yaml");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->snapshot.size(), 1u);
  ASSERT_EQ(file->warnings.size(), 1u);
  EXPECT_NE(file->warnings[0].find("cluster.yaml: document 1"), std::string::npos);
}

// Found by test/fuzz/fuzz_manifest: `apiVersion: 11` made Json::value() throw type_error, and
// a List whose items were not a list was indexed as one (another throw).
TEST(ClusterFile, FieldsOfTheWrongTypeAreErrorsNotExceptions) {
  for (const char* text :
       {"apiVersion: 11\nkind: Pod\nmetadata: {name: x}\n", "kind: [KVCachePool]\n",
        "kind: List\nitems: 5\n", "kind: List\nitems: {a: 1}\n",
        "kind: ConfigMap\nmetadata: {name: 7}\n"}) {
    Result<ClusterFile> file = invalidArgument("not run");
    EXPECT_NO_THROW(file = parseClusterFile(text, "cluster.yaml")) << text;
    if (file.ok()) {
      EXPECT_EQ(file->snapshot.size(), 0u) << text;  // an ignored ConfigMap
    } else {
      EXPECT_NE(file.status().message().find("cluster.yaml: document 1"), std::string::npos)
          << file.status().message();
    }
  }
}

TEST(Manifest, ParseErrorsNameTheFile) {
  const auto documents = parseManifest(",", "pods.yaml");
  ASSERT_FALSE(documents.ok());
  EXPECT_NE(documents.status().message().find("pods.yaml"), std::string::npos)
      << documents.status().message();
}

}  // namespace
}  // namespace kvc::cmd
