#include "kvc/kube/client.h"
#include "kvc/common/json_parse.h"
#include "kvc/kube/object.h"

#include <utility>

namespace kvc::kube {
namespace {

bool isSuccess(int code) { return code >= 200 && code < 300; }

ApiResult<Json> decodeObject(const HttpResponse& response, std::string_view what) {
  Json parsed = Json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return ApiError(ErrorReason::Decode, std::string(what) + ": the answer is not a JSON object",
                    response.status);
  }
  return parsed;
}

}  // namespace

ApiResult<WatchEvent> parseWatchEvent(std::string_view line) {
  // Bounded in depth and linear in width (json_parse.h): an object of 10,000 keys (a large
  // ConfigMap) decodes in milliseconds, not seconds.
  auto decoded = parseJson(line);
  if (!decoded.ok() || !decoded->is_object()) {
    return ApiError(ErrorReason::Decode,
                    "a watch event is not a JSON object" +
                        (decoded.ok() ? std::string() : " (" + decoded.status().message() + ")"));
  }
  Json& parsed = *decoded;
  auto type = parsed.find("type");
  auto object = parsed.find("object");
  if (type == parsed.end() || !type->is_string() || object == parsed.end() ||
      !object->is_object()) {
    return ApiError(ErrorReason::Decode, "a watch event needs a type and an object");
  }
  WatchEvent event;
  const std::string& t = type->get_ref<const std::string&>();
  if (t == "ADDED") {
    event.type = WatchEventType::Added;
  } else if (t == "MODIFIED") {
    event.type = WatchEventType::Modified;
  } else if (t == "DELETED") {
    event.type = WatchEventType::Deleted;
  } else if (t == "BOOKMARK") {
    event.type = WatchEventType::Bookmark;
  } else if (t == "ERROR") {
    event.type = WatchEventType::Error;
  } else {
    return ApiError(ErrorReason::Decode, "unknown watch event type \"" + t + "\"");
  }
  event.object = std::move(*object);
  return event;
}

ApiStatus WatchDecoder::feed(std::string_view bytes,
                             const std::function<bool(WatchEvent&&)>& emit) {
  buffer_.append(bytes);
  std::size_t start = 0;
  while (!declined_) {
    const std::size_t newline = buffer_.find('\n', start);
    if (newline == std::string::npos) {
      break;
    }
    std::string_view line(buffer_.data() + start, newline - start);
    start = newline + 1;
    if (line.empty() || line == "\r") {
      continue;
    }
    auto event = parseWatchEvent(line);
    if (!event.ok()) {
      buffer_.erase(0, start);
      return event.error();
    }
    if (!emit(std::move(event).value())) {
      declined_ = true;
    }
  }
  buffer_.erase(0, start);
  return Done{};
}

Result<std::shared_ptr<Client>> Client::create(Config config) {
  KVC_ASSIGN_OR_RETURN(std::shared_ptr<Transport> transport, newCurlTransport(config));
  return create(std::move(config), std::move(transport));
}

std::shared_ptr<Client> Client::create(Config config, std::shared_ptr<Transport> transport) {
  return std::shared_ptr<Client>(new Client(std::move(config), std::move(transport)));
}

void Client::setObserver(RequestObserver observer) {
  observer_.store(observer ? std::make_shared<const RequestObserver>(std::move(observer))
                           : nullptr);
}

void Client::observe(std::string_view method, std::string_view resource, int code,
                     std::chrono::steady_clock::time_point start) const {
  if (std::shared_ptr<const RequestObserver> observer = observer_.load()) {
    (*observer)(RequestRecord{method, resource, code, std::chrono::steady_clock::now() - start});
  }
}

ApiResult<HttpResponse> Client::send(const HttpRequest& request, std::string_view resource,
                                     std::stop_token stop) const {
  const auto start = std::chrono::steady_clock::now();
  auto response = transport_->send(request, std::move(stop));
  if (!response.ok()) {
    observe(request.method, resource, 0, start);
    return response.error();
  }
  observe(request.method, resource, response->status, start);
  if (!isSuccess(response->status)) {
    return errorFromResponse(response->status, response->body, response->retry_after);
  }
  return response;
}

ApiResult<Json> Client::sendJson(const Result<HttpRequest>& request, std::string_view resource,
                                 std::stop_token stop) const {
  if (!request.ok()) {
    return ApiError(ErrorReason::Client, request.status().message());
  }
  auto response = send(*request, resource, std::move(stop));
  if (!response.ok()) {
    return response.error();
  }
  return decodeObject(*response, request->method + " " + request->url);
}

ApiResult<Json> Client::getPath(std::string_view path, std::stop_token stop) const {
  HttpRequest request;
  request.method = "GET";
  request.url = std::string(path);
  return sendJson(request, {}, std::move(stop));
}

