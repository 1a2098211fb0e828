#include "spec/name_regex.hpp"

#include <re2/re2.h>

#include "util/input_error.hpp"
#include "util/utf8.hpp"

namespace convbench {

NameRegex::NameRegex(const std::string& pattern, const std::string& flag) {
  const std::string shown = "\"" + escape_invalid_utf8(pattern) + "\"";
  if (find_invalid_utf8(pattern))
    throw InputError({"command line", 0, 0}, flag, "not a regular expression: " + shown + " is not valid UTF-8");
  RE2::Options options;
  options.set_log_errors(false);  // the error is ours to report, once, located
  options.set_encoding(RE2::Options::EncodingUTF8);
  auto re = std::make_shared<const RE2>(pattern, options);
  if (!re->ok())
    throw InputError({"command line", 0, 0}, flag, "not a regular expression: " + shown + " (" + re->error() + ")");
  re_ = std::move(re);
}

bool NameRegex::search(std::string_view name) const {
  return RE2::PartialMatch(re2::StringPiece(name.data(), name.size()), *re_);
}

}  // namespace convbench
