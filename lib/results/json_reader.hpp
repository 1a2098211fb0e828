// Reading JSON that someone else wrote (results files, the PyTorch peer's files, tensor dumps)
// as untrusted input: parsing with a depth limit (a 300 KB file of nested brackets would
// otherwise overflow the stack wherever the document is copied or printed), and typed reads
// that check every value's type and range and fail with the file and the key path
// ("results[3].memory.peak_bytes: expected a non-negative integer, got 1e+300").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/input_error.hpp"
#include "util/input_file.hpp"

namespace convbench {

// Deeper nesting than any file convbench or its peer writes (results: about 6 levels).
constexpr int kMaxJsonDepth = 64;

// Parses `in` (read with read_input_file); a syntax error is a InputError at its line and column,
// nesting deeper than kMaxJsonDepth a InputError at the key path where it happens. `what` names
// the kind of file ("results file").
nlohmann::json parse_json_input(const InputText& in, const std::string& what);

// One value of a parsed document with its key path. Reads of absent or null keys return the
// fallback (the PyTorch peer writes null for what it did not measure); present values of the
// wrong type or out of range are errors.
class JsonField {
 public:
  JsonField(const nlohmann::json& value, std::string path, std::string file)
      : value_(&value), path_(std::move(path)), file_(std::move(file)) {}

  const nlohmann::json& value() const { return *value_; }
  const std::string& path() const { return path_; }
  [[noreturn]] void fail(const std::string& message) const;

  // The member `key`, when this is an object that has it and it is not null.
  std::optional<JsonField> find(const std::string& key) const;
  // The member `key`, which must be present (and not null).
  JsonField at(const std::string& key) const;
  // An object member that must be an object when present; nullopt when absent.
  std::optional<JsonField> object(const std::string& key) const;
  std::vector<JsonField> items() const;  // an array's elements (this must be an array)

  // Integers: the JSON number must be integral and within [min, max] (1e300, 2^64 - 1 and 1.5
  // are refused, as is any integer beyond int64).
  int64_t integer(const std::string& key, int64_t fallback, int64_t min = 0, int64_t max = INT64_MAX) const;
  int64_t as_integer(int64_t min = 0, int64_t max = INT64_MAX) const;
  // Finite numbers within [min, max].
  double number(const std::string& key, double fallback, double min = 0.0, double max = 1e300) const;
  double as_number(double min = 0.0, double max = 1e300) const;
  bool boolean(const std::string& key, bool fallback) const;
  std::string string(const std::string& key, const std::string& fallback) const;
  // One of `choices` (the fallback when absent).
  std::string choice(const std::string& key, const std::string& fallback,
                     const std::vector<std::string>& choices) const;
  std::vector<int64_t> integers(const std::string& key, int64_t min = 0, int64_t max = INT64_MAX) const;
  std::vector<double> numbers(const std::string& key, double min = 0.0, double max = 1e300) const;
  std::vector<std::string> strings(const std::string& key) const;

 private:
  JsonField child(const nlohmann::json& value, const std::string& key) const;
  JsonField element(const nlohmann::json& value, size_t index) const;

  const nlohmann::json* value_;
  std::string path_;
  std::string file_;
};

// "the integer 3", "the number 1e+300", "a string", "an object", ... for messages.
std::string describe_json(const nlohmann::json& value);

}  // namespace convbench
