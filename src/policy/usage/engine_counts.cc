#include "kvc/policy/usage/engine_counts.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace kvc::policy {
namespace {

struct Families {
  std::string_view queries;
  std::string_view hits;
  bool storage_hits_only;  // SGLang: only the series of its storage backend are the store's
};

Families familiesOf(std::string_view engine) {
  if (engine == "sglang") {
    return {kSglangQueriesMetric, kSglangHitsMetric, true};
  }
  return {kVllmQueriesMetric, kVllmHitsMetric, false};
}

// The value of `label` in a `{a="x",b="y"}` block, "" when absent. Escapes are not decoded:
// the value compared against is a plain identifier.
std::string_view labelValue(std::string_view labels, std::string_view label) {
  std::size_t at = 0;
  while ((at = labels.find(label, at)) != std::string_view::npos) {
    const bool starts =
        at == 0 || labels[at - 1] == '{' || labels[at - 1] == ',' || labels[at - 1] == ' ';
    const std::size_t quote = at + label.size();
    if (starts && labels.substr(quote, 2) == "=\"") {
      const std::size_t end = labels.find('"', quote + 2);
      return end == std::string_view::npos ? std::string_view()
                                           : labels.substr(quote + 2, end - quote - 2);
    }
    at = quote;
  }
  return {};
}

// The sample value of what follows a line's name and labels: ` value [timestamp]`.
bool sampleValue(std::string_view rest, double& value) {
  while (!rest.empty() && rest.front() == ' ') {
    rest.remove_prefix(1);
  }
  const std::string number(rest.substr(0, rest.find(' ')));
  char* end = nullptr;
  value = std::strtod(number.c_str(), &end);
  return !number.empty() && end == number.c_str() + number.size() && std::isfinite(value) &&
         value >= 0;
}

}  // namespace

Result<EngineCounts> engineCounts(std::string_view exposition, std::string_view engine) {
  const Families families = familiesOf(engine);
  EngineCounts counts;
  bool queries_seen = false;
  while (!exposition.empty()) {
    const std::size_t newline = exposition.find('\n');
    std::string_view line = exposition.substr(0, newline);
    exposition.remove_prefix(newline == std::string_view::npos ? exposition.size() : newline + 1);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (line.empty() || line.front() == '#') {
      continue;
    }
    const std::size_t name_end = line.find_first_of("{ ");
    const std::string_view name = line.substr(0, name_end);
    const bool is_queries = name == families.queries;
    if (!is_queries && name != families.hits) {
      continue;
    }
    std::string_view labels;
    std::string_view rest =
        line.substr(name_end == std::string_view::npos ? line.size() : name_end);
    if (!rest.empty() && rest.front() == '{') {
      const std::size_t close = rest.find('}');
      if (close == std::string_view::npos) {
        return invalidArgument("an unreadable sample of " + std::string(name) + ": " +
                               std::string(line.substr(0, 200)));
      }
      labels = rest.substr(0, close + 1);
      rest.remove_prefix(close + 1);
    }
    double value = 0;
    if (!sampleValue(rest, value)) {
      return invalidArgument("an unreadable sample of " + std::string(name) + ": " +
                             std::string(line.substr(0, 200)));
    }
    if (is_queries) {
      counts.queries += value;
      queries_seen = true;
    } else if (!families.storage_hits_only ||
               labelValue(labels, "cache_source").starts_with(kSglangStorageSourcePrefix)) {
      counts.hits += value;
    }
  }
  if (!queries_seen) {
    return notFound("no " + std::string(families.queries) + " series");
  }
  return counts;
}

}  // namespace kvc::policy
