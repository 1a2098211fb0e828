// A network of the spec's `networks:` section (configs/README.md "Networks"): one input run through stages
// of ops whose slots a variant fills. The loader reads and checks the network's own fields and
// its variants (network_parser.hpp); the units and stages stay as the file wrote them, because
// what they mean ($param substitution, slot channels, value names, sizes) depends on the
// variant and the sweep point: variants/network_builder.hpp expands them into one graph, failing
// with the entry's file:line:col and key path. The source tree is kept alive for that.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spec/source_tree.hpp"
#include "spec/spec_field.hpp"

namespace convbench {

// How many ops one variant of a network may expand to (its entries too: slots, op entries and unit
// instances, each repeat counted), unless --max-network-ops says otherwise. 900,000 ops analysed
// in 11 s and 2.1 GiB on the 2-core development VM (configs/README.md "Networks"); a repeat or a
// unit nested one level too deep is refused at the entry that crossed the limit instead of filling
// the memory.
constexpr int64_t kDefaultMaxNetworkOps = 1'000'000;

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
  int64_t max_ops = kDefaultMaxNetworkOps;  // SpecLimits::max_network_ops

  // The network's map, for the builder to read `units` and `stages` and custom variants' ops.
  Field field() const { return Field(*node, key_path, file); }
};

const EnumWords<DropoutKind>& dropout_kind_words();
std::string_view to_string(DropoutKind kind);

}  // namespace convbench