ApiResult<WatchEnd> Client::watch(const HttpRequest& request, const WatchCallback& callback,
                                  std::string_view resource, std::stop_token stop) const {
  WatchDecoder decoder;
  std::optional<ApiError> decode_error;
  const std::function<bool(std::string_view)> on_data = [&](std::string_view bytes) {
    auto fed = decoder.feed(bytes, callback);
    if (!fed.ok()) {
      decode_error = fed.error();
      return false;
    }
    return !decoder.declined();
  };
  const auto start = std::chrono::steady_clock::now();
  auto response = transport_->stream(request, on_data, std::move(stop));
  if (!response.ok()) {
    observe("WATCH", resource, 0, start);
    return response.error();
  }
  observe("WATCH", resource, response->status, start);
  if (decode_error) {
    return *decode_error;
  }
  if (!isSuccess(response->status)) {
    return errorFromResponse(response->status, response->body, response->retry_after);
  }
  return decoder.declined() ? WatchEnd::Declined : WatchEnd::Closed;
}

Api::Api(ClientPtr client, ResourceType resource, std::string namespace_name)
    : client_(std::move(client)), builder_(std::move(resource), std::move(namespace_name)) {}

Api Api::inNamespace(std::string namespace_name) const {
  Api copy(client_, builder_.resource(), std::move(namespace_name));
  copy.timeout_ = timeout_;
  return copy;
}

Api Api::withTimeout(std::chrono::milliseconds timeout) const {
  Api copy = *this;
  copy.timeout_ = timeout;
  return copy;
}

Result<HttpRequest> Api::timed(Result<HttpRequest> request) const {
  if (request.ok() && timeout_.count() > 0) {
    request->timeout = timeout_;
  }
  return request;
}

ApiResult<Json> Api::get(std::string_view name, std::stop_token stop) const {
  return client_->sendJson(timed(builder_.get(name)), resource().plural, std::move(stop));
}

ApiResult<std::optional<Json>> Api::getOptional(std::string_view name, std::stop_token stop) const {
  auto result = get(name, std::move(stop));
  if (!result.ok()) {
    if (result.error().isNotFound()) {
      return std::optional<Json>();
    }
    return result.error();
  }
  return std::optional<Json>(std::move(result).value());
}

ApiResult<ObjectList> Api::list(const ListParams& params, std::stop_token stop) const {
  auto body = client_->sendJson(timed(builder_.list(params)), resource().plural, std::move(stop));
  if (!body.ok()) {
    return body.error();
  }
  ObjectList list;
  Json& json = *body;
  if (auto meta = json.find("metadata"); meta != json.end() && meta->is_object()) {
    if (auto rv = meta->find("resourceVersion"); rv != meta->end() && rv->is_string()) {
      list.resource_version = rv->get<std::string>();
    }
    if (auto cont = meta->find("continue"); cont != meta->end() && cont->is_string()) {
      list.continue_token = cont->get<std::string>();
    }
    if (auto rem = meta->find("remainingItemCount");
        rem != meta->end() && rem->is_number_integer()) {
      list.remaining_item_count = rem->get<std::int64_t>();
    }
  }
  auto items = json.find("items");
  if (items == json.end() || !(items->is_array() || items->is_null())) {
    return ApiError(ErrorReason::Decode, "a list answer has no items array");
  }
  if (items->is_array()) {
    list.items.reserve(items->size());
    for (Json& item : *items) {
      list.items.push_back(std::move(item));
    }
  }
  return list;
}

ApiResult<ObjectList> Api::listEach(const ListParams& params,
                                    const std::function<void(Json&& item)>& on_item,
                                    std::stop_token stop) const {
  auto request = timed(builder_.list(params));
  if (!request.ok()) {
    return ApiError(ErrorReason::Client, request.status().message());
  }
  auto response = client_->send(*request, resource().plural, std::move(stop));
  if (!response.ok()) {
    return response.error();
  }
  // Items are the objects that end at depth 2 inside the top-level "items" array.
  std::string top_key;
  bool in_items = false;
  std::size_t seen = 0;
  Json::parser_callback_t filter = [&](int depth, Json::parse_event_t event, Json& parsed) {
    using E = Json::parse_event_t;
    if (depth == 1 && event == E::key) {
      top_key = parsed.is_string() ? parsed.get<std::string>() : std::string();
    } else if (depth == 1 && event == E::array_start) {
      in_items = top_key == "items";
    } else if (depth == 1 && event == E::array_end) {
      in_items = false;
    } else if (in_items && depth == 2 && event == E::object_end) {
      ++seen;
      on_item(std::move(parsed));
      return false;  // not kept in the page's tree
    }
    return true;
  };
  Json top = Json::parse(response->body, filter, /*allow_exceptions=*/false);
  response->body.clear();
  response->body.shrink_to_fit();
  if (top.is_discarded() || !top.is_object()) {
    return ApiError(ErrorReason::Decode, request->url + ": the list answer is not a JSON object",
                    response->status);
  }
  ObjectList list;
  if (auto meta = top.find("metadata"); meta != top.end() && meta->is_object()) {
    list.resource_version = meta->value("resourceVersion", std::string());
    list.continue_token = meta->value("continue", std::string());
    if (auto rem = meta->find("remainingItemCount");
        rem != meta->end() && rem->is_number_integer()) {
      list.remaining_item_count = rem->get<std::int64_t>();
    }
  }
  static_cast<void>(seen);
  return list;
}

