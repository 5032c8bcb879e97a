#pragma once
// Children a controller renders for an owner, applied and pruned in one call (controller-runtime's
// SetControllerReference + server-side apply; kube-rs owner references).
//
// OwnedApplier::apply(owner, set):
//   1. Each rendered child gets a controller owner reference to `owner` (apiVersion, kind, name,
//      uid, controller, blockOwnerDeletion) and the ownership note (kOwnershipNoteAnnotation:
//      {"type":"kvcache","kind":…,"name":…,"role":…[,"group":N]}). Its namespace is its own: a
//      cluster-scoped owner's children live in the operator namespace.
//   2. A same-named object that does not carry our note for this owner is never adopted: the
//      call fails with OwnedErrorKind::NotOurs, naming the object and asking the user to rename
//      or remove it. This check runs for every child before anything is written, so a refusal
//      changes nothing. A child the cache does not hold is read live first: a cache that has not
//      seen a same-named object yet must not let the apply adopt it.
//   3. Each child is applied with server-side apply under the one field manager; `force` only
//      where the child says the contract makes the field ours. A child whose live object (from
//      the cache) already holds every field of the intent is not sent at all, so a pass over an
//      unchanged world makes no request.
//   4. Children of the kinds in `set.prune` that carry our note for this owner and match
//      `set.selector` but were not rendered this time are deleted (background propagation,
//      guarded by their uid).
// The owner being deleted: children go by garbage collection (blockOwnerDeletion); a controller
// that must order the teardown deletes them itself.

#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/api/labels.h"
#include "kvc/common/json.h"
#include "kvc/common/status.h"
#include "kvc/common/typed_result.h"
#include "kvc/kube/client.h"
#include "kvc/kube/resource.h"
#include "kvc/runtime/store.h"

namespace kvc::runtime {

inline constexpr std::string_view kOwnershipNoteAnnotation = "kvcache.gpustack.ai/ownership";

// What the note says: which object of ours rendered this one, and as what.
struct OwnershipNote {
  std::string kind;  // the owner's kind
  std::string name;  // the owner's name
  std::string role;  // "leader", "member", "tenant-quota-policy", ...
  std::optional<int> group;

  friend bool operator==(const OwnershipNote&, const OwnershipNote&) = default;
};

std::string formatOwnershipNote(const OwnershipNote& note);
// nullopt when `text` is not a note of ours.
std::optional<OwnershipNote> parseOwnershipNote(std::string_view text);
// The note `object` carries, if any.
std::optional<OwnershipNote> ownershipNoteOf(const Json& object);
// True when `object` carries our note naming `owner` (kind and name).
bool carriesNoteFor(const Json& object, const Json& owner);

// The controller owner reference to `owner`.
Json controllerReferenceTo(const Json& owner);

// True when every field of `intent` has the same value in `live` (objects: every key of the
// intent, recursively; arrays: same length, element by element; scalars: equal). Fields the
// server added are ignored, so a defaulted object still satisfies the intent it came from; a
// field the intent sets to its zero value (false, 0, "", [], {}) is satisfied by its absence,
// since the API server leaves such `omitempty` fields out (a Service's
// publishNotReadyAddresses: false).
bool intentSatisfied(const Json& intent, const Json& live);

// True when the labels of `object` match every `key=value` of `selector` (api/labels.h).
using api::matchesSelector;

struct OwnedChild {
  kube::ResourceType resource;
  Json object;  // apiVersion, kind, metadata.name (and namespace) set by the renderer
  std::string role;
  std::optional<int> group;
  bool force = false;
};

// Where the live objects of one kind are read: a cache (an informer on that kind in that
// namespace) or, without one, the API.
struct ChildSource {
  kube::ResourceType resource;
  std::string namespace_name;
  const Cache* cache = nullptr;
};

struct OwnedSet {
  std::vector<OwnedChild> children;
  // The kinds to prune, and the label selector every child of this owner carries.
  std::vector<ChildSource> prune;
  std::string selector;
  // Caches to consult for step 2 and 3 (by kind and namespace); others, and what a cache does
  // not hold, are read live.
  std::vector<ChildSource> sources;
};

struct ApplyReport {
  std::vector<std::string> applied;    // "Kind namespace/name"
  std::vector<std::string> unchanged;  // already as rendered: nothing sent
  std::vector<std::string> pruned;
};

enum class OwnedErrorKind {
  NotOurs,  // a same-named object without our note: never adopted
  Api,      // the API refused or failed
};

class OwnedError {
public:
  OwnedError(OwnedErrorKind kind, std::string object, Status status)
      : kind_(kind), object_(std::move(object)), status_(std::move(status)) {}
  OwnedErrorKind kind() const { return kind_; }
  // "Deployment gpustack-system/mooncake-dram-leader"
  const std::string& object() const { return object_; }
  // NotOurs is FailedPrecondition (the user has to act); Api carries the API's own code.
  const Status& status() const { return status_; }

private:
  OwnedErrorKind kind_;
  std::string object_;
  Status status_;
};

using OwnedResult = TypedResult<ApplyReport, OwnedError>;

class OwnedApplier {
public:
  explicit OwnedApplier(kube::ClientPtr client) : client_(std::move(client)) {}

  OwnedResult apply(const Json& owner, const OwnedSet& set, std::stop_token stop = {}) const;
  // A child created once and never updated (another controller owns its contents from then
  // on): created with the owner reference and note when `source` does not hold it; an object
  // already there (AlreadyExists, whoever made it) is left exactly as it is and reported
  // unchanged. No request when the cache holds it.
  OwnedResult seed(const Json& owner, const OwnedChild& child, const ChildSource& source,
                   std::stop_token stop = {}) const;

private:
  kube::ClientPtr client_;
};

}  // namespace kvc::runtime
