#pragma once
// How a golden file shows an admission verdict, the same for every kind (quota_golden_test.cc,
// model_deployment_golden_test.cc): {"allowed", "errors": [{type, field, value?, detail}],
// "invalidMessage" (when refused: policy::invalidMessage), "warnings"}.

#include <string_view>

#include "kvc/common/json.h"
#include "kvc/policy/base/admission_verdict.h"

namespace kvc::golden {

Json verdictJson(const policy::AdmissionVerdict& verdict, std::string_view kind,
                 std::string_view name);

}  // namespace kvc::golden
