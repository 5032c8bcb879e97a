// The watch-stream decoder (kube/client.h WatchDecoder) on any bytes: the stream is cut into
// events the same way however the transport chunks it — whole, or in pieces cut where the input
// says — with the same error at the same point; and a callback that declines stops it at once.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "kvc/kube/client.h"

namespace {

using kvc::kube::WatchDecoder;
using kvc::kube::WatchEvent;

void check(bool condition) {
  if (!condition) {
    std::abort();
  }
}

struct Outcome {
  std::vector<std::string> events;  // type and object, printed
  bool failed = false;
  bool partial = false;
};

std::string print(const WatchEvent& event) {
  return std::to_string(static_cast<int>(event.type)) + event.object.dump();
}

// Feeds `stream` in pieces whose lengths come from `cuts` (cycled), stopping at an error.
Outcome decode(std::string_view stream, std::string_view cuts) {
  Outcome out;
  WatchDecoder decoder;
  const auto emit = [&out](WatchEvent&& event) {
    check(event.object.is_object());
    out.events.push_back(print(event));
    return true;
  };
  std::size_t at = 0;
  std::size_t cut = 0;
  while (at < stream.size()) {
    std::size_t piece = stream.size() - at;
    if (!cuts.empty()) {
      // Pieces of 1..4096 bytes: at most a few thousand feeds for the longest input.
      piece = 1 + (static_cast<unsigned char>(cuts[cut++ % cuts.size()]) * 16 + at) % 4096;
      piece = std::min(piece, stream.size() - at);
    }
    auto fed = decoder.feed(stream.substr(at, piece), emit);
    at += piece;
    if (!fed.ok()) {
      check(!fed.error().message().empty());
      (void)kvc::Json(fed.error().message()).dump();  // printable: it is logged and reported
      out.failed = true;
      return out;
    }
  }
  out.partial = decoder.hasPartial();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string_view cuts = input.substr(0, std::min<std::size_t>(size, 16));
  const Outcome whole = decode(input, {});
  const Outcome pieces = decode(input, cuts);
  check(whole.events == pieces.events && whole.failed == pieces.failed);
  check(whole.failed || whole.partial == pieces.partial);

  // A callback that declines the first event ends the decoding there. (A stream that makes no
  // event has nothing to decline: it is not decoded a third time, which for a body mutated from
  // the wide seeds is one more parse of tens of kilobytes.)
  if (whole.events.empty()) {
    return 0;
  }
  WatchDecoder decoder;
  int calls = 0;
  auto fed = decoder.feed(input, [&calls](WatchEvent&&) { return ++calls, false; });
  check(fed.ok() && calls == 1 && decoder.declined());
  return 0;
}
