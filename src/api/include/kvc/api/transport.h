#pragma once
// Transport protocols in their two spellings (contract §2.3): the API's enum value, which users
// write in `spec.transport.protocol`, and the artifact's, which Mooncake and the engines read.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvc::api {

// The enum of `transport.protocol`, in order.
const std::vector<std::string_view>& transportProtocols();

// "Auto"/"TCP" -> "tcp", "RDMA" -> "rdma", "EFA" -> "efa", "CANN" -> "ascend", "ROCM" -> "hip",
// "MUSA" -> "musa", "MACA" -> "maca"; nullopt for a value outside the enum.
std::optional<std::string> artifactProtocol(std::string_view api_protocol);

// The API value that yields an artifact spelling ("ascend" -> "CANN"), for messages that tell the
// user what to set.
std::optional<std::string> apiProtocolFor(std::string_view artifact_protocol);

}  // namespace kvc::api
