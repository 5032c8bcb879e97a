#include "kvc/kube/request.h"

#include <type_traits>
#include <utility>
#include <vector>

namespace kvc::kube {
namespace {

// Builds "?a=b&c=d" from pairs, skipping empty values.
class Query {
public:
  void add(std::string_view key, std::string_view value) {
    if (value.empty()) {
      return;
    }
    out_ += out_.empty() ? '?' : '&';
    out_ += key;
    out_ += '=';
    out_ += urlEncode(value);
  }
  void add(std::string_view key, std::int64_t value) { add(key, std::to_string(value)); }
  const std::string& str() const { return out_; }

private:
  std::string out_;
};

Status checkName(std::string_view name) {
  if (name.empty()) {
    return invalidArgument("an object name is required");
  }
  if (name == "." || name == ".." || name.find_first_of("/%?#") != std::string_view::npos) {
    return invalidArgument("\"" + std::string(name) + "\" is not a valid object name");
  }
  return okStatus();
}

Status checkSegment(std::string_view segment, std::string_view what) {
  if (segment.empty() || segment.find_first_of("/%?#.") != std::string_view::npos) {
    return invalidArgument("\"" + std::string(segment) + "\" is not a valid " + std::string(what));
  }
  return okStatus();
}

Status checkFieldValidation(std::string_view v) {
  if (v.empty() || v == "Ignore" || v == "Warn" || v == "Strict") {
    return okStatus();
  }
  return invalidArgument("fieldValidation must be Ignore, Warn or Strict, not \"" + std::string(v) +
                         "\"");
}

Result<std::string> postQuery(const PostParams& params) {
  KVC_RETURN_IF_ERROR(checkFieldValidation(params.field_validation));
  Query q;
  if (params.dry_run) {
    q.add("dryRun", "All");
  }
  q.add("fieldManager", params.field_manager);
  q.add("fieldValidation", params.field_validation);
  return q.str();
}

Status checkBody(const Json& object) {
  if (!object.is_object()) {
    return invalidArgument("the request body must be a JSON object");
  }
  return okStatus();
}

// A POST or PUT of `object` to `path`, with the write parameters as the query.
Result<HttpRequest> writeRequest(const char* method, std::string path, const Json& object,
                                 const PostParams& params) {
  KVC_RETURN_IF_ERROR(checkBody(object));
  KVC_ASSIGN_OR_RETURN(std::string query, postQuery(params));
  HttpRequest r;
  r.method = method;
  r.url = std::move(path) + query;
  r.body = object.dump();
  r.content_type = kContentJson;
  return r;
}

struct PatchBody {
  std::string body;
  std::string_view content_type;
};

Result<PatchBody> patchBody(const Patch& patch, const PatchParams& params) {
  const bool is_apply = std::holds_alternative<ApplyPatch>(patch);
  if (params.force && !is_apply) {
    return invalidArgument("force is only meaningful for a server-side apply patch");
  }
  if (is_apply && params.field_manager.empty()) {
    return invalidArgument("server-side apply needs a field manager");
  }
  return std::visit(
      [](const auto& p) -> Result<PatchBody> {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, JsonPatch>) {
          if (!p.operations.is_array()) {
            return invalidArgument("a JSON patch is an array of operations");
          }
          return PatchBody{p.operations.dump(), kContentJsonPatch};
        } else {
          if (!p.body.is_object()) {
            return invalidArgument("a merge, strategic or apply patch is a JSON object");
          }
          if constexpr (std::is_same_v<T, MergePatch>) {
            return PatchBody{p.body.dump(), kContentMergePatch};
          } else if constexpr (std::is_same_v<T, StrategicMergePatch>) {
            return PatchBody{p.body.dump(), kContentStrategicMergePatch};
          } else {
            // JSON is YAML: the apply body is sent as JSON under the YAML content type.
            return PatchBody{p.body.dump(), kContentApplyPatch};
          }
        }
      },
      patch);
}

Result<std::string> patchQuery(const PatchParams& params) {
  KVC_RETURN_IF_ERROR(checkFieldValidation(params.field_validation));
  Query q;
  if (params.dry_run) {
    q.add("dryRun", "All");
  }
  if (params.force) {
    q.add("force", "true");
  }
  q.add("fieldManager", params.field_manager);
  q.add("fieldValidation", params.field_validation);
  return q.str();
}

std::string deleteBody(const DeleteParams& params) {
  Json body = Json::object();
  body["kind"] = "DeleteOptions";
  body["apiVersion"] = "v1";
  if (!params.propagation_policy.empty()) {
    body["propagationPolicy"] = params.propagation_policy;
  }
  if (params.grace_period_seconds) {
    body["gracePeriodSeconds"] = *params.grace_period_seconds;
  }
  if (params.preconditions) {
    Json pre = Json::object();
    if (!params.preconditions->uid.empty()) {
      pre["uid"] = params.preconditions->uid;
    }
    if (!params.preconditions->resource_version.empty()) {
      pre["resourceVersion"] = params.preconditions->resource_version;
    }
    body["preconditions"] = std::move(pre);
  }
  if (params.dry_run) {
    body["dryRun"] = Json::array({"All"});
  }
  return body.dump();
}

Status checkDelete(const DeleteParams& params) {
  const std::string& p = params.propagation_policy;
  if (!p.empty() && p != "Orphan" && p != "Background" && p != "Foreground") {
    return invalidArgument("propagationPolicy must be Orphan, Background or Foreground, not \"" +
                           p + "\"");
  }
  if (params.grace_period_seconds && *params.grace_period_seconds < 0) {
    return invalidArgument("gracePeriodSeconds must not be negative");
  }
  return okStatus();
}

Result<std::string> listQuery(const ListParams& params, Query q) {
  if (!params.resource_version_match.empty()) {
    if (params.resource_version.empty()) {
      return invalidArgument("resourceVersionMatch needs a resourceVersion");
    }
    if (params.resource_version_match != "NotOlderThan" &&
        params.resource_version_match != "Exact") {
      return invalidArgument("resourceVersionMatch must be NotOlderThan or Exact, not \"" +
                             params.resource_version_match + "\"");
    }
  }
  if (!params.continue_token.empty() && !params.resource_version.empty()) {
    return invalidArgument("a continue token carries its own resourceVersion; do not set both");
  }
  if (params.limit && *params.limit <= 0) {
    return invalidArgument("limit must be positive");
  }
  q.add("labelSelector", params.label_selector);
  q.add("fieldSelector", params.field_selector);
  if (params.limit) {
    q.add("limit", *params.limit);
  }
  q.add("continue", params.continue_token);
  q.add("resourceVersion", params.resource_version);
  q.add("resourceVersionMatch", params.resource_version_match);
  if (params.timeout_seconds) {
    q.add("timeoutSeconds", *params.timeout_seconds);
  }
  return q.str();
}

}  // namespace

