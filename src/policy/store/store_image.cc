#include "kvc/policy/store/store_image.h"

namespace kvc::policy {

std::string imageRepository(std::string_view image) {
  if (const std::size_t at = image.find('@'); at != std::string_view::npos) {
    image = image.substr(0, at);
  }
  const std::size_t slash = image.rfind('/');
  const std::size_t colon = image.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    image = image.substr(0, colon);
  }
  for (std::string_view hub : {"docker.io/", "index.docker.io/"}) {
    if (image.starts_with(hub)) {
      image.remove_prefix(hub.size());
    }
  }
  if (image.starts_with("library/")) {
    image.remove_prefix(std::string_view("library/").size());
  }
  return std::string(image);
}

bool projectStoreImage(std::string_view image, std::string_view settings_image) {
  if (settings_image.empty()) {
    return true;
  }
  return imageRepository(image) == imageRepository(settings_image);
}

}  // namespace kvc::policy
