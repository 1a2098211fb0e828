#include "spec/block_fields.hpp"

#include "spec/variant_parser.hpp"

#include <algorithm>

namespace convbench {

const std::vector<BlockFieldKey>& block_field_keys() {
  // clang-format off
  static const std::vector<BlockFieldKey> keys = {
      {.key = "name",              .in_block = true,  .in_network = true},
      {.key = "dims",              .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true},
      {.key = "batch",             .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true},
      {.key = "in_channels",       .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true},
      {.key = "out_channels",      .in_block = true,  .in_network = false, .block_sweepable = true, .in_slot = true},
      {.key = "size",              .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true},
      {.key = "kernel",            .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true, .in_slot = true},
      {.key = "stride",            .in_block = true,  .in_network = false, .block_sweepable = true, .in_slot = true},
      {.key = "padding",           .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true, .in_slot = true},
      {.key = "dilation",          .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true, .in_slot = true},
      {.key = "bias",              .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true, .in_slot = true},
      {.key = "norm",              .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true, .in_slot = true},
      {.key = "norm_groups",       .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true},
      {.key = "act",               .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true, .in_slot = true},
      {.key = "negative_slope",    .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true},
      {.key = "dropout",           .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true, .in_slot = true},
      {.key = "dropout_kind",      .in_block = false, .in_network = true,  .network_sweepable = true},
      {.key = "residual",          .in_block = true,  .in_network = false, .block_sweepable = true},
      {.key = "dtype",             .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true},
      {.key = "precision",         .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true},
      {.key = "layout",            .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true},
      {.key = "layout_conversion", .in_block = true,  .in_network = false, .block_sweepable = true},
      {.key = "mode",              .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true},
      {.key = "memory_policy",     .in_block = true,  .in_network = true,  .block_sweepable = true, .network_sweepable = true},
      // A block's baseline may be swept (each point names its own); a network's may not.
      {.key = "baseline",          .in_block = true,  .in_network = true,  .block_sweepable = true},
      {.key = "variants",          .in_block = true,  .in_network = true},
      {.key = "units",             .in_block = false, .in_network = true},
      {.key = "stages",            .in_block = false, .in_network = true},
  };
  // clang-format on
  return keys;
}

namespace {

std::vector<std::string> keys_where(bool BlockFieldKey::*allowed) {
  std::vector<std::string> out;
  for (const BlockFieldKey& k : block_field_keys())
    if (k.*allowed) out.emplace_back(k.key);
  return out;
}

bool has(const std::vector<std::string>& keys, const std::string& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

}  // namespace

const std::vector<std::string>& block_fields() {
  static const std::vector<std::string> keys = keys_where(&BlockFieldKey::in_block);
  return keys;
}

const std::vector<std::string>& slot_fields() {
  static const std::vector<std::string> keys = keys_where(&BlockFieldKey::in_slot);
  return keys;
}

const std::vector<std::string>& network_fields() {
  static const std::vector<std::string> keys = keys_where(&BlockFieldKey::in_network);
  return keys;
}

const std::vector<std::string>& sweepable_fields() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out = keys_where(&BlockFieldKey::block_sweepable);
    for (const BlockFieldKey& k : block_field_keys())
      if (k.network_sweepable && !k.in_block) out.emplace_back(k.key);
    return out;
  }();
  return keys;
}

bool is_block_sweepable(const std::string& key) {
  static const std::vector<std::string> keys = keys_where(&BlockFieldKey::block_sweepable);
  return has(keys, key);
}

bool is_network_sweepable(const std::string& key) {
  static const std::vector<std::string> keys = keys_where(&BlockFieldKey::network_sweepable);
  return has(keys, key);
}

void read_layer_fields(const FieldLookup& find, BlockSpec& b) {
  if (auto f = find("bias")) b.bias = f->as_bool();
  if (auto f = find("norm")) b.norm = f->as_enum(norm_kind_words(), "norm");
  if (auto f = find("norm_groups")) b.norm_groups = f->as_int(1);
  if (auto f = find("act")) b.act = f->as_enum(act_kind_table(), "act");
  if (auto f = find("negative_slope")) b.negative_slope = f->as_number();
  if (auto f = find("dropout")) {
    b.dropout = f->as_number();
    if (b.dropout < 0.0 || b.dropout >= 1.0) f->fail("dropout must be in [0, 1), got " + f->node().text);
  }
}

void read_run_fields(const FieldLookup& find, BlockSpec& b) {
  if (auto f = find("dtype")) {
    b.dtype = *parse_dtype(f->as_choice({"float32", "tf32", "float16", "bfloat16"}, "dtype"));
    b.dtype_key_path = f->path();
    b.dtype_where = f->where();
  }
  if (auto f = find("precision")) b.precision = read_precision(*f);
  if (auto f = find("layout")) b.layout = *parse_layout(f->as_choice({"channels_first", "channels_last"}, "layout"));
  if (auto f = find("mode")) b.mode = f->as_enum(run_mode_words(), "mode");
  if (auto f = find("memory_policy")) b.memory_policy = read_memory_policy(*f);
}

}  // namespace convbench