std::string urlEncode(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    const bool unreserved = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
                            (u >= '0' && u <= '9') || u == '-' || u == '.' || u == '_' || u == '~';
    if (unreserved) {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 0xF];
    }
  }
  return out;
}

RequestBuilder::RequestBuilder(ResourceType resource, std::string namespace_name)
    : resource_(std::move(resource)), namespace_name_(std::move(namespace_name)) {}

std::string RequestBuilder::collectionPath() const {
  std::string path = resource_.group.empty() ? "/api/" + resource_.version
                                             : "/apis/" + resource_.group + "/" + resource_.version;
  if (resource_.namespaced && !namespace_name_.empty()) {
    path += "/namespaces/" + namespace_name_;
  }
  path += "/" + resource_.plural;
  return path;
}

Status RequestBuilder::checkNamespace(bool for_object) const {
  if (!resource_.namespaced && !namespace_name_.empty()) {
    return invalidArgument(resource_.kind + " is cluster-scoped; it has no namespace (got \"" +
                           namespace_name_ + "\")");
  }
  if (resource_.namespaced && for_object && namespace_name_.empty()) {
    return invalidArgument(resource_.kind + " is namespaced; name a namespace");
  }
  if (!namespace_name_.empty()) {
    return checkName(namespace_name_);
  }
  return okStatus();
}

Result<std::string> RequestBuilder::objectPath(std::string_view name,
                                               std::string_view subresource) const {
  KVC_RETURN_IF_ERROR(checkNamespace(/*for_object=*/true));
  KVC_RETURN_IF_ERROR(checkName(name));
  std::string path = collectionPath() + "/" + std::string(name);
  if (!subresource.empty()) {
    KVC_RETURN_IF_ERROR(checkSegment(subresource, "subresource"));
    path += "/" + std::string(subresource);
  }
  return path;
}

Result<HttpRequest> RequestBuilder::get(std::string_view name) const {
  return getSubresource("", name);
}

