// For every variant of every config in configs/, the allocator's measured peak of a training step
// (and an inference pass) equals the memory model's prediction byte for byte, per category — on
// the cpu backend at the configs' real sizes, and on the reference backend at shrunk sizes.
#include <gtest/gtest.h>

#include "memory_expectations.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <utility>

#include "analysis/memory_model.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "backends/reference/reference_backend.hpp"
#include "measure/variant_runner.hpp"
#include "shipped_configs.hpp"
#include "spec/spec_loader.hpp"
#include "util/input_error.hpp"
#include "variants/graph_hash.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

std::vector<std::string> config_files() { return shipped_configs(); }

// A whole network (configs/vbnet.yaml, resnet50.yaml) at the smallest size its downsampling
// stages still fit: batch 2 (a training batch norm needs two values per channel, and the deepest
// stages are 1x1), 16 voxels a side in 3-D, 32 pixels in 2-D (a full-size training
// step of either takes minutes on this machine's CPU; tests/network_peer_test.py checks their
// full-size counts).
BlockSpec network_shrunk(BlockSpec b) {
  b.batch = 2;
  for (int64_t& s : b.size) s = std::min<int64_t>(s, b.dims == 3 ? 16 : 32);
  return b;
}

// Every config's variant measured on the cpu backend: `networks` the networks (shrunk; each graph
// once, as on the reference backend below: ResNet-50 is in three configs), else the blocks at
// their full size. Two tests, so that each stays well inside its tier's time budget: one took
// 87.5 s of 91 in the parallel run once DenseNet-121 (120 conv shapes, each a oneDNN primitive to
// create) joined the configs.
void expect_cpu_measured_equals_predicted(bool networks) {
  CpuBackend cpu;
  std::set<std::string> networks_seen;
  for (const std::string& file : config_files()) {
    const Spec spec = load_spec_file(file);
    for (const BlockSpec& full : spec.blocks) {
      if ((full.network != nullptr) != networks) continue;
      for (const VariantSpec& v : full.variants) {
        const BlockSpec block = full.network ? network_shrunk(full) : full;
        SCOPED_TRACE(file + ": " + block.name + " [" + point_label(block) + "] / " + v.name);
        const Graph g = build_variant_graph(block, v);
        if (block.network && !networks_seen.insert(graph_hash(g, true)).second) continue;
        // The cpu backend runs amp_bfloat16 where oneDNN has fast bfloat16 convolutions, and no
        // amp_float16 (CpuAmp tests); what it refuses is measured on the reference backend
        // (ReferenceAmpMeasuredPeakEqualsPredictionShrunk).
        if (g.precision != Precision::plain) {
          if (const auto why = cpu.unsupported(g, g.ops.front())) {
            EXPECT_NE(why->find("--device reference"), std::string::npos) << *why;
            continue;
          }
        }
        testing::expect_measured_equals_predicted(cpu, g, block.mode == RunMode::train);
      }
    }
  }
}

TEST(ConfigMemory, CpuMeasuredPeakEqualsPredictionAtFullSize) { expect_cpu_measured_equals_predicted(false); }

TEST(ConfigMemory, CpuMeasuredNetworkPeakEqualsPredictionShrunk) { expect_cpu_measured_equals_predicted(true); }

// Every config's variant on the reference backend, shrunk. A network is checked once per graph
// (seed004-amp's ResNet-50 is resnet50.yaml's) and in training only: the networks' steps were most
// of the test's time (90 s in the parallel run on a 2-vCPU AVX2 VM), and their inference passes
// repeat the blocks' ops and rules, which are checked in both modes.
TEST(ConfigMemory, ReferenceMeasuredPeakEqualsPredictionShrunk) {
  ReferenceBackend reference;
  std::set<std::string> networks_seen;
  for (const std::string& file : config_files()) {
    const Spec spec = load_spec_file(file);
    for (BlockSpec block : spec.blocks) {
      if (block.network) {
        block = network_shrunk(block);
      } else {
        block.batch = 1;
        for (int64_t& s : block.size) s = std::min<int64_t>(s, 8);
      }
      for (const VariantSpec& v : block.variants) {
        const Graph g = build_variant_graph(block, v);
        if (block.network && !networks_seen.insert(graph_hash(g, true)).second) continue;
        for (bool training : {true, false}) {
          if (block.network && !training) continue;
          SCOPED_TRACE(file + ": " + block.name + " [" + point_label(block) + "] / " + v.name +
                       (training ? " train" : " infer"));
          testing::expect_measured_equals_predicted(reference, g, training);
        }
      }
    }
  }
}

// The same under the AMP modes (variants/autocast_graph.hpp): every config's variant as
// torch.autocast would run it, its dtype replaced by float32 master weights. A variant AMP refuses
// (a folded_conv has no autocast rule) is counted, and only that refusal is accepted; recompute
// segments rerun under a fresh autocast cache. The two modes alternate from block to block: their tensors are
// the same size and the CPU rules the same, so each block under both would check the same bytes
// twice (and took the test past its time budget); across the configs both modes run.
TEST(ConfigMemory, ReferenceAmpMeasuredPeakEqualsPredictionShrunk) {
  ReferenceBackend reference;
  int checked = 0, refused = 0, index = 0;
  std::set<std::pair<std::string, Precision>> networks_seen;
  for (const std::string& file : config_files()) {
    const Spec spec = load_spec_file(file);
    for (BlockSpec block : spec.blocks) {
      const Precision mode = index++ % 2 == 0 ? Precision::amp_bfloat16 : Precision::amp_float16;
      if (block.network) {
        block = network_shrunk(block);
      } else {
        block.batch = 1;
        for (int64_t& s : block.size) s = std::min<int64_t>(s, 8);
      }
      block.dtype = DType::float32;
      block.dtype_key_path.clear();
      for (VariantSpec& v : block.variants) v.precision.reset();
      {
        block.precision.precision = mode;
        for (const VariantSpec& v : block.variants) {
          SCOPED_TRACE(file + ": " + block.name + " [" + point_label(block) + "] / " + v.name + " " +
                       std::string(to_string(mode)));
          Graph g;
          try {
            g = build_variant_graph(block, v);
          } catch (const InputError& e) {
            const std::string why = e.what();
            EXPECT_NE(why.find("has no autocast rule"), std::string::npos) << why;
            ++refused;
            continue;
          }
          EXPECT_EQ(g.precision, mode);
          // A network is checked once per graph and mode (seed004-amp's ResNet-50 is
          // resnet50.yaml's), in training only: the networks' steps were 50 of the test's 56 s on
          // an idle 2-vCPU AVX2 VM, and their inference passes repeat the blocks' ops and rules.
          if (block.network && !networks_seen.insert({graph_hash(g, true), mode}).second) continue;
          for (bool training : {true, false}) {
            if (block.network && !training) continue;
            testing::expect_measured_equals_predicted(reference, g, training);
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 50);
  EXPECT_LT(refused, checked / 4);
}

}  // namespace
}  // namespace convbench
