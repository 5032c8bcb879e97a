#include "kvc/store/policy_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kvc::store {
namespace {

std::string errnoText(int err) { return std::strerror(err); }

}  // namespace

Status writePolicyFileAtomic(const std::string& path, std::string_view content) {
  const auto slash = path.rfind('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) {
    return invalidArgument("policy file path \"" + path + "\" names a directory");
  }
  const std::string prefix = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string dir = prefix.empty() ? "." : prefix;
  std::string temp = prefix + "." + base + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) {
    const int err = errno;
    return failedPrecondition("cannot create a temporary file next to " + path + ": " +
                              errnoText(err) + " (the directory must be writable)");
  }
  auto fail_with = [&](const std::string& step, int err) {
    ::close(fd);
    ::unlink(temp.c_str());
    return unavailable("writing " + path + ": " + step + ": " + errnoText(err));
  };
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return fail_with("write", errno);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0) {
    return fail_with("chmod", errno);
  }
  if (::fsync(fd) != 0) {
    return fail_with("fsync", errno);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return unavailable("writing " + path + ": close: " + errnoText(err));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return unavailable("renaming " + temp + " to " + path + ": " + errnoText(err));
  }
  // Make the rename itself durable.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return okStatus();
}

}  // namespace kvc::store
