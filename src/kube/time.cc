#include "kvc/kube/time.h"

#include <cstdio>
#include <ctime>
#include <string>

namespace kvc::kube {

namespace {

std::string formatWith(std::chrono::system_clock::time_point t, bool micros) {
  const auto since = t.time_since_epoch();
  auto secs = std::chrono::floor<std::chrono::seconds>(since);
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(since - secs).count();
  const std::time_t tt = static_cast<std::time_t>(secs.count());
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  if (micros) {
    std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<long long>(us));
  } else {
    std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  }
  return buf;
}

}  // namespace

std::string formatMicroTime(std::chrono::system_clock::time_point t) { return formatWith(t, true); }
std::string formatTime(std::chrono::system_clock::time_point t) { return formatWith(t, false); }

Result<std::chrono::system_clock::time_point> parseTime(std::string_view text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (text.size() < 20 || std::sscanf(std::string(text.substr(0, 19)).c_str(),
                                      "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &s) != 6) {
    return invalidArgument("\"" + std::string(text) + "\" is not an RFC 3339 time");
  }
  std::size_t pos = 19;
  long long micros = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (digits < 6) {
        micros = micros * 10 + (text[pos] - '0');
        ++digits;
      }
      ++pos;
    }
    while (digits < 6) {
      micros *= 10;
      ++digits;
    }
  }
  long offset_seconds = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos + 6 == text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int oh = (text[pos + 1] - '0') * 10 + (text[pos + 2] - '0');
    const int om = (text[pos + 4] - '0') * 10 + (text[pos + 5] - '0');
    offset_seconds = (oh * 3600 + om * 60) * (text[pos] == '+' ? 1 : -1);
    pos += 6;
  }
  if (pos != text.size()) {
    return invalidArgument("\"" + std::string(text) + "\" is not an RFC 3339 time");
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  const std::time_t tt = timegm(&tm);
  return std::chrono::system_clock::time_point(std::chrono::seconds(tt - offset_seconds) +
                                               std::chrono::microseconds(micros));
}

}  // namespace kvc::kube
