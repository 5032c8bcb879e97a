#include "kvc/common/yaml.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

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

// Found by test/fuzz/fuzz_manifest: yaml-cpp 0.7 answers a document that starts with ',' with an
// empty document, without consuming the ',', forever, allocating as it goes
// (jbeder/yaml-cpp#1040): `kvcache inject -f` on such a file hung until the kernel killed it.
TEST(Yaml, AStrayCommaIsASyntaxErrorNotAHang) {
  for (const char* text : {",", " ,\n", "# comment\n,x", "a: 1\n---\n,", "...\n,"}) {
    const auto docs = parseYamlDocuments(text);
    ASSERT_FALSE(docs.ok()) << text;
    EXPECT_NE(docs.status().message().find("line "), std::string::npos);
  }
}

// Found by test/fuzz/fuzz_tenant_quota_policy and fuzz_yaml: a scalar that is not UTF-8 became a
// JSON string no one could print: parsePolicyFile's own message (version->dump()) threw.
TEST(Yaml, ScalarsThatAreNotUtf8AreRefused) {
  for (const char* text : {"a: \xff\n", "\xc3x: 1\n", "- ok\n- \"\xed\xa0\x80\"\n"}) {
    const auto docs = parseYamlDocuments(text);
    ASSERT_FALSE(docs.ok()) << text;
    EXPECT_NE(docs.status().message().find("UTF-8"), std::string::npos) << docs.status().message();
  }
  const auto fine = parseYamlDocuments("name: \"caf\xc3\xa9 \xe2\x82\xac\"\n");
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(fine->front().value["name"], "caf\xc3\xa9 \xe2\x82\xac");
}

// Nine lines whose aliases name 10^9 values ("billion laughs"): refused within the budget of
// copied values instead of filling the memory.
TEST(Yaml, AliasesThatExpandWithoutBoundAreRefused) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    const std::string previous = "*a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) {
      text += (k > 0 ? ", " : "") + previous;
    }
    text += "]\n";
  }
  const auto docs = parseYamlDocuments(text);
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.status().message().find("aliases"), std::string::npos) << docs.status().message();
}

TEST(Yaml, AliasesCopyTheirNode) {
  const auto docs = parseYamlDocuments("base: &b {image: vllm, n: 2}\none: *b\nlist: [*b, *b]\n");
  ASSERT_TRUE(docs.ok()) << docs.status().message();
  const Json& v = docs->front().value;
  EXPECT_EQ(v["one"], v["base"]);
  EXPECT_EQ(v["list"][1]["n"], 2);
}

// An alias inside the node it names is a value without end (the node tree was cyclic, and
// converting it recursed until the stack overflowed).
TEST(Yaml, AnAliasInsideItsOwnNodeIsRefused) {
  EXPECT_FALSE(parseYamlDocuments("a: &a [1, *a]\n").ok());
  EXPECT_FALSE(parseYamlDocuments("&m {k: *m}\n").ok());
}

TEST(Yaml, DeepNestingNamesTheLimit) {
  const std::string deep = std::string(10000, '[') + std::string(10000, ']');
  const auto docs = parseYamlDocuments(deep);
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.status().message().find("nested too deep"), std::string::npos)
      << docs.status().message();
  EXPECT_TRUE(parseYamlDocuments(std::string(100, '[') + std::string(100, ']')).ok());
}

// Found by test/fuzz/fuzz_yaml: a mapping of 20,000 keys timed the reader out (each insert into
// an ordered object scanned every key).
TEST(Yaml, WideMappingsReadInLinearTime) {
  std::string text = "{";
  for (int i = 0; i < 100000; ++i) {
    text += (i > 0 ? ", k" : "k") + std::to_string(i) + ": " + std::to_string(i);
  }
  text += "}\n";
  const auto start = std::chrono::steady_clock::now();
  const auto docs = parseYamlDocuments(text);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  ASSERT_TRUE(docs.ok()) << docs.status().message();
  EXPECT_EQ(docs->front().value.size(), 100000u);
  EXPECT_EQ(docs->front().value.begin().key(), "k0");
}

TEST(Yaml, ACollectionAsAKeyBecomesItsJsonText) {
  const auto docs = parseYamlDocuments("? [a, b]\n: c\n~: d\n");
  ASSERT_TRUE(docs.ok()) << docs.status().message();
  EXPECT_EQ(docs->front().value["[\"a\",\"b\"]"], "c");
  EXPECT_EQ(docs->front().value["~"], "d");
}

}  // namespace
}  // namespace kvc
