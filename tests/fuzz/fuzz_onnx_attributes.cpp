// libFuzzer harness: the ONNX reader's seed models (tests/fuzz/corpus/onnx) with their numbers
// changed, where fuzz_onnx_reader changes bytes. Random bytes seldom keep a protobuf whole and
// reach the node that reads a number; here every input is a valid model whose attributes,
// initializer dims and constant values take the values the input gives, edge values most often
// (0, -1, 1, 64, 2^31, 2^63 - 1, NaN, infinity), so each translation's arithmetic meets them
// (a changed dim resizes the tensor's data, so that it still reads). The
// model then goes the way fuzz_onnx_reader's does: read, and when it reads, counted as `analyze`
// does. Bad input may only end in an InputError; anything else is a bug. The first finding it
// is made for: a GroupNormalization with more groups than channels, once a division by zero.
#include <unistd.h>

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "onnx/onnx_model.hpp"
#include "onnx_block_analysis.hpp"
#include "util/input_error.hpp"

namespace {

struct Seeds {
  std::string dir;
  std::vector<onnx::ModelProto> models;
};

// The seed models and a scratch folder, read once per process.
const Seeds& seeds() {
  static const Seeds s = [] {
    Seeds made;
    std::string d = (std::filesystem::temp_directory_path() / "convbench-fuzz-attributes-XXXXXX").string();
    made.dir = ::mkdtemp(d.data()) ? d : "/tmp";
    for (const auto& e :
         std::filesystem::directory_iterator(std::string(CONVBENCH_SOURCE_DIR) + "/tests/fuzz/corpus/onnx")) {
      onnx::ModelProto m;
      std::ifstream in(e.path(), std::ios::binary);
      if (m.ParseFromIstream(&in)) made.models.push_back(std::move(m));
    }
    return made;
  }();
  return s;
}

// Reads the input as a stream of small numbers, zero once it runs out.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool more() const { return at_ < size_; }
  uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  int64_t raw() {
    int64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | byte();
    return v;
  }
  // An integer, an edge value three times in four.
  int64_t integer() {
    static const int64_t edges[] = {0,
                                    1,
                                    -1,
                                    2,
                                    3,
                                    64,
                                    int64_t{1} << 31,
                                    (int64_t{1} << 31) + 1,
                                    int64_t{1} << 32,
                                    std::numeric_limits<int64_t>::max(),
                                    std::numeric_limits<int64_t>::min(),
                                    -(int64_t{1} << 31)};
    const uint8_t pick = byte();
    if (pick % 4 != 0) return edges[pick % std::size(edges)];
    return raw();
  }
  float real() {
    static const float edges[] = {0.0f,
                                  1.0f,
                                  -1.0f,
                                  0.5f,
                                  2.0f,
                                  1e-5f,
                                  1e-3f,
                                  1e10f,
                                  std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(),
                                  std::numeric_limits<float>::quiet_NaN(),
                                  std::numeric_limits<float>::denorm_min()};
    const uint8_t pick = byte();
    if (pick % 4 != 0) return edges[pick % std::size(edges)];
    const auto bits = static_cast<uint32_t>(raw());
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

// The elements a tensor's dims claim, or -1 when a dim is negative or the product passes 2^40.
int64_t count_of(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (const int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && n > (int64_t{1} << 40) / d)) return -1;
    n *= d;
  }
  return n;
}

// Sets dim `k` of `t` to `value`, resizing its raw data to match where it stays small: a tensor
// whose bytes and shape disagree is refused at once, and the node that reads the shape is what is
// sought.
void set_dim(onnx::TensorProto& t, int k, int64_t value) {
  const int64_t old_count = count_of(t);
  t.set_dims(k, value);
  const int64_t count = count_of(t);
  if (old_count > 0 && count >= 0 && count <= (int64_t{1} << 18) && !t.raw_data().empty())
    t.mutable_raw_data()->resize(static_cast<size_t>(count) * (t.raw_data().size() / static_cast<size_t>(old_count)));
}

