#include "kvc/runtime/lister.h"

#include <spdlog/spdlog.h>

#include "kvc/kube/client.h"
#include "kvc/kube/object.h"

namespace kvc::runtime {

void reportUndecodable(const std::string& kind, const Json& object, const Status& error) {
  static std::mutex mutex;
  static std::set<std::string> reported;
  const std::string id =
      kind + "/" + kube::object::key(object) + "@" + kube::object::resourceVersion(object);
  std::lock_guard<std::mutex> guard(mutex);
  if (reported.size() > 10000) {
    reported.clear();  // bounded: a long-lived process forgets old reports
  }
  if (reported.insert(id).second) {
    spdlog::warn("{} {} is left out: it does not decode: {}", kind, kube::object::key(object),
                 error.message());
  }
}

}  // namespace kvc::runtime
