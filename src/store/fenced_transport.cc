#include "kvc/store/fenced_transport.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

namespace kvc::store {
namespace {

bool isWrite(const HttpRequest& request) {
  return request.method != "GET" && request.method != "HEAD";
}

class FencedTransport final : public HttpTransport {
public:
  FencedTransport(std::shared_ptr<HttpTransport> inner, WriteFence fence, const Clock& clock)
      : inner_(std::move(inner)), fence_(std::move(fence)), clock_(clock) {}

  StoreResult<HttpResponse> send(const HttpRequest& request) override {
    if (!isWrite(request)) {
      return inner_->send(request);
    }
    const Clock::TimePoint until = fence_();
    const Clock::TimePoint now = clock_.now();
    if (now >= until) {
      return StoreError(StoreErrorKind::Fenced,
                        request.method + " " + request.url +
                            " not sent: this replica's leadership ended at its renew deadline "
                            "(the Lease may already be another replica's, which writes instead)");
    }
    if (until == Clock::TimePoint::max()) {
      return inner_->send(request);
    }
    HttpRequest cut = request;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now);
    cut.timeout = std::max(std::chrono::milliseconds(1), std::min(request.timeout, left));
    // Checked again by the transport right before the request leaves: a pause between here and
    // there (the process stopped, its Lease taken meanwhile) must not end in a stale write.
    cut.not_after = std::chrono::steady_clock::now() + (until - now);
    return inner_->send(cut);
  }

private:
  std::shared_ptr<HttpTransport> inner_;
  WriteFence fence_;
  const Clock& clock_;
};

}  // namespace

std::shared_ptr<HttpTransport> newFencedTransport(std::shared_ptr<HttpTransport> inner,
                                                  WriteFence fence, const Clock& clock) {
  return std::make_shared<FencedTransport>(std::move(inner), std::move(fence), clock);
}

}  // namespace kvc::store
