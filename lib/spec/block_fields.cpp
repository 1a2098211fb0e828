#include "spec/block_fields.hpp"

#include "spec/variant_parser.hpp"

namespace convbench {

void read_layer_fields(const FieldLookup& find, BlockSpec& b) {
  if (auto f = find("bias")) b.bias = f->as_bool();
  if (auto f = find("norm")) {
    const std::string norm = f->as_choice({"batch", "group", "none"}, "norm");
    b.norm = norm == "batch" ? NormKind::batch : norm == "group" ? NormKind::group : NormKind::none;
  }
  if (auto f = find("norm_groups")) b.norm_groups = f->as_int(1);
  if (auto f = find("act")) {
    b.act = act_kind_of(f->as_choice(act_kind_words(), "act"));
  }
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
  if (auto f = find("mode"))
    b.mode = f->as_choice({"train", "infer"}, "mode") == "train" ? RunMode::train : RunMode::infer;
  if (auto f = find("memory_policy")) b.memory_policy = read_memory_policy(*f);
}

}  // namespace convbench
