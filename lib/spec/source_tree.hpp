// A spec file as a tree of nodes that remember where they are in the file. yaml-cpp's own Node
// type loses what the loader needs: whether a scalar was quoted (JSON "8" is a string, 8 a
// number), duplicate keys (yaml-cpp keeps one silently), and the key order of maps. So the tree is
// built from yaml-cpp's parser events instead, for YAML and JSON alike (JSON is first checked
// with nlohmann::json so that JSON files get JSON syntax errors).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace convbench {

struct SourceNode {
  enum class Kind { null, scalar, sequence, map };

  Kind kind = Kind::null;
  std::string text;    // scalars: the value, escapes resolved
  bool plain = false;  // an unquoted, untagged scalar: may be a number, a bool or a string
  int line = 0;        // 1-based, where the node starts
  int column = 0;      // 1-based
  std::vector<std::shared_ptr<const SourceNode>> items;  // sequence
  // map, in file order; every key is a scalar and no key appears twice
  std::vector<std::pair<std::shared_ptr<const SourceNode>, std::shared_ptr<const SourceNode>>> entries;
  // This node plus everything below it, counting aliased subtrees each time they are used; the
  // parser caps it so that alias bombs cannot make the loader walk billions of nodes.
  std::size_t weight = 1;
};

// What a plain scalar means (YAML 1.2 core schema restricted to what JSON can say).
enum class ScalarType { null, boolean, integer, number, string };
ScalarType scalar_type(const SourceNode& node);

// Parses one YAML document (or, when `file_name` ends in ".json", one JSON text). Throws
// InputError located at the offending character for syntax errors, more than one document, an
// empty file, duplicate keys in one map, keys that are not scalars, and unsupported tags.
std::shared_ptr<const SourceNode> parse_source_tree(const std::string& text, const std::string& file_name);

// The node as compact JSON text, e.g. `8`, `"channels_last"`, `[32,32]`.
std::string to_compact_json(const SourceNode& node);

}  // namespace convbench
