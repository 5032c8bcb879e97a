#include "kvc/policy/admission/kube_syntax.h"

#include <cstddef>

namespace kvc::policy {
namespace {

bool lowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool alnum(char c) { return lowerAlnum(c) || (c >= 'A' && c <= 'Z'); }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool hex(char c) { return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Non-empty; `inner` for every character, `edge` for the first and the last.
template <typename Inner, typename Edge>
bool spelled(std::string_view text, Inner inner, Edge edge) {
  if (text.empty() || !edge(text.front()) || !edge(text.back())) {
    return false;
  }
  for (char c : text) {
    if (!inner(c)) {
      return false;
    }
  }
  return true;
}

bool labelChars(std::string_view text) {
  return spelled(
      text, [](char c) { return lowerAlnum(c) || c == '-'; }, lowerAlnum);
}

// The name part of a qualified name, and a non-empty label value.
bool qualifiedNamePart(std::string_view text) {
  return text.size() <= 63 &&
         spelled(
             text, [](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; }, alnum);
}

// `[a-z0-9]+` runs joined by one separator each: '.', '_', "__" or a run of '-'.
bool pathComponent(std::string_view text) {
  if (!spelled(
          text, [](char c) { return lowerAlnum(c) || c == '.' || c == '_' || c == '-'; },
          lowerAlnum)) {
    return false;
  }
  std::size_t i = 0;
  while (i < text.size()) {
    if (lowerAlnum(text[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && !lowerAlnum(text[end])) {
      ++end;
    }
    const std::string_view separator = text.substr(i, end - i);
    const bool dashes = separator.find_first_not_of('-') == std::string_view::npos;
    if (!(separator == "." || separator == "_" || separator == "__" || dashes)) {
      return false;
    }
    i = end;
  }
  return true;
}

// host[:port], the host a DNS name (any case), an IPv4 address or a bracketed IPv6 address.
bool registryDomain(std::string_view text) {
  std::string_view host = text;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos || close == 1) {
      return false;
    }
    for (char c : text.substr(1, close - 1)) {
      if (!hex(c) && c != ':') {
        return false;
      }
    }
    std::string_view rest = text.substr(close + 1);
    if (rest.empty()) {
      return true;
    }
    if (rest.front() != ':') {
      return false;
    }
    port = rest.substr(1);
    return spelled(port, digit, digit);
  }
  if (const std::size_t colon = text.find(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (!spelled(port, digit, digit)) {
      return false;
    }
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = host.find('.', start);
    const std::string_view part =
        host.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (!spelled(
            part, [](char c) { return alnum(c) || c == '-'; }, alnum)) {
      return false;
    }
    if (dot == std::string_view::npos) {
      return true;
    }
    start = dot + 1;
  }
}

bool tag(std::string_view text) {
  auto word = [](char c) { return alnum(c) || c == '_'; };
  return text.size() <= 128 &&
         spelled(
             text, [&](char c) { return word(c) || c == '.' || c == '-'; },
             [](char) { return true; }) &&
         word(text.front());
}

// algorithm:hex, the algorithm `[A-Za-z][A-Za-z0-9]*` components joined by one of "+._-", the
// hex at least 32 digits.
bool digest(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return false;
  }
  const std::string_view algorithm = text.substr(0, colon);
  const std::string_view encoded = text.substr(colon + 1);
  if (encoded.size() < 32 || !spelled(encoded, hex, hex)) {
    return false;
  }
  bool component_start = true;
  for (char c : algorithm) {
    if (component_start) {
      if (!alnum(c) || digit(c)) {
        return false;
      }
      component_start = false;
    } else if (c == '+' || c == '.' || c == '_' || c == '-') {
      component_start = true;
    } else if (!alnum(c)) {
      return false;
    }
  }
  return !algorithm.empty() && !component_start;
}

}  // namespace

bool isDns1123Label(std::string_view text) { return text.size() <= 63 && labelChars(text); }

bool isDns1123Subdomain(std::string_view text) {
  if (text.empty() || text.size() > 253) {
    return false;
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = text.find('.', start);
    if (!labelChars(text.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) {
      return true;
    }
    start = dot + 1;
  }
}

bool isDns1035Label(std::string_view text) {
  return isDns1123Label(text) && text.front() >= 'a' && text.front() <= 'z';
}

bool isQualifiedName(std::string_view text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    return qualifiedNamePart(text);
  }
  return isDns1123Subdomain(text.substr(0, slash)) && qualifiedNamePart(text.substr(slash + 1));
}

bool isLabelValue(std::string_view text) { return text.empty() || qualifiedNamePart(text); }

bool isImageReference(std::string_view text) {
  std::string_view name = text;
  if (const std::size_t at = name.find('@'); at != std::string_view::npos) {
    if (!digest(name.substr(at + 1))) {
      return false;
    }
    name = name.substr(0, at);
  }
  const std::size_t slash = name.rfind('/');
  const std::size_t colon = name.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    if (!tag(name.substr(colon + 1))) {
      return false;
    }
    name = name.substr(0, colon);
  }
  if (name.empty() || name.size() > 255) {
    return false;
  }
  std::size_t start = 0;
  bool first = true;
  while (true) {
    const std::size_t next = name.find('/', start);
    const std::string_view component =
        name.substr(start, next == std::string_view::npos ? next : next - start);
    // The first of several components may be a registry instead of a path component.
    const bool registry = first && next != std::string_view::npos && registryDomain(component);
    if (!registry && !pathComponent(component)) {
      return false;
    }
    if (next == std::string_view::npos) {
      return true;
    }
    first = false;
    start = next + 1;
  }
}

}  // namespace kvc::policy
