#pragma once
// AdmissionReview admission.k8s.io/v1: decoding the request and encoding the response.
//
// Transport-only concerns (after controller-runtime's admission/http.go): the body must be JSON,
// within a size limit, and an admission.k8s.io/v1 AdmissionReview with a request and a uid. The
// object is kept as the raw JSON the API server sent, so a JSON Patch computed against it loses
// nothing in a decode/encode round trip.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/status_cause.h"
#include "kvc/common/json.h"
#include "kvc/common/json_shape.h"
#include "kvc/common/status.h"

namespace kvc::webhook {

inline constexpr std::size_t kMaxReviewBytes = 8 * 1024 * 1024;

// The shape a review may have (kvc/common/json_shape.h), checked before it is parsed. A real
// Pod's review nests ~15 levels (managedFields are the deepest) and holds a few thousand
// values; 100,000 values is a Pod of ~1 MiB, and parses to at most ~10 MiB; the key work
// allows one object of ~2,500 short keys, ~0.1 s of parsing at most.
inline constexpr JsonShapeLimits kReviewShapeLimits{512, 100'000, std::size_t{1} << 27};

struct AdmissionRequest {
  std::string uid;
  std::string kind;          // the object's kind, e.g. "Pod"
  std::string resource;      // e.g. "pods"
  std::string sub_resource;  // e.g. "status"
  std::string operation;     // CREATE | UPDATE | DELETE | CONNECT
  std::string name;
  std::string namespace_name;
  bool dry_run = false;
  Json object;      // null when absent
  Json old_object;  // null when absent
};

// InvalidArgument for a body that is not a v1 AdmissionReview with a request and a uid, or whose
// shape passes kReviewShapeLimits (checked before parsing).
Result<AdmissionRequest> decodeAdmissionReview(std::string_view body);

using StatusCause = api::StatusCause;

struct AdmissionResponse {
  std::string uid;
  bool allowed = true;
  // For a denial: the HTTP-like code the API server reports (403, 422, 500) and its reason.
  int code = 0;
  std::string reason;
  // The `reason` label of kvcache_admission_requests_total: what refused, in the contract's words
  // (a Pod's refusal reason, such as BindingNotFound) when there is one; the Status reason above
  // otherwise. Never sent to the API server.
  std::string metric_reason;
  std::string message;
  std::vector<StatusCause> causes;
  // With causes: the object they are about (StatusDetails group, kind, name), so that kubectl
  // prints `The <Kind> "<name>" is invalid: <field>: <message>` as for the API's own rules.
  std::string details_group;
  std::string details_kind;
  std::string details_name;
  std::optional<Json> patch;  // a JSON Patch (RFC 6902) array; omitted when nothing changed
  std::vector<std::string> warnings;
};

AdmissionResponse allow(std::string uid);
AdmissionResponse deny(std::string uid, int code, std::string reason, std::string message);

// The AdmissionReview JSON the API server expects back (patch base64-encoded).
std::string encodeAdmissionReview(const AdmissionResponse& response);

}  // namespace kvc::webhook
