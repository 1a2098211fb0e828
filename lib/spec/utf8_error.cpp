#include "spec/utf8_error.hpp"

#include <cstdio>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "spec/source_tree.hpp"
#include "util/utf8.hpp"

namespace convbench {
namespace {

// Every stray byte b is parsed as the private-use code point U+F700 + b, a stand-in the parser
// keeps in place, so that the scalar holding it can be found in the tree; shown, it becomes \xNN
// again. (A spec that already holds such code points is not searched: a stand-in would be
// ambiguous.)
constexpr unsigned char kLead = 0xef, kFirstMiddle = 0x9c, kLastMiddle = 0x9f;

bool stand_in_at(std::string_view s, size_t i) {
  return i + 2 < s.size() && static_cast<unsigned char>(s[i]) == kLead &&
         static_cast<unsigned char>(s[i + 1]) >= kFirstMiddle && static_cast<unsigned char>(s[i + 1]) <= kLastMiddle &&
         (static_cast<unsigned char>(s[i + 2]) & 0xc0) == 0x80;
}

bool holds_stand_in(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i)
    if (stand_in_at(s, i)) return true;
  return false;
}

std::string with_stand_ins(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  while (!text.empty()) {
    const std::optional<size_t> bad = find_invalid_utf8(text);
    const size_t good = bad ? *bad : text.size();
    out.append(text.substr(0, good));
    if (!bad) break;
    const auto b = static_cast<unsigned char>(text[good]);
    out += static_cast<char>(kLead);
    out += static_cast<char>(kFirstMiddle + (b >> 6));
    out += static_cast<char>(0x80 | (b & 0x3f));
    text.remove_prefix(good + 1);
  }
  return out;
}

// The scalar's text with each stand-in written \xNN and control characters escaped, in quotes.
std::string shown(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    char buf[8];
    if (stand_in_at(s, i)) {
      const int b =
          ((static_cast<unsigned char>(s[i + 1]) - kFirstMiddle) << 6) | (static_cast<unsigned char>(s[i + 2]) & 0x3f);
      std::snprintf(buf, sizeof buf, "\\x%02x", b);
      out += buf;
      i += 2;
    } else if (static_cast<unsigned char>(s[i]) < 0x20 || s[i] == 0x7f) {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(s[i]));
      out += buf;
    } else {
      out += s[i];
    }
  }
  return out + "\"";
}

struct Found {
  std::string path;
  const SourceNode* scalar = nullptr;
};

// The first scalar (key or value) in file order that holds a stand-in, with its key path as the
// spec's other errors write it (blocks[0].variants[1].name). Each node is visited once, so that
// aliases cannot multiply the walk.
bool find_stand_in(const SourceNode& node, const std::string& path, std::unordered_set<const SourceNode*>& seen,
                   Found& found) {
  if (!seen.insert(&node).second) return false;
  switch (node.kind) {
    case SourceNode::Kind::null: return false;
    case SourceNode::Kind::scalar:
      if (!holds_stand_in(node.text)) return false;
      found = {path, &node};
      return true;
    case SourceNode::Kind::sequence:
      for (size_t i = 0; i < node.items.size(); ++i)
        if (find_stand_in(*node.items[i], path + "[" + std::to_string(i) + "]", seen, found)) return true;
      return false;
    case SourceNode::Kind::map:
      for (const auto& [key, value] : node.entries) {
        if (holds_stand_in(key->text)) {
          found = {path, key.get()};  // the key itself holds the byte: located at its map
          return true;
        }
        if (find_stand_in(*value, path.empty() ? key->text : path + "." + key->text, seen, found)) return true;
      }
      return false;
  }
  return false;
}

}  // namespace

InputError invalid_utf8_error(const std::string& text, size_t bad, const std::string& file_name) {
  const TextPosition at = position_of(text, bad);
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(text[bad]));
  Found found;
  std::shared_ptr<const SourceNode> root;  // owns what found.scalar points into, until the message is made
  if (!holds_stand_in(text)) {
    try {
      root = parse_source_tree(with_stand_ins(text), file_name);
      std::unordered_set<const SourceNode*> seen;
      // A scalar that starts after the first stray byte's line does not hold it (that byte is in
      // a comment, say): then the line and column alone say where.
      if (!find_stand_in(*root, "", seen, found) || found.scalar->line > at.line) found = {};
    } catch (const std::exception&) {
      found = {};  // not even parseable with stand-ins: the line and column alone say where
    }
  }
  const std::string in = found.scalar ? " in " + shown(found.scalar->text) : "";
  return InputError({file_name, at.line, at.column}, found.path,
                    std::string("the spec is not valid UTF-8 (byte ") + byte + in + "): save it as UTF-8");
}

}  // namespace convbench
