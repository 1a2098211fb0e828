#include "spec/source_tree.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "util/input_error.hpp"

namespace convbench {
namespace {

// Alias expansion limit: far above any real spec, far below what would take noticeable time.
constexpr std::size_t kMaxWeight = 1'000'000;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string_view strip_sign(std::string_view s) {
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) s.remove_prefix(1);
  return s;
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?  (the YAML 1.2 core float, finite only)
bool is_float_text(std::string_view s) {
  s = strip_sign(s);
  const std::size_t e = s.find_first_of("eE");
  std::string_view mantissa = s.substr(0, e);
  if (e != std::string_view::npos && !all_digits(strip_sign(s.substr(e + 1)))) return false;
  const std::size_t dot = mantissa.find('.');
  if (dot == std::string_view::npos) return all_digits(mantissa);
  const std::string_view whole = mantissa.substr(0, dot), frac = mantissa.substr(dot + 1);
  if (whole.empty()) return all_digits(frac);
  return all_digits(whole) && (frac.empty() || all_digits(frac));
}

SourceLocation location(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0) return {file, 0, 0};
  return {file, mark.line + 1, mark.column + 1};
}

// Line and column (1-based) of a byte offset.
SourceLocation location_of_offset(const std::string& file, const std::string& text, std::size_t offset) {
  offset = std::min(offset, text.size());
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {file, line, static_cast<int>(offset - line_start) + 1};
}

// Accepts every JSON value without building it; only a syntax error stops it.
struct JsonSyntaxCheck {
  std::size_t error_position = 0;
  std::string error_message;
  bool failed = false;

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(nlohmann::json::number_integer_t) { return true; }
  bool number_unsigned(nlohmann::json::number_unsigned_t) { return true; }
  bool number_float(nlohmann::json::number_float_t, const std::string&) { return true; }
  bool string(std::string&) { return true; }
  bool binary(nlohmann::json::binary_t&) { return true; }
  bool start_object(std::size_t) { return true; }
  bool key(std::string&) { return true; }
  bool end_object() { return true; }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::json::exception& ex) {
    failed = true;
    error_position = position;
    error_message = ex.what();
    return false;
  }
};

void check_json_syntax(const std::string& text, const std::string& file_name) {
  JsonSyntaxCheck check;
  nlohmann::json::sax_parse(text, &check);
  if (!check.failed) return;
  // nlohmann's message reads "[json.exception.parse_error.101] parse error at line 1, column 9:
  // syntax error ..."; keep the part after the position, which this error states itself.
  // Other errors (e.g. "[json.exception.out_of_range.406] number overflow ...") lose the prefix.
  std::string message = check.error_message;
  const std::size_t at = message.find("column ");
  if (at != std::string::npos && message.find(": ", at) != std::string::npos) {
    message = message.substr(message.find(": ", at) + 2);
  } else if (!message.empty() && message.front() == '[' && message.find("] ") != std::string::npos) {
    message = message.substr(message.find("] ") + 2);
  }
  // `position` counts the characters read, the offending one included.
  const std::size_t offset = check.error_position > 0 ? check.error_position - 1 : 0;
  throw InputError(location_of_offset(file_name, text, offset), "", "invalid JSON: " + message);
}

