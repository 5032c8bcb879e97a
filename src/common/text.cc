#include "kvc/common/text.h"

#include <algorithm>

namespace kvc {
namespace {

// Length of the UTF-8 sequence starting with `lead`, or 1 for a stray byte.
std::size_t sequenceLength(unsigned char lead) {
  if (lead < 0x80) {
    return 1;
  }
  if ((lead & 0xE0) == 0xC0) {
    return 2;
  }
  if ((lead & 0xF0) == 0xE0) {
    return 3;
  }
  if ((lead & 0xF8) == 0xF0) {
    return 4;
  }
  return 1;
}

// The length of the well-formed UTF-8 sequence `text` starts with (RFC 3629: no overlong
// forms, no surrogates, nothing past U+10FFFF), or 0 when it does not start with one.
std::size_t validSequence(std::string_view text) {
  const auto byte = [&text](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) {
    return 1;
  }
  std::size_t n = 0;
  unsigned char low = 0x80;  // the range of the second byte
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    low = lead == 0xE0 ? 0xA0 : 0x80;   // overlong
    high = lead == 0xED ? 0x9F : 0xBF;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    low = lead == 0xF0 ? 0x90 : 0x80;   // overlong
    high = lead == 0xF4 ? 0x8F : 0xBF;  // past U+10FFFF
  } else {
    return 0;
  }
  if (text.size() < n || byte(1) < low || byte(1) > high) {
    return 0;
  }
  for (std::size_t k = 2; k < n; ++k) {
    if ((byte(k) & 0xC0) != 0x80) {
      return 0;
    }
  }
  return n;
}

}  // namespace

bool isUtf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = validSequence(text.substr(i));
    if (n == 0) {
      return false;
    }
    i += n;
  }
  return true;
}

std::string excerpt(std::string_view body, std::size_t max_runes) {
  // Trim surrounding whitespace first, so a trailing newline does not count.
  const auto first = body.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return {};
  }
  body = body.substr(first, body.find_last_not_of(" \t\r\n") - first + 1);

  std::string out;
  std::size_t runes = 0;
  std::size_t i = 0;
  while (i < body.size()) {
    if (runes == max_runes) {
      break;
    }
    const auto lead = static_cast<unsigned char>(body[i]);
    // A byte that starts no well-formed sequence is one '?': the excerpt must stay UTF-8, or
    // the JSON it is put into cannot be written (dump() throws).
    const std::size_t valid = validSequence(body.substr(i));
    const std::size_t n = valid == 0 ? 1 : valid;
    if (lead == '\n' || lead == '\r' || lead == '\t') {
      out.push_back(' ');
    } else if (valid == 0 || lead < 0x20 || lead == 0x7f) {
      out.push_back('?');
    } else {
      out.append(body.substr(i, n));
    }
    i += n;
    ++runes;
  }
  if (i < body.size() && max_runes > 0) {
    // Make room for the marker within the budget.
    if (runes == max_runes) {
      std::size_t cut = out.size();
      do {
        --cut;
      } while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80);
      out.resize(cut);
    }
    out += "…";
  }
  return out;
}

std::size_t runeCount(std::string_view text) {
  std::size_t runes = 0;
  for (std::size_t i = 0; i < text.size();
       i += sequenceLength(static_cast<unsigned char>(text[i]))) {
    ++runes;
  }
  return runes;
}

std::string truncateRunes(std::string_view text, std::size_t max_runes, std::string_view marker) {
  if (runeCount(text) <= max_runes) {
    return std::string(text);
  }
  const std::size_t marker_runes = runeCount(marker);
  const std::size_t keep = max_runes > marker_runes ? max_runes - marker_runes : 0;
  std::size_t i = 0;
  for (std::size_t runes = 0; runes < keep && i < text.size(); ++runes) {
    i += sequenceLength(static_cast<unsigned char>(text[i]));
  }
  return std::string(text.substr(0, std::min(i, text.size()))) + std::string(marker);
}

std::string truncateBytes(std::string_view text, std::size_t max_bytes, std::string_view marker) {
  if (text.size() <= max_bytes) {
    return std::string(text);
  }
  std::size_t cut = max_bytes > marker.size() ? max_bytes - marker.size() : 0;
  // Back up to the first byte of a character.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return std::string(text.substr(0, cut)) + std::string(marker);
}

}  // namespace kvc