ApiResult<ObjectList> Api::listAll(ListParams params, std::int64_t page_size,
                                   std::stop_token stop) const {
  ObjectList all;
  params.limit = page_size;
  while (true) {
    auto page = list(params, stop);
    if (!page.ok()) {
      return page.error();
    }
    for (Json& item : page->items) {
      all.items.push_back(std::move(item));
    }
    all.resource_version = page->resource_version;
    if (page->continue_token.empty()) {
      break;
    }
    params.continue_token = page->continue_token;
    params.resource_version.clear();
    params.resource_version_match.clear();
  }
  return all;
}

ApiResult<Json> Api::create(const Json& object, const PostParams& params,
                            std::stop_token stop) const {
  return client_->sendJson(timed(builder_.create(object, params)), resource().plural,
                           std::move(stop));
}

ApiResult<Json> Api::replace(std::string_view name, const Json& object, const PostParams& params,
                             std::stop_token stop) const {
  return client_->sendJson(timed(builder_.replace(name, object, params)), resource().plural,
                           std::move(stop));
}

ApiResult<Json> Api::remove(std::string_view name, const DeleteParams& params,
                            std::stop_token stop) const {
  return client_->sendJson(timed(builder_.remove(name, params)), resource().plural,
                           std::move(stop));
}

ApiResult<Json> Api::removeCollection(const DeleteParams& params, const ListParams& list,
                                      std::stop_token stop) const {
  return client_->sendJson(timed(builder_.removeCollection(params, list)), resource().plural,
                           std::move(stop));
}

ApiResult<Json> Api::patch(std::string_view name, const Patch& patch, const PatchParams& params,
                           std::stop_token stop) const {
  return client_->sendJson(timed(builder_.patch(name, patch, params)), resource().plural,
                           std::move(stop));
}

ApiResult<Json> Api::apply(const Json& intent, std::string_view field_manager, bool force,
                           std::stop_token stop) const {
  const std::string name = object::name(intent);
  return patch(name, ApplyPatch{intent}, PatchParams::apply(std::string(field_manager), force),
               std::move(stop));
}

ApiResult<Json> Api::getStatus(std::string_view name, std::stop_token stop) const {
  return client_->sendJson(timed(builder_.getSubresource("status", name)), resource().plural,
                           std::move(stop));
}

ApiResult<Json> Api::replaceStatus(std::string_view name, const Json& object,
                                   const PostParams& params, std::stop_token stop) const {
  return client_->sendJson(timed(builder_.replaceSubresource("status", name, object, params)),
                           resource().plural, std::move(stop));
}

ApiResult<Json> Api::patchStatus(std::string_view name, const Patch& patch,
                                 const PatchParams& params, std::stop_token stop) const {
  return client_->sendJson(timed(builder_.patchSubresource("status", name, patch, params)),
                           resource().plural, std::move(stop));
}

ApiResult<Json> Api::applyStatus(const Json& intent, std::string_view field_manager, bool force,
                                 std::stop_token stop) const {
  const std::string name = object::name(intent);
  return patchStatus(name, ApplyPatch{intent},
                     PatchParams::apply(std::string(field_manager), force), std::move(stop));
}

ApiResult<Json> Api::createSubresource(std::string_view subresource, std::string_view name,
                                       const Json& object, const PostParams& params,
                                       std::stop_token stop) const {
  return client_->sendJson(timed(builder_.createSubresource(subresource, name, object, params)),
                           resource().plural, std::move(stop));
}

ApiResult<WatchEnd> Api::watch(const WatchParams& params, const WatchCallback& callback,
                               std::stop_token stop) const {
  auto request = builder_.watch(params);
  if (!request.ok()) {
    return ApiError(ErrorReason::Client, request.status().message());
  }
  return client_->watch(*request, callback, resource().plural, std::move(stop));
}

}  // namespace kvc::kube