int hex_value(const std::string& text, std::size_t at) {
  if (at + 4 > text.size()) return -1;
  int value = 0;
  for (std::size_t i = at; i < at + 4; ++i) {
    const char c = text[i];
    const int digit = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

// Turns valid JSON into text yaml-cpp reads the same way with the same columns. Tabs become
// spaces (JSON allows them wherever it allows spaces, never raw inside strings; YAML refuses
// them as indentation). Surrogate pairs ("\ud83d\ude00", which yaml-cpp rejects) become YAML's
// "\U0001f600", two characters shorter, so two spaces after the string's closing quote keep
// every later column where it was.
std::string json_as_yaml(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  bool in_string = false;
  int shortened = 0;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (!in_string) {
      out += c == '\t' ? ' ' : c;
      in_string = c == '"';
      continue;
    }
    if (c == '"') {
      out += '"';
      out.append(static_cast<std::size_t>(shortened), ' ');
      in_string = false;
      shortened = 0;
    } else if (c == '\\' && i + 1 < json.size() && json[i + 1] == 'u') {
      const int high = hex_value(json, i + 2);
      const int low = i + 7 < json.size() && json[i + 6] == '\\' && json[i + 7] == 'u' ? hex_value(json, i + 8) : -1;
      if (high >= 0xD800 && high <= 0xDBFF && low >= 0xDC00 && low <= 0xDFFF) {
        const long code = 0x10000 + ((long{high} - 0xD800) << 10) + (low - 0xDC00);
        char escape[11];
        std::snprintf(escape, sizeof escape, "\\U%08lX", code);
        out += escape;
        shortened += 2;
        i += 11;
      } else {
        out += c;
      }
    } else {
      out += c;
      if (c == '\\' && i + 1 < json.size()) out += json[++i];  // keeps \" inside the string
    }
  }
  return out;
}

class TreeBuilder : public YAML::EventHandler {
 public:
  explicit TreeBuilder(const std::string& file) : file_(file) {}

  std::shared_ptr<const SourceNode> root() const { return root_; }
  const YAML::Mark& document_start() const { return document_start_; }

  void OnDocumentStart(const YAML::Mark& mark) override { document_start_ = mark; }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto node = make(SourceNode::Kind::null, mark);
    finish(std::move(node), anchor);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end()) fail(mark, "alias to an anchor that is not complete (an anchor cannot contain itself)");
    // A shallow copy that sits where the alias is written; the subtree below is shared.
    auto node = std::make_shared<SourceNode>(*it->second);
    node->line = mark.line + 1;
    node->column = mark.column + 1;
    finish(std::move(node), 0);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    auto node = make(SourceNode::Kind::scalar, mark);
    node->text = value;
    if (tag == "?") {
      node->plain = true;
    } else if (tag != "!" && tag != "tag:yaml.org,2002:str") {
      fail(mark, "unsupported YAML tag \"" + tag + "\" (write the value without a tag)");
    }
    finish(std::move(node), anchor);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    check_collection_tag(mark, tag, "tag:yaml.org,2002:seq");
    stack_.push_back({make(SourceNode::Kind::sequence, mark), nullptr, anchor, {}});
  }

  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    check_collection_tag(mark, tag, "tag:yaml.org,2002:map");
    stack_.push_back({make(SourceNode::Kind::map, mark), nullptr, anchor, {}});
  }

  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    std::shared_ptr<SourceNode> node;
    std::shared_ptr<const SourceNode> pending_key;  // maps: the key whose value comes next
    YAML::anchor_t anchor;
    std::unordered_map<std::string, int> key_lines;  // maps: keys seen so far -> their line
  };

  std::shared_ptr<SourceNode> make(SourceNode::Kind kind, const YAML::Mark& mark) const {
    auto node = std::make_shared<SourceNode>();
    node->kind = kind;
    node->line = mark.line + 1;
    node->column = mark.column + 1;
    return node;
  }

  void check_collection_tag(const YAML::Mark& mark, const std::string& tag, const std::string& standard) const {
    if (tag != "?" && tag != "" && tag != "!" && tag != standard)
      fail(mark, "unsupported YAML tag \"" + tag + "\" (write the value without a tag)");
  }

  // The key path of the node being built, e.g. "blocks[1].variants[0]".
  std::string current_path() const {
    std::string path;
    for (const Frame& f : stack_) {
      if (f.node->kind == SourceNode::Kind::sequence) {
        path += "[" + std::to_string(f.node->items.size()) + "]";
      } else if (f.pending_key) {
        if (!path.empty()) path += ".";
        path += f.pending_key->text;
      }
    }
    return path;
  }

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& message) const {
    throw InputError(location(file_, mark), current_path(), message);
  }

  [[noreturn]] void fail_at(const SourceNode& node, const std::string& path, const std::string& message) const {
    throw InputError({file_, node.line, node.column}, path, message);
  }

  void close() {
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    finish(std::move(frame.node), frame.anchor);
  }

  void finish(std::shared_ptr<SourceNode> node, YAML::anchor_t anchor) {
    if (anchor != 0) anchors_[anchor] = node;
    if (stack_.empty()) {
      root_ = std::move(node);
      return;
    }
    Frame& parent = stack_.back();
    parent.node->weight += node->weight;
    if (parent.node->weight > kMaxWeight)
      fail_at(*node, current_path(),
              "the document has too many values (more than " + std::to_string(kMaxWeight) +
                  ", counting aliased values each time they are used)");
    if (parent.node->kind == SourceNode::Kind::sequence) {
      parent.node->items.push_back(std::move(node));
      return;
    }
    if (!parent.pending_key) {
      if (node->kind != SourceNode::Kind::scalar) fail_at(*node, current_path(), "map keys must be strings");
      const auto [it, inserted] = parent.key_lines.emplace(node->text, node->line);
      if (!inserted) {
        std::string path = current_path();
        path += (path.empty() ? "" : ".") + node->text;
        fail_at(*node, path,
                "duplicate key \"" + node->text + "\" (first given on line " + std::to_string(it->second) + ")");
      }
      parent.pending_key = std::move(node);
      return;
    }
    parent.node->entries.emplace_back(std::move(parent.pending_key), std::move(node));
    parent.pending_key = nullptr;
  }

  const std::string& file_;
  std::vector<Frame> stack_;
  std::shared_ptr<const SourceNode> root_;
  std::unordered_map<YAML::anchor_t, std::shared_ptr<const SourceNode>> anchors_;
  YAML::Mark document_start_;
};

