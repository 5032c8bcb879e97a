#pragma once
// The tables the commands print (kvcache store status, kvcache probe): left-aligned columns.

#include <string>
#include <vector>

namespace kvc {

// Each row on a line, its cells left-aligned in columns two spaces apart; the last column is not
// padded and no line ends in spaces.
std::string renderColumns(const std::vector<std::vector<std::string>>& rows);

}  // namespace kvc
