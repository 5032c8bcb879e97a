#include "kvc/webhook/admission.h"

#include "kvc/common/base64.h"
#include "kvc/common/json_parse.h"

namespace kvc::webhook {
namespace {

std::string stringAt(const Json& object, std::string_view key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Result<AdmissionRequest> decodeAdmissionReview(std::string_view body) {
  if (body.empty()) {
    return invalidArgument("the request body is empty");
  }
  if (body.size() > kMaxReviewBytes) {
    return invalidArgument("the request body is larger than " + std::to_string(kMaxReviewBytes) +
                           " bytes");
  }
  // The shape first (json_shape.h: depth, values, key work), so a hostile body is refused before
  // it is built; then a parse bounded in depth and linear in width (json_parse.h).
  if (auto refusal = checkJsonShape(body, kReviewShapeLimits)) {
    return invalidArgument(refusal->message);
  }
  auto parsed = parseJson(body);
  if (!parsed.ok()) {
    return invalidArgument("the request body is not JSON: " + parsed.status().message());
  }
  Json review = std::move(parsed).value();
  if (!review.is_object()) {
    return invalidArgument("the request body is not a JSON object");
  }
  if (stringAt(review, "apiVersion") != "admission.k8s.io/v1" ||
      stringAt(review, "kind") != "AdmissionReview") {
    return invalidArgument("expected an admission.k8s.io/v1 AdmissionReview, got " +
                           stringAt(review, "apiVersion") + " " + stringAt(review, "kind"));
  }
  auto request_it = review.find("request");
  if (request_it == review.end() || !request_it->is_object()) {
    return invalidArgument("the AdmissionReview has no request");
  }
  Json& request = *request_it;
  AdmissionRequest out;
  out.uid = stringAt(request, "uid");
  if (out.uid.empty()) {
    return invalidArgument("the AdmissionReview request has no uid");
  }
  if (auto kind = request.find("kind"); kind != request.end() && kind->is_object()) {
    out.kind = stringAt(*kind, "kind");
  }
  if (auto resource = request.find("resource");
      resource != request.end() && resource->is_object()) {
    out.resource = stringAt(*resource, "resource");
  }
  out.sub_resource = stringAt(request, "subResource");
  out.operation = stringAt(request, "operation");
  out.name = stringAt(request, "name");
  out.namespace_name = stringAt(request, "namespace");
  if (auto dry_run = request.find("dryRun"); dry_run != request.end() && dry_run->is_boolean()) {
    out.dry_run = dry_run->get<bool>();
  }
  if (auto object = request.find("object"); object != request.end()) {
    out.object = std::move(*object);
  }
  if (auto old = request.find("oldObject"); old != request.end()) {
    out.old_object = std::move(*old);
  }
  return out;
}

AdmissionResponse allow(std::string uid) {
  AdmissionResponse response;
  response.uid = std::move(uid);
  return response;
}

AdmissionResponse deny(std::string uid, int code, std::string reason, std::string message) {
  AdmissionResponse response;
  response.uid = std::move(uid);
  response.allowed = false;
  response.code = code;
  response.reason = std::move(reason);
  response.message = std::move(message);
  return response;
}

std::string encodeAdmissionReview(const AdmissionResponse& response) {
  Json body = Json::object();
  body["uid"] = response.uid;
  body["allowed"] = response.allowed;
  if (!response.allowed) {
    Json status = {{"metadata", Json::object()},
                   {"status", "Failure"},
                   {"message", response.message},
                   {"reason", response.reason},
                   {"code", response.code}};
    if (!response.causes.empty()) {
      Json causes = Json::array();
      for (const StatusCause& cause : response.causes) {
        causes.push_back(
            {{"reason", cause.reason}, {"message", cause.message}, {"field", cause.field}});
      }
      status["details"] = {{"causes", causes}};
      if (!response.details_kind.empty()) {
        status["details"]["group"] = response.details_group;
        status["details"]["kind"] = response.details_kind;
        status["details"]["name"] = response.details_name;
      }
    }
    body["status"] = std::move(status);
  }
  if (response.patch && !response.patch->empty()) {
    body["patchType"] = "JSONPatch";
    body["patch"] = base64Encode(response.patch->dump());
  }
  if (!response.warnings.empty()) {
    body["warnings"] = response.warnings;
  }
  Json review = {{"apiVersion", "admission.k8s.io/v1"},
                 {"kind", "AdmissionReview"},
                 {"response", std::move(body)}};
  return review.dump();
}

}  // namespace kvc::webhook