Result<HttpRequest> RequestBuilder::getSubresource(std::string_view subresource,
                                                   std::string_view name) const {
  KVC_ASSIGN_OR_RETURN(std::string path, objectPath(name, subresource));
  HttpRequest r;
  r.method = "GET";
  r.url = std::move(path);
  return r;
}

Result<HttpRequest> RequestBuilder::list(const ListParams& params) const {
  KVC_RETURN_IF_ERROR(checkNamespace(/*for_object=*/false));
  KVC_ASSIGN_OR_RETURN(std::string query, listQuery(params, Query()));
  HttpRequest r;
  r.method = "GET";
  r.url = collectionPath() + query;
  return r;
}

Result<HttpRequest> RequestBuilder::watch(const WatchParams& params) const {
  KVC_RETURN_IF_ERROR(checkNamespace(/*for_object=*/false));
  if (params.timeout_seconds <= 0) {
    return invalidArgument("a watch needs a positive timeoutSeconds");
  }
  Query q;
  q.add("watch", "true");
  q.add("labelSelector", params.label_selector);
  q.add("fieldSelector", params.field_selector);
  q.add("resourceVersion", params.resource_version);
  q.add("timeoutSeconds", params.timeout_seconds);
  if (params.allow_bookmarks) {
    q.add("allowWatchBookmarks", "true");
  }
  HttpRequest r;
  r.method = "GET";
  r.url = collectionPath() + q.str();
  r.watch = true;
  return r;
}

Result<HttpRequest> RequestBuilder::create(const Json& object, const PostParams& params) const {
  KVC_RETURN_IF_ERROR(checkNamespace(/*for_object=*/true));
  return writeRequest("POST", collectionPath(), object, params);
}

Result<HttpRequest> RequestBuilder::replace(std::string_view name, const Json& object,
                                            const PostParams& params) const {
  return replaceSubresource("", name, object, params);
}

Result<HttpRequest> RequestBuilder::replaceSubresource(std::string_view subresource,
                                                       std::string_view name, const Json& object,
                                                       const PostParams& params) const {
  KVC_ASSIGN_OR_RETURN(std::string path, objectPath(name, subresource));
  return writeRequest("PUT", std::move(path), object, params);
}

Result<HttpRequest> RequestBuilder::createSubresource(std::string_view subresource,
                                                      std::string_view name, const Json& object,
                                                      const PostParams& params) const {
  KVC_ASSIGN_OR_RETURN(std::string path, objectPath(name, subresource));
  return writeRequest("POST", std::move(path), object, params);
}

Result<HttpRequest> RequestBuilder::remove(std::string_view name,
                                           const DeleteParams& params) const {
  KVC_ASSIGN_OR_RETURN(std::string path, objectPath(name, ""));
  KVC_RETURN_IF_ERROR(checkDelete(params));
  HttpRequest r;
  r.method = "DELETE";
  r.url = std::move(path);
  r.body = deleteBody(params);
  r.content_type = kContentJson;
  return r;
}

Result<HttpRequest> RequestBuilder::removeCollection(const DeleteParams& params,
                                                     const ListParams& list) const {
  KVC_RETURN_IF_ERROR(checkNamespace(/*for_object=*/false));
  KVC_RETURN_IF_ERROR(checkDelete(params));
  KVC_ASSIGN_OR_RETURN(std::string query, listQuery(list, Query()));
  HttpRequest r;
  r.method = "DELETE";
  r.url = collectionPath() + query;
  r.body = deleteBody(params);
  r.content_type = kContentJson;
  return r;
}

Result<HttpRequest> RequestBuilder::patch(std::string_view name, const Patch& patch,
                                          const PatchParams& params) const {
  return patchSubresource("", name, patch, params);
}

Result<HttpRequest> RequestBuilder::patchSubresource(std::string_view subresource,
                                                     std::string_view name, const Patch& patch,
                                                     const PatchParams& params) const {
  KVC_ASSIGN_OR_RETURN(std::string path, objectPath(name, subresource));
  KVC_ASSIGN_OR_RETURN(PatchBody body, patchBody(patch, params));
  KVC_ASSIGN_OR_RETURN(std::string query, patchQuery(params));
  HttpRequest r;
  r.method = "PATCH";
  r.url = path + query;
  r.body = std::move(body.body);
  r.content_type = body.content_type;
  return r;
}

}  // namespace kvc::kube
