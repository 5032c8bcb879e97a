#pragma once
// Golden-file comparison shared by the golden suites (after Istio's injection tests).

#include <filesystem>
#include <string>
#include <vector>

namespace kvc::golden {

// True when KVC_UPDATE_GOLDEN=1: expected files are rewritten instead of compared.
bool updating();

// The stems of every `*<extension>` file directly in `dir`, sorted.
std::vector<std::string> discover(const std::filesystem::path& dir, const std::string& extension);

std::string readFile(const std::filesystem::path& path);

// Compares `actual` with the file at `expected` and returns "" when they match, or a unified
// diff (expected -> actual) with a hint to regenerate. When updating, writes the file atomically
// (temporary file + rename) and returns "".
std::string compare(const std::filesystem::path& expected, const std::string& actual);

// A test name for the case `stem` ("001-step-1" -> "001_step_1").
std::string caseName(const std::string& stem);

// The stems of `dir`'s goldens that have no input (`input_extension`): each is a failure.
std::vector<std::string> goldensWithoutInput(const std::filesystem::path& dir,
                                             const std::string& input_extension = ".yaml");

}  // namespace kvc::golden
