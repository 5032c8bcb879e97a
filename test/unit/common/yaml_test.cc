#include "kvc/common/yaml.h"

#include <gtest/gtest.h>

namespace kvc {
namespace {

TEST(Yaml, ResolvesPlainScalarsAsKubernetesDoes) {
  const auto docs = parseYamlDocuments(
      "a: true\nb: \"true\"\nc: yes\nd: 0755\ne: 1.5\nf: ~\ng: 30000\nh: '8Gi'\ni: 0x1F\n"
      "j: -3\nk: .inf\nl: v1.2\n");
  ASSERT_TRUE(docs.ok()) << docs.status().message();
  const Json& v = docs->front().value;
  EXPECT_EQ(v["a"], true);
  EXPECT_EQ(v["b"], "true");
  EXPECT_EQ(v["c"], true);  // YAML 1.1, like Kubernetes' reader
  EXPECT_EQ(v["d"], 493);
  EXPECT_EQ(v["e"], 1.5);
  EXPECT_TRUE(v["f"].is_null());
  EXPECT_EQ(v["g"], 30000);
  EXPECT_EQ(v["h"], "8Gi");
  EXPECT_EQ(v["i"], 31);
  EXPECT_EQ(v["j"], -3);
  EXPECT_TRUE(v["k"].is_number_float());
  EXPECT_EQ(v["l"], "v1.2");
}

TEST(Yaml, KeepsDocumentOrderKeyOrderAndPositions) {
  const auto docs = parseYamlDocuments("z: 1\na: 2\n---\n---\nkind: Pod\n");
  ASSERT_TRUE(docs.ok());
  ASSERT_EQ(docs->size(), 2u);  // the empty document is skipped
  EXPECT_EQ(docs->at(0).value.begin().key(), "z");
  EXPECT_EQ(docs->at(1).index, 3);
  EXPECT_EQ(docs->at(1).line, 5);
}

TEST(Yaml, SyntaxErrorsNameLineAndColumn) {
  const auto docs = parseYamlDocuments("a: 1\nb: [unclosed\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.status().message().find("line "), std::string::npos);
  EXPECT_NE(docs.status().message().find("column "), std::string::npos);
}

TEST(Yaml, EmitsWhatReadsBackTheSame) {
  const Json value = Json::parse(R"({
    "labels": {"kvcache.gpustack.ai/inject": "true", "n": "30000", "e": "", "y": "yes"},
    "args": ["serve", "--model", "{\"kv_connector\":\"X\"}", "it's", "line\nbreak", "- x",
             "a: b", "#c", "~", "null", "1e3", "0755"],
    "count": 2, "ratio": 0.5, "on": false, "none": null, "empty": [], "obj": {}
  })");
  const std::string text = toYaml(value);
  const auto back = parseYamlDocuments(text);
  ASSERT_TRUE(back.ok()) << text;
  EXPECT_EQ(back->front().value, value) << text;
}

TEST(Yaml, QuotesOnlyWhatNeedsIt) {
  EXPECT_FALSE(yamlNeedsQuoting("--kv-cache-dtype"));
  EXPECT_FALSE(yamlNeedsQuoting("Qwen/Qwen3-8B"));
  EXPECT_TRUE(yamlNeedsQuoting("true"));
  EXPECT_TRUE(yamlNeedsQuoting("0"));
  EXPECT_TRUE(yamlNeedsQuoting("{\"a\":1}"));
  EXPECT_TRUE(yamlNeedsQuoting(""));
}

}  // namespace
}  // namespace kvc
