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

std::string reviewOf(const std::string& object) {
  return R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid":
    "u", "operation": "CREATE", "object": )" +
         object + "}}";
}

// Found by test/fuzz/fuzz_validation: a review whose object nested 10,000 brackets was decoded,
// and the KVCacheBackend admission's copy of it recursed once per level until the stack
// overflowed, taking the operator down (anyone who reaches the webhook's port can send one).
// Nesting past kMaxJsonDepth is now refused by the decoder, and the refusal says why.
TEST(Decode, RefusesNestingPastTheLimit) {
  for (std::size_t depth : {std::size_t{10000}, std::size_t{1000000}}) {
    const std::string deep = std::string(depth, '[') + std::string(depth, ']');
    const auto request = decodeAdmissionReview(reviewOf(R"({"spec": )" + deep + "}"));
    ASSERT_FALSE(request.ok()) << depth;
    EXPECT_NE(request.status().message().find("kMaxJsonDepth"), std::string::npos)
        << request.status().message();
  }
  EXPECT_TRUE(decodeAdmissionReview(reviewOf(std::string(900, '[') + std::string(900, ']'))).ok());
}

// Found by test/fuzz/fuzz_admission_review: a 300 KB review holding an object of 20,000 keys kept
// the decoder busy past libFuzzer's 10 s timeout (each insert into an ordered object scanned
// every key; 1 MB of keys took more than two minutes). It is linear now.
TEST(Decode, WideObjectsDecodeInLinearTime) {
  std::string object = "{";
  for (int i = 0; i < 200000; ++i) {
    object += (i > 0 ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  }
  object += "}";
  const auto start = std::chrono::steady_clock::now();
  const auto request = decodeAdmissionReview(reviewOf(object));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_EQ(request->object.size(), 200000u);
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
