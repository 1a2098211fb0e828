// UTF-8 validity, for inputs that must be text: a spec with a stray byte would pass validation
// and only fail when its names are written to JSON, after the whole run.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace convbench {

// The offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or nullopt when all of `text` is.
std::optional<size_t> find_invalid_utf8(std::string_view text);

// `text` with every byte that is not part of well-formed UTF-8 written as the four characters
// \xNN (lower-case hex), everything else kept as it is. For names convbench records but cannot
// refuse or choose (the host name, a path given on the command line, the command line itself):
// JSON and SQLite then get text they can store, and a reader still sees which byte it was.
std::string escape_invalid_utf8(std::string_view text);

// 1-based line and column (in bytes) of `offset` in `text`.
struct TextPosition {
  int line = 1, column = 1;
};
TextPosition position_of(std::string_view text, size_t offset);

}  // namespace convbench