// One change the input asks for: an attribute's number, an initializer's dim or value, a graph
// input's dim, or a size renumbered consistently: a node's integer attribute and every dim of
// the same value in the constants it reads (num_groups and its scale's and bias's length, say),
// which reaches what no single change can, a graph that agrees with itself at an extreme size.
void change(onnx::GraphProto& g, Reader& in) {
  const uint8_t what = in.byte() % 5;
  if (what == 4 && g.node_size() > 0) {
    onnx::NodeProto& n = *g.mutable_node(in.byte() % g.node_size());
    if (n.attribute_size() == 0) return;
    onnx::AttributeProto& a = *n.mutable_attribute(in.byte() % n.attribute_size());
    if (!a.has_i() || a.i() == 0) return;
    const int64_t from = a.i(), to = in.integer();
    a.set_i(to);
    for (const std::string& input : n.input())
      for (onnx::TensorProto& t : *g.mutable_initializer())
        if (t.name() == input)
          for (int k = 0; k < t.dims_size(); ++k)
            if (t.dims(k) == from) set_dim(t, k, to);
    return;
  }
  if (what == 0 && g.node_size() > 0) {
    onnx::NodeProto& n = *g.mutable_node(in.byte() % g.node_size());
    if (n.attribute_size() == 0) return;
    onnx::AttributeProto& a = *n.mutable_attribute(in.byte() % n.attribute_size());
    if (a.has_i()) a.set_i(in.integer());
    if (a.has_f()) a.set_f(in.real());
    if (a.ints_size() > 0) a.set_ints(in.byte() % a.ints_size(), in.integer());
    if (a.floats_size() > 0) a.set_floats(in.byte() % a.floats_size(), in.real());
  } else if (what == 1 && g.initializer_size() > 0) {
    onnx::TensorProto& t = *g.mutable_initializer(in.byte() % g.initializer_size());
    if (t.dims_size() > 0) set_dim(t, in.byte() % t.dims_size(), in.integer());
  } else if (what == 2 && g.initializer_size() > 0) {
    // A value of a small integer or float initializer (shapes, axes, scales, ratios).
    onnx::TensorProto& t = *g.mutable_initializer(in.byte() % g.initializer_size());
    std::string& raw = *t.mutable_raw_data();
    if (t.data_type() == onnx::TensorProto::INT64 && raw.size() >= 8) {
      const int64_t v = in.integer();
      std::memcpy(raw.data() + 8 * (in.byte() % (raw.size() / 8)), &v, 8);
    } else if (t.data_type() == onnx::TensorProto::FLOAT && raw.size() >= 4 && raw.size() <= 64) {
      const float v = in.real();
      std::memcpy(raw.data() + 4 * (in.byte() % (raw.size() / 4)), &v, 4);
    } else if (t.int64_data_size() > 0) {
      t.set_int64_data(in.byte() % t.int64_data_size(), in.integer());
    } else if (t.float_data_size() > 0) {
      t.set_float_data(in.byte() % t.float_data_size(), in.real());
    }
  } else if (what == 3 && g.input_size() > 0) {
    auto* shape = g.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() > 0) shape->mutable_dim(in.byte() % shape->dim_size())->set_dim_value(in.integer());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Seeds& s = seeds();
  if (s.models.empty() || size == 0) return 0;
  Reader in(data, size);
  onnx::ModelProto m = s.models[in.byte() % s.models.size()];
  for (int k = 0; k < 16 && in.more(); ++k) change(*m.mutable_graph(), in);
  const std::string bytes = m.SerializeAsString();
  const std::string file = s.dir + "/block.onnx";
  convbench::OnnxBlock block;
  try {
    block = convbench::parse_onnx_block(bytes, file);
  } catch (const convbench::InputError&) {
    return 0;
  }
  try {
    convbench::fuzzing::analyze_onnx_block(block, bytes, file, s.dir);
  } catch (const convbench::InputError&) {
  }
  return 0;
}
