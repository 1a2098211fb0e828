// The plots of a block, built once for every place that shows them: the HTML report (inlined)
// and `--plots DIR` (standalone SVG and PDF files for papers).
//  - per block and sweep point: time vs FLOPs (log-log, IQR error bars), memory at the peak by
//    category (stacked bars), and a roofline (achieved FLOP/s against arithmetic intensity,
//    under the device's roof when its limits are known: provenance.device_limits, which
//    --peak-flops/--bandwidth or --limits NAME set and compare and explain record, or the
//    datasheet of a recorded GPU: results/device_limits.hpp);
//  - per block swept over a numeric field: the headline time and the throughput (samples/s)
//    against that field, one line per variant.
#pragma once

#include <string>
#include <vector>

#include "results/results.hpp"

namespace convbench {

struct BlockPlot {
  std::string name;     // "time-vs-flops", "memory-breakdown", "roofline", "time-vs-batch", "throughput-vs-batch"
  std::string id;       // name-index, unique within a report
  std::string svg;      // empty when the plot cannot be drawn (then `caption` says why)
  std::string caption;  // what the plot shows, from the numbers
};

// `group`: the rows of one block at one sweep point (group_by_block); `index` numbers it.
std::vector<BlockPlot> point_plots(const ResultSet& results, const std::vector<const ResultRow*>& group, size_t index);
// `block_rows`: every row of one block, all sweep points. Empty when the block sweeps no numeric
// field or has no timing.
std::vector<BlockPlot> sweep_plots(const std::vector<const ResultRow*>& block_rows, size_t index);
// Rows of each block, all its sweep points together, in row order.
std::vector<std::vector<const ResultRow*>> rows_of_each_block(const ResultSet& results);

}  // namespace convbench
