// A network of the spec's `networks:` section (configs/README.md "Networks"): one input run through stages
// of ops whose slots a variant fills. The loader reads and checks the network's own fields and
// its variants (network_parser.hpp); the units and stages stay as the file wrote them, because
// what they mean ($param substitution, slot channels, value names, sizes) depends on the
// variant and the sweep point: variants/network_builder.hpp expands them into one graph, failing
// with the entry's file:line:col and key path. The source tree is kept alive for that.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spec/source_tree.hpp"
#include "spec/spec_field.hpp"

namespace convbench {

enum class DropoutKind { element, channel };  // nn.Dropout | nn.Dropout2d/3d (op channel_dropout)

struct NetworkSpec {
  std::shared_ptr<const SourceNode> tree;  // the whole file's tree: every node below lives in it
  std::string file;
  const SourceNode* node = nullptr;  // the network's map in `tree`
  std::string key_path;              // networks[i]
  // The slots' default padding: a fixed one, or nullopt for "same" (resolved per slot from the
  // slot's kernel and dilation).
  std::optional<std::vector<int64_t>> padding;
  DropoutKind dropout_kind = DropoutKind::element;

  // The network's map, for the builder to read `units` and `stages` and custom variants' ops.
  Field field() const { return Field(*node, key_path, file); }
};

std::string_view to_string(DropoutKind kind);

}  // namespace convbench
