#pragma once
// An in-process fake API server for unit tests of the kube client and the runtime (STYLE.md §5:
// a fake client interface alone is not enough). Plain HTTP/1.1 on 127.0.0.1, port 0.
//
//   FakeApiServer       accepts connections (one thread each), parses requests with Beast and
//                       hands them to a handler that answers whole bodies or streams chunks.
//   FakeResourceServer  a handler that behaves like the API server for one collection: list
//                       with limit/continue, watch from a resourceVersion with real chunked
//                       events, bookmarks, 410 Expired after compact(), create/update/delete
//                       made by the test, server-side watch timeouts.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kvc/common/json.h"
#include "kvc/kube/config.h"

namespace kvc::testing {

struct FakeRequest {
  std::string method;
  std::string target;  // path?query
  std::string path;
  std::map<std::string, std::string> query;    // decoded
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;

  std::string param(const std::string& name) const {
    auto it = query.find(name);
    return it == query.end() ? std::string() : it->second;
  }
};

class ResponseWriter {
public:
  virtual ~ResponseWriter() = default;
  // A whole answer. `extra_headers` lines are "Name: value".
  virtual void respond(int status, std::string_view body,
                       std::string_view content_type = "application/json",
                       const std::vector<std::string>& extra_headers = {}) = 0;
  // A chunked answer: start, any number of chunks, end. write() is false once the client left.
  virtual void startStream(int status = 200) = 0;
  virtual bool write(std::string_view data) = 0;
  virtual void endStream() = 0;
  // Closes the connection without ending the stream (an abrupt server death).
  virtual void abort() = 0;
  // True once the client hung up or the server is stopping (long handlers poll it).
  virtual bool closed() = 0;
};

using FakeHandler = std::function<void(const FakeRequest&, ResponseWriter&)>;

class FakeApiServer {
public:
  FakeApiServer();
  ~FakeApiServer();

  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  void setHandler(FakeHandler handler);
  // "http://127.0.0.1:<port>"
  std::string url() const;
  int port() const { return port_; }
  // A client configuration pointing here (plain HTTP, no credentials unless `token`).
  kube::Config config(std::string token = {}) const;
  std::vector<FakeRequest> requests() const;
  std::size_t requestCount() const;
  void stop();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

// The API server for one collection (namespaced or not). Objects are kept by name.
class FakeResourceServer {
public:
  // `collection_path` like "/api/v1/namespaces/test/configmaps"; `kind`/`api_version` fill
  // the objects and lists.
  FakeResourceServer(std::string collection_path, std::string api_version, std::string kind);
  ~FakeResourceServer();

  // Install as (or call from) the FakeApiServer handler.
  void handle(const FakeRequest& request, ResponseWriter& out);

  // Mutations made by the test; each bumps the resourceVersion and notifies watches.
  Json create(Json object);
  Json update(Json object);
  // The DELETED event carries `final_state` when given (the object as the API server had it when
  // it went, e.g. with its last finalizer removed), else the object as last stored.
  void remove(const std::string& name, std::optional<Json> final_state = std::nullopt);
  // Forget the history up to now: a watch or list continuation from an older version gets
  // 410 Expired ("too old resource version").
  void compact();
  // Sends a BOOKMARK with the current version to every open watch.
  void bookmark();
  // Ends every open watch stream cleanly (as the server's timeoutSeconds would).
  void closeWatches();
  // Cuts every open watch connection without ending the stream.
  void abortWatches();
  // While held, new watch requests wait before they are answered (tests use it to change
  // and compact history behind a client's back).
  void holdWatches(bool hold);
  // The next `n` list requests answer `status` with a Status body.
  void failLists(int n, int status);
  // The next `n` watch requests answer `status` before streaming.
  void failWatches(int n, int status);

  std::int64_t resourceVersion() const;
  int listCalls() const;
  int watchCalls() const;
  int openWatches() const;
  // Blocks until `n` watches are open (or 5 s pass); true when they are.
  bool waitForOpenWatches(int n) const;
  // Blocks until `n` watch requests have arrived (or 5 s pass).
  bool waitForWatchCalls(int n) const;

private:
  struct Event {
    std::int64_t rv;
    std::string type;
    Json object;
  };
  void handleActive(const FakeRequest& request, ResponseWriter& out);
  void list(const FakeRequest& request, ResponseWriter& out);
  void watch(const FakeRequest& request, ResponseWriter& out);
  Json bump(Json object);

  std::string collection_path_;
  std::string api_version_;
  std::string kind_;
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  std::map<std::string, Json> objects_;
  std::vector<Event> events_;
  std::int64_t rv_ = 100;
  std::int64_t compacted_ = 0;
  std::uint64_t close_generation_ = 0;
  std::uint64_t abort_generation_ = 0;
  std::uint64_t bookmark_generation_ = 0;
  int fail_lists_ = 0;
  int fail_lists_status_ = 500;
  int fail_watches_ = 0;
  int fail_watches_status_ = 500;
  int list_calls_ = 0;
  int watch_calls_ = 0;
  int open_watches_ = 0;
  bool hold_watches_ = false;
  int active_ = 0;
  bool stopping_ = false;
};

// A Status body as the API server writes it.
std::string statusBody(int code, std::string_view reason, std::string_view message);

// Handlers for FakeApiServer::setHandler.
// Answers a request for a path it holds with that object, any other path with a 404 Status.
FakeHandler serveObjects(std::map<std::string, Json> objects_by_path);
// Answers every request with `body` and HTTP `code`.
FakeHandler answerWith(int code, std::string body);
// Answers every request with a Status of `code` (a 409, a 500, a 403 ...).
FakeHandler answerStatus(int code, std::string_view reason, std::string_view message);

}  // namespace kvc::testing