nlohmann::ordered_json to_json(const SourceNode& node) {
  switch (node.kind) {
    case SourceNode::Kind::null: return nullptr;
    case SourceNode::Kind::sequence: {
      nlohmann::ordered_json out = nlohmann::ordered_json::array();
      for (const auto& item : node.items) out.push_back(to_json(*item));
      return out;
    }
    case SourceNode::Kind::map: {
      nlohmann::ordered_json out = nlohmann::ordered_json::object();
      for (const auto& [key, value] : node.entries) out[key->text] = to_json(*value);
      return out;
    }
    case SourceNode::Kind::scalar: break;
  }
  const std::string_view text = node.text;
  switch (scalar_type(node)) {
    case ScalarType::boolean: return text == "true";
    case ScalarType::integer: {
      const std::string_view digits = text.front() == '+' ? text.substr(1) : text;
      int64_t value = 0;
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (ec == std::errc() && end == digits.data() + digits.size()) return value;
      return std::strtod(node.text.c_str(), nullptr);  // too long for int64: keep it a number
    }
    case ScalarType::number: {
      const double value = std::strtod(node.text.c_str(), nullptr);
      if (std::isfinite(value)) return value;
      return node.text;
    }
    case ScalarType::null: return nullptr;
    case ScalarType::string: break;
  }
  return node.text;
}

}  // namespace

ScalarType scalar_type(const SourceNode& node) {
  if (node.kind == SourceNode::Kind::null) return ScalarType::null;
  if (node.kind != SourceNode::Kind::scalar || !node.plain) return ScalarType::string;
  const std::string_view text = node.text;
  // JSON spells booleans exactly so; YAML's yes/no/True are strings here (they would not
  // survive a conversion to JSON).
  if (text == "true" || text == "false") return ScalarType::boolean;
  if (all_digits(strip_sign(text))) return ScalarType::integer;
  if (is_float_text(text)) return ScalarType::number;
  return ScalarType::string;
}

std::shared_ptr<const SourceNode> parse_source_tree(const std::string& text, const std::string& file_name) {
  std::string yaml_text = text;
  if (ends_with(file_name, ".json")) {
    check_json_syntax(text, file_name);
    yaml_text = json_as_yaml(text);
  }
  try {
    std::istringstream in(yaml_text);
    YAML::Parser parser(in);
    TreeBuilder builder(file_name);
    if (!parser.HandleNextDocument(builder))
      throw InputError({file_name, 1, 1}, "", "the spec is empty (expected a map with `blocks`)");
    TreeBuilder second(file_name);
    if (parser.HandleNextDocument(second))
      throw InputError(location(file_name, second.document_start()), "",
                       "the file holds more than one YAML document; a spec is one document");
    if (!builder.root()) throw InputError({file_name, 1, 1}, "", "the spec is empty");
    return builder.root();
  } catch (const InputError&) {
    throw;
  } catch (const YAML::Exception& e) {
    throw InputError(location(file_name, e.mark), "", "invalid YAML: " + e.msg);
  } catch (const std::exception& e) {
    throw InputError({file_name, 0, 0}, "", std::string("cannot parse the spec: ") + e.what());
  }
}

std::string to_compact_json(const SourceNode& node) { return to_json(node).dump(); }

}  // namespace convbench
