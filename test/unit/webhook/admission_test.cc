#include "kvc/webhook/admission.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "kvc/common/base64.h"

namespace kvc::webhook {
namespace {

TEST(Decode, ReadsTheRequest) {
  const auto request = decodeAdmissionReview(R"({"apiVersion": "admission.k8s.io/v1",
    "kind": "AdmissionReview", "request": {"uid": "u-1", "kind": {"group": "", "version": "v1",
    "kind": "Pod"}, "resource": {"group": "", "version": "v1", "resource": "pods"},
    "operation": "CREATE", "namespace": "team-a", "name": "x", "dryRun": true,
    "object": {"kind": "Pod", "metadata": {"name": "x"}}, "oldObject": null}})");
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_EQ(request->uid, "u-1");
  EXPECT_EQ(request->kind, "Pod");
  EXPECT_EQ(request->resource, "pods");
  EXPECT_EQ(request->operation, "CREATE");
  EXPECT_EQ(request->namespace_name, "team-a");
  EXPECT_TRUE(request->dry_run);
  EXPECT_EQ(request->object["metadata"]["name"], "x");
  EXPECT_TRUE(request->old_object.is_null());
}

TEST(Decode, RefusesWhatIsNotAReview) {
  for (
      const char* body :
      {"", "not json", "[]",
       R"({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "request": {"uid": "u"}})",
       R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"})",
       R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {}})"}) {
    EXPECT_FALSE(decodeAdmissionReview(body).ok()) << body;
  }
  EXPECT_FALSE(decodeAdmissionReview(std::string(kMaxReviewBytes + 1, ' ')).ok());
}

TEST(Decode, RefusesAShapeOverItsLimitsBeforeParsing) {
  const std::string head =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","object":)";
  // 100,000 nested arrays: would overflow a stack when the mutator copies or diffs the object.
  auto deep =
      decodeAdmissionReview(head + std::string(100'000, '[') + std::string(100'000, ']') + "}}");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().message(), "the JSON nests deeper than 512 levels");
  // An object of 20,000 members: quadratic to parse into an ordered object.
  std::string wide = head + "{";
  for (int i = 0; i < 20'000; ++i) {
    wide += "\"k" + std::to_string(i) + "\":0,";
  }
  wide += "\"z\":0}}}";
  auto keys = decodeAdmissionReview(wide);
  ASSERT_FALSE(keys.ok());
  EXPECT_NE(keys.status().message().find("too many members"), std::string::npos);
  // 500 levels are fine.
  EXPECT_TRUE(
      decodeAdmissionReview(head + std::string(500, '[') + std::string(500, ']') + "}}").ok());
}

TEST(Encode, AllowsWithABase64Patch) {
  AdmissionResponse response = allow("u-1");
  response.patch = Json::parse(R"([{"op": "add", "path": "/a", "value": 1}])");
  const Json review = Json::parse(encodeAdmissionReview(response));
  EXPECT_EQ(review["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(review["kind"], "AdmissionReview");
  EXPECT_EQ(review["response"]["uid"], "u-1");
  EXPECT_EQ(review["response"]["allowed"], true);
  EXPECT_EQ(review["response"]["patchType"], "JSONPatch");
  EXPECT_EQ(review["response"]["patch"], base64Encode(R"([{"op":"add","path":"/a","value":1}])"));
}

TEST(Encode, OmitsAnEmptyPatch) {
  AdmissionResponse response = allow("u");
  response.patch = Json::array();
  const Json review = Json::parse(encodeAdmissionReview(response));
  EXPECT_FALSE(review["response"].contains("patch"));
}

TEST(Encode, DeniesWithStatusAndCauses) {
  AdmissionResponse response = deny("u-2", 422, "Invalid", "Pod \"x\" is invalid");
  response.causes.push_back({"FieldValueForbidden", "no", "metadata.labels[a]"});
  const Json review = Json::parse(encodeAdmissionReview(response));
  const Json& status = review["response"]["status"];
  EXPECT_EQ(review["response"]["allowed"], false);
  EXPECT_EQ(status["code"], 422);
  EXPECT_EQ(status["reason"], "Invalid");
  EXPECT_EQ(status["message"], "Pod \"x\" is invalid");
  EXPECT_EQ(status["details"]["causes"][0]["field"], "metadata.labels[a]");
}

}  // namespace
}  // namespace kvc::webhook
