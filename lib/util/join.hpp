// Joining strings with a separator, for the sentences, cells and lists reports write.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace convbench {

// parts[0] + separator + parts[1] + ...; "" for no parts.
std::string join(const std::vector<std::string>& parts, std::string_view separator);

}  // namespace convbench
