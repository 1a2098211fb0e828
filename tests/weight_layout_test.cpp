// Where a conv's weight lives in memory (ConvAttrs::weight_layout, ParamDecl::layout): in its
// input's layout, so that a channels_last block's cuDNN and oneDNN convs read it as it is stored
// (issue 34 item 5). The values stay logical, so both layouts compute the same; the graph hash
// does not name the weight's order, so a history series goes on across the change.
#include <gtest/gtest.h>

#include "backends/reference/reference_backend.hpp"
#include "ops/graph_builder.hpp"
#include "ops/param_values.hpp"
#include "runtime/host_io.hpp"
#include "transforms/fold_graph.hpp"
#include "variants/graph_hash.hpp"

namespace convbench {
namespace {

ConvAttrs conv2d(int64_t out, int64_t k, int64_t groups = 1, bool bias = true) {
  ConvAttrs a;
  a.out_channels = out;
  a.kernel = {k, k};
  a.stride = {1, 1};
  a.padding = {k / 2, k / 2};
  a.dilation = {1, 1};
  a.groups = groups;
  a.bias = bias;
  return a;
}

// A conv, a transposed conv, a frozen blur conv and a linear head.
Graph mixed(Layout layout) {
  GraphBuilder b("mixed", TensorDesc{{2, 4, 6, 6}, DType::float32, layout});
  const int c = b.conv("conv", b.input(), conv2d(6, 3, 2));
  ConvAttrs up = conv2d(4, 2, 1, false);
  up.stride = {2, 2};
  up.padding = {0, 0};
  const int t = b.conv_transpose("up", c, up);
  ConvAttrs blur = conv2d(4, 3, 4);
  blur.frozen = true;
  blur.blur_init = true;
  const int f = b.conv("blur", t, blur);
  return b.finish(b.linear("head", b.global_avg_pool("pool", f), 3, true));
}

const Param& param(const Graph& g, const std::string& name) {
  for (const Param& p : g.params)
    if (p.name == name) return p;
  for (const Param& p : g.buffers)
    if (p.name == name) return p;
  throw std::out_of_range(name);
}

TEST(WeightLayout, AConvsWeightFollowsItsInputsLayoutAndNothingElseDoes) {
  for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
    SCOPED_TRACE(std::string(to_string(layout)));
    const Graph g = mixed(layout);
    for (const char* name : {"conv.weight", "up.weight", "blur.weight"}) {
      EXPECT_EQ(param(g, name).desc.layout, layout) << name;
    }
    for (const char* name : {"conv.bias", "blur.bias", "head.weight", "head.bias"}) {
      EXPECT_EQ(param(g, name).desc.layout, Layout::channels_first) << name;
    }
    for (const Op& op : g.ops) {
      if (op.kind != OpKind::conv && op.kind != OpKind::conv_transpose) continue;
      EXPECT_EQ(op.conv.weight_layout, layout) << op.name;
      EXPECT_EQ(g.conv_weight(op).layout, layout) << op.name;
    }
  }
}

TEST(WeightLayout, TheStoredOrderIsOHWIAndTheValuesStayLogical) {
  const Graph g = mixed(Layout::channels_last);
  const TensorDesc& w = param(g, "conv.weight").desc;  // (6, 2, 3, 3)
  EXPECT_EQ(w.strides(), (std::vector<int64_t>{18, 1, 6, 2}));
  // The same seed gives the same logical values in both layouts, and a round trip through the
  // tensor keeps them: initialisation and model files never see the memory order.
  const GraphValues last = initial_graph_values(g, 7);
  const GraphValues first = initial_graph_values(mixed(Layout::channels_first), 7);
  EXPECT_EQ(last.params, first.params);
  ReferenceBackend backend;
  Tensor t = make_tensor(backend.allocator(), w, MemoryCategory::parameters);
  std::vector<double> values = last.params.at(0);
  for (double& v : values) v = static_cast<float>(v);  // as float32 storage keeps them
  upload(backend, t, values);
  EXPECT_EQ(download(backend, t), values);
  // Logical (o=0, i=1, h=0, w=0) sits one element after (o=0, i=0, h=0, w=0) in memory.
  EXPECT_EQ(physical_offset(w, 9), 1);
}

TEST(WeightLayout, TheGraphHashDoesNotNameTheWeightsOrder) {
  const Graph last = mixed(Layout::channels_last);
  Graph as_before = last;  // what the same block built when every weight was channels_first
  for (Param& p : as_before.params) p.desc.layout = Layout::channels_first;
  for (Param& b : as_before.buffers) b.desc.layout = Layout::channels_first;
  for (bool training : {false, true}) {
    EXPECT_EQ(graph_hash(last, training), graph_hash(as_before, training));
    EXPECT_NE(graph_hash(last, training), graph_hash(mixed(Layout::channels_first), training));
  }
}

TEST(WeightLayout, AFoldedConvComputesWithTheChannelsFirstKernelItsProgramWrites) {
  GraphBuilder b("rep", TensorDesc{{2, 4, 8, 8}, DType::float32, Layout::channels_last});
  const int wide = b.conv("wide", b.input(), conv2d(4, 3));
  const int narrow = b.conv("narrow", b.input(), conv2d(4, 1));
  const Graph source = b.finish(b.add("sum", wide, narrow));
  const FoldResult online = fold_graph(source, {FoldMode::online, true});
  ASSERT_EQ(online.graph.ops.size(), 1u);
  const Op& folded = online.graph.ops.front();
  ASSERT_EQ(folded.kind, OpKind::folded_conv);
  EXPECT_EQ(folded.conv.weight_layout, Layout::channels_first);
  // Its parameters are the branch weights the program reads in logical order.
  for (const Param& p : online.graph.params) EXPECT_EQ(p.desc.layout, Layout::channels_first) << p.name;
  // Folded once, it is a plain conv again, whose weight follows the block's layout.
  const FoldResult once = fold_graph(source, {FoldMode::once, false});
  ASSERT_EQ(once.graph.ops.size(), 1u);
  EXPECT_EQ(once.graph.ops.front().conv.weight_layout, Layout::channels_last);
  EXPECT_EQ(once.graph.conv_weight(once.graph.ops.front()).layout, Layout::channels_last);
}

}  // namespace
}  // namespace convbench
