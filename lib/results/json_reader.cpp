#include "results/json_reader.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "util/utf8.hpp"

namespace convbench {
namespace {

using nlohmann::json;

// A SAX pass before the document is built: finds the first place nested deeper than the limit
// (or the syntax error), with the key path that leads there.
class DepthCheck final : public nlohmann::json_sax<json> {
 public:
  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return enter(false); }
  bool key(string_t& k) override {
    frames_.back().key = k;
    return true;
  }
  bool end_object() override { return leave(); }
  bool start_array(std::size_t) override { return enter(true); }
  bool end_array() override { return leave(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    error_position = position;
    error = e.what();
    return false;
  }

  std::optional<std::string> too_deep;  // the key path where nesting passed the limit
  std::optional<std::size_t> error_position;
  std::string error;

 private:
  struct Frame {
    bool array;
    std::size_t index = 0;
    std::string key;
  };
  bool value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return true;
  }
  bool enter(bool array) {
    if (frames_.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
      too_deep = path();
      return false;
    }
    frames_.push_back({array, 0, {}});
    return true;
  }
  bool leave() {
    frames_.pop_back();
    return value();
  }
  // The key path down to the too-deep value; beyond 8 levels, its start and its depth.
  std::string path() const {
    std::string p;
    for (size_t i = 0; i < frames_.size() && i < 8; ++i) {
      const Frame& f = frames_[i];
      if (f.array)
        p += "[" + std::to_string(f.index) + "]";
      else
        p += (p.empty() ? "" : ".") + f.key;
    }
    if (frames_.size() > 8) p += "... (" + std::to_string(frames_.size()) + " levels)";
    return p.empty() ? "(top level)" : p;
  }
  std::vector<Frame> frames_;
};

// nlohmann's message without its own "[json.exception...] parse error at line L, column C: "
// prefix (the position is given as file:line:col instead).
std::string parse_message(const std::string& what) {
  const size_t column = what.find("column ");
  const size_t colon = column == std::string::npos ? std::string::npos : what.find(": ", column);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

// A number as a person reads it: the shortest %g form that reads back as the same double.
std::string number_text(double v) {
  char buf[64];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace

json parse_json_input(const InputText& in, const std::string& what) {
  DepthCheck check;
  const bool ok = json::sax_parse(in.text, &check);
  if (check.too_deep)
    throw InputError({in.name, 0, 0}, *check.too_deep,
                     "the " + what + " is nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  if (!ok || check.error_position) {
    const size_t at = check.error_position.value_or(0);
    const TextPosition p = position_of(in.text, at > 0 ? at - 1 : 0);
    throw InputError({in.name, p.line, p.column}, "", "malformed JSON: " + parse_message(check.error));
  }
  try {
    return json::parse(in.text);
  } catch (const json::exception& e) {  // the SAX pass accepted it; kept for safety
    throw InputError({in.name, 0, 0}, "", "malformed JSON: " + parse_message(e.what()));
  }
}

std::string describe_json(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return std::string("the boolean ") + (v.get<bool>() ? "true" : "false");
    case json::value_t::number_integer: return "the integer " + std::to_string(v.get<int64_t>());
    case json::value_t::number_unsigned: return "the integer " + std::to_string(v.get<uint64_t>());
    case json::value_t::number_float: return "the number " + number_text(v.get<double>());
    case json::value_t::string: {
      std::string s = v.get<std::string>();
      if (s.size() > 40) s = s.substr(0, 40) + "...";
      return "the string " + json(s).dump(-1, ' ', true, json::error_handler_t::replace);
    }
    case json::value_t::array: return "a list";
    case json::value_t::object: return "an object";
    default: return "a value of another kind";
  }
}

void JsonField::fail(const std::string& message) const { throw InputError({file_, 0, 0}, path_, message); }

JsonField JsonField::child(const json& value, const std::string& key) const {
  return JsonField(value, path_.empty() ? key : path_ + "." + key, file_);
}

JsonField JsonField::element(const json& value, size_t index) const {
  return JsonField(value, path_ + "[" + std::to_string(index) + "]", file_);
}

std::optional<JsonField> JsonField::find(const std::string& key) const {
  if (!value_->is_object()) fail("expected an object, got " + describe_json(*value_));
  const auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return child(*it, key);
}

JsonField JsonField::at(const std::string& key) const {
  if (auto f = find(key)) return *f;
  child(*value_, key).fail("missing");
}

std::optional<JsonField> JsonField::object(const std::string& key) const {
  auto f = find(key);
  if (f && !f->value().is_object()) f->fail("expected an object, got " + describe_json(f->value()));
  return f;
}

std::vector<JsonField> JsonField::items() const {
  if (!value_->is_array()) fail("expected a list, got " + describe_json(*value_));
  std::vector<JsonField> out;
  out.reserve(value_->size());
  for (size_t i = 0; i < value_->size(); ++i) out.push_back(element((*value_)[i], i));
  return out;
}

int64_t JsonField::as_integer(int64_t min, int64_t max) const {
  const json& v = *value_;
  const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (v.is_number_integer()) {
    // number_unsigned holds values up to 2^64 - 1: beyond int64 they are out of range, not -1.
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      fail("expected an integer in " + range + ", got " + describe_json(v));
    const int64_t x = v.get<int64_t>();
    if (x < min || x > max) fail("expected an integer in " + range + ", got " + describe_json(v));
    return x;
  }
  if (v.is_number_float()) {
    const double x = v.get<double>();
    // An integral float within range is accepted (1.0e6 for a million); anything else is not,
    // and nothing out of range is ever converted (that conversion would be undefined).
    if (std::isfinite(x) && x == std::floor(x) && x >= static_cast<double>(min) && x <= static_cast<double>(max) &&
        x < 9.2233720368547758e18)
      return static_cast<int64_t>(x);
  }
  fail("expected an integer in " + range + ", got " + describe_json(v));
}

int64_t JsonField::integer(const std::string& key, int64_t fallback, int64_t min, int64_t max) const {
  const auto f = find(key);
  return f ? f->as_integer(min, max) : fallback;
}

double JsonField::as_number(double min, double max) const {
  const json& v = *value_;
  if (v.is_number()) {
    const double x = v.get<double>();
    if (std::isfinite(x) && x >= min && x <= max) return x;
  }
  fail("expected a finite number in [" + number_text(min) + ", " + number_text(max) + "], got " + describe_json(v));
}

double JsonField::number(const std::string& key, double fallback, double min, double max) const {
  const auto f = find(key);
  return f ? f->as_number(min, max) : fallback;
}

bool JsonField::boolean(const std::string& key, bool fallback) const {
  const auto f = find(key);
  if (!f) return fallback;
  if (!f->value().is_boolean()) f->fail("expected true or false, got " + describe_json(f->value()));
  return f->value().get<bool>();
}

std::string JsonField::string(const std::string& key, const std::string& fallback) const {
  const auto f = find(key);
  if (!f) return fallback;
  if (!f->value().is_string()) f->fail("expected a string, got " + describe_json(f->value()));
  return f->value().get<std::string>();
}

std::string JsonField::choice(const std::string& key, const std::string& fallback,
                              const std::vector<std::string>& choices) const {
  const std::string s = string(key, fallback);
  for (const std::string& c : choices)
    if (s == c) return s;
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + c;
  at(key).fail("expected one of " + list + ", got " + describe_json(json(s)));
}

std::vector<int64_t> JsonField::integers(const std::string& key, int64_t min, int64_t max) const {
  std::vector<int64_t> out;
  if (const auto f = find(key))
    for (const JsonField& e : f->items()) out.push_back(e.as_integer(min, max));
  return out;
}

std::vector<double> JsonField::numbers(const std::string& key, double min, double max) const {
  std::vector<double> out;
  if (const auto f = find(key))
    for (const JsonField& e : f->items()) out.push_back(e.as_number(min, max));
  return out;
}

std::vector<std::string> JsonField::strings(const std::string& key) const {
  std::vector<std::string> out;
  if (const auto f = find(key))
    for (const JsonField& e : f->items()) {
      if (!e.value().is_string()) e.fail("expected a string, got " + describe_json(e.value()));
      out.push_back(e.value().get<std::string>());
    }
  return out;
}

}  // namespace convbench
