// What memory policy recompute does in a training step, segment by segment, as the memory model
// and the counts see it (the executor works it out on its own, lib/runtime/executor.cpp, so that
// the tests comparing the two check both). It follows torch.utils.checkpoint(use_reentrant=False)
// with its default early stop:
//  - forward: the segment's ops run without saving anything for backward (their aux tensors
//    are freed after the op); the segment's inputs are kept, when any op of it saves something;
//  - backward: when the first op of the segment (in reverse order) whose backward reads a
//    saved tensor is reached, the segment's forward runs again from the kept inputs, this time
//    saving as a normal training forward does, and stops as soon as every tensor the segment's
//    backward reads exists again: before the last saving op when that op saves only its inputs
//    (PyTorch packs inputs before an op runs), after it when it saves its output or aux tensors;
//  - the kept inputs are released after the backward of the segment's first saving op (in
//    forward order), when PyTorch frees the last of the segment's saved-tensor holders.
#pragma once

#include <vector>

#include "graph/graph.hpp"

namespace convbench {

struct RecomputePlan {
  int segment = 0;               // index into graph.segments
  bool keeps_inputs = false;     // some op of the segment saves a tensor
  std::vector<int> kept_inputs;  // values read in the segment and made outside it (or the block input)
  int trigger_op = -1;           // its backward starts the recomputation (-1: nothing to recompute)
  std::vector<int> rerun_ops;    // the ops run again, in order
  int release_op = -1;           // after its backward the kept inputs are released
};

// One plan per segment of a training step (graph.segments); empty without segments.
std::vector<RecomputePlan> recompute_plans(const Graph& graph);

// Per op: the segment it belongs to, or -1.
std::vector<int> segment_of_ops(const Graph& graph);

}  // namespace convbench
