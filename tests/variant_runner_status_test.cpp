// The row status run_variant gives when a backend fails while running: an op the backend's
// library refuses at run time is `unsupported` (cuDNN's algorithm fallback found none that runs),
// memory that ran out is `oom`, anything else is `error`; the message is the backend's own, and
// a failed row keeps no half-measured figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "backends/reference/reference_backend.hpp"
#include "measure/variant_runner.hpp"
#include "test_blocks.hpp"
#include "variants/variant_builder.hpp"

namespace convbench {
namespace {

enum class Failure { unsupported, out_of_memory, other };

// The reference backend, failing in the first conv's forward pass.
class FailingBackend final : public ReferenceBackend {
 public:
  explicit FailingBackend(Failure failure) : failure_(failure) {}
  void forward(const ForwardCall& call) override {
    if (call.op.kind == OpKind::conv) {
      switch (failure_) {
        case Failure::unsupported: throw UnsupportedOp("no cuDNN algorithm runs this forward convolution (3 tried)");
        case Failure::out_of_memory: throw OutOfMemory(4096, "device full");
        case Failure::other: throw std::runtime_error("kernel.cu:12: `launch` failed");
      }
    }
    ReferenceBackend::forward(call);
  }

 private:
  Failure failure_;
};

TEST(VariantRunnerStatus, RunTimeFailuresBecomeTheRowsStatusWithTheBackendsMessage) {
  const Graph g = build_variant_graph(testing::small_block(2, 4, 8, 6), testing::variant("standard"));
  const struct {
    Failure failure;
    const char* status;
    const char* message;
  } cases[] = {{Failure::unsupported, "unsupported", "no cuDNN algorithm runs this forward convolution (3 tried)"},
               {Failure::out_of_memory, "oom", "device full"},
               {Failure::other, "error", "kernel.cu:12: `launch` failed"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.status);
    FailingBackend backend(c.failure);
    RunOptions options;
    options.time = false;
    ResultRow row;
    run_variant(g, true, backend, options, row);
    EXPECT_EQ(to_string(row.status), c.status);
    EXPECT_NE(row.message.find(c.message), std::string::npos) << row.message;
    EXPECT_FALSE(row.measured.has_value());
    EXPECT_FALSE(row.step.has_value());
    EXPECT_EQ(backend.allocator().stats().current, 0) << "tensors leaked";
  }
}

// The reference backend without kernels for one op kind, as a backend is while a new op lands on
// the others first.
class BackendWithoutKind final : public ReferenceBackend {
 public:
  explicit BackendWithoutKind(OpKind missing) {
    for (const Op& op : build_variant_graph(testing::small_block(2, 4, 8, 6), testing::variant("standard")).ops)
      if (op.kind != missing && !table_.find(op.kind)) table_.add(op.kind, *ReferenceBackend::kernels().find(op.kind));
  }
  const KernelTable& kernels() const override { return table_; }

 private:
  KernelTable table_;
};

TEST(VariantRunnerStatus, AnOpKindWithoutKernelsIsUnsupportedNotAFailure) {
  const Graph g = build_variant_graph(testing::small_block(2, 4, 8, 6), testing::variant("standard"));
  BackendWithoutKind backend(OpKind::relu);
  const Op& relu = *std::find_if(g.ops.begin(), g.ops.end(), [](const Op& op) { return op.kind == OpKind::relu; });
  EXPECT_EQ(backend.unsupported(g, relu), "the reference backend has no kernels for relu");
  EXPECT_EQ(backend.unsupported(g, g.ops.front()), std::nullopt);

  RunOptions options;
  options.time = false;
  ResultRow row;
  run_variant(g, true, backend, options, row);
  EXPECT_EQ(row.status, RunStatus::unsupported);
  EXPECT_NE(row.message.find("no kernels for relu"), std::string::npos) << row.message;

  // Called anyway (the executor does not ask first), the kernel lookup says the same.
  ForwardCall call{.graph = g, .op = relu};
  EXPECT_THROW(backend.forward(call), UnsupportedOp);
}

TEST(KernelTable, AKindIsRegisteredOnceWithBothDirections) {
  KernelTable t;
  const OpKernels both{[](const ForwardCall&) {}, [](const BackwardCall&) {}};
  t.add(OpKind::relu, both);
  EXPECT_NE(t.find(OpKind::relu), nullptr);
  EXPECT_EQ(t.find(OpKind::add), nullptr);
  EXPECT_THROW(t.add(OpKind::relu, both), std::logic_error);
  EXPECT_THROW(t.add(OpKind::add, {[](const ForwardCall&) {}, nullptr}), std::logic_error);
}

}  // namespace
}  // namespace convbench
