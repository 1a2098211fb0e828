#include "pipeline/peer_compare.hpp"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "pipeline/peer_failure.hpp"
#include "results/json_results.hpp"
#include "sweep/child_process.hpp"
#include "util/input_error.hpp"
#include "variants/resolved_spec.hpp"

namespace convbench {
namespace {

namespace fs = std::filesystem;

// A private folder for the per-block resolved specs and results files, removed at the end.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "convbench-peer-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("cannot make a scratch folder for the peer's files in " +
                               fs::temp_directory_path().string());
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

std::string number_text(double x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

std::string block_text(const BlockSpec& b) { return b.name + (b.point.empty() ? "" : " [" + point_label(b) + "]"); }

// The threads convbench computed with, as its provenance records them (--threads, else OpenMP's).
int threads_of(const ResultSet& so_far, const CompareOptions& options) {
  if (options.backend.threads > 0) return options.backend.threads;
  const nlohmann::json& t = so_far.provenance.contains("threads") ? so_far.provenance["threads"] : nlohmann::json();
  return t.is_number_integer() && t.get<int>() > 0 ? t.get<int>() : 0;
}

}  // namespace

std::vector<std::string> peer_arguments(const PeerProgram& peer, const std::string& resolved_block,
                                        const std::string& out, const std::string& device,
                                        const CompareOptions& options, int threads) {
  const MeasureOptions& m = options.run.measure;
  std::vector<std::string> argv = peer.python;
  argv.insert(argv.end(), {peer.script, resolved_block, "--json", out, "--device", device, "--max-noise",
                           number_text(m.max_noise), "--min-time", number_text(m.min_time_s), "--min-samples",
                           std::to_string(m.min_samples), "--timeout", number_text(m.timeout_s)});
  if (threads > 0) argv.insert(argv.end(), {"--threads", std::to_string(threads)});
  if (options.run.per_op_steps > 0) argv.insert(argv.end(), {"--per-op", std::to_string(options.run.per_op_steps)});
  return argv;
}

ComparedWithPeer compare_beside_peer(const Spec& spec, const CompareOptions& options, const PeerProgram& peer,
                                     std::ostream& notices) {
  if (options.device == "reference")
    throw InputError({"command line", 0, 0}, "--peer",
                     "PyTorch has no counterpart of the reference backend (plain loops in double precision): "
                     "compare against it on --device cpu or cuda");
  ScratchDir scratch;
  ComparedWithPeer out;
  nlohmann::json& file = out.peer_file;
  file = nlohmann::json::object();
  nlohmann::json rows = nlohmann::json::array();
  int block_index = 0;
  CompareOptions with_peer = options;
  with_peer.after_block = CompareOptions::AfterBlock{
      "PyTorch eager", [&](const BlockSpec& block, const ResultSet& so_far) -> std::vector<std::string> {
        // torch_peer.py builds a block from its resolved spec, and measures a network on its
        // PyTorch twin (scripts/peer/networks.py: torchvision's or timm's own model); a network
        // without one has no peer row ("only in ours").
        const std::string name = "block-" + std::to_string(block_index++);
        Spec one;
        one.name = spec.name;
        one.file = spec.file;
        one.sha256 = spec.sha256;
        one.blocks = {block};
        const std::string resolved = scratch.file(name + ".resolved.json");
        const std::string results = scratch.file(name + ".results.json");
        std::ofstream(resolved) << resolved_spec_json(one).dump(1) << "\n";
        const std::string device = so_far.device == "cuda" ? "cuda" : "cpu";
        ChildResult r;
        try {
          r = run_child(peer_arguments(peer, resolved, results, device, options, threads_of(so_far, options)));
        } catch (const std::runtime_error& e) {
          return {"PyTorch peer on " + block_text(block) + ": " + e.what() + "; its rows are convbench's alone"};
        }
        if (r.exit_code != 0)
          return {"PyTorch peer on " + block_text(block) + ": " + child_failure(r) +
                  "; its rows are convbench's alone"};
        nlohmann::json doc;
        try {
          std::ifstream in(results);
          doc = nlohmann::json::parse(in);
          results_from_json(doc, "the PyTorch peer's results for " + block_text(block));  // read as report would
        } catch (const std::exception& e) {
          return {std::string("PyTorch peer on ") + block_text(block) + ": its results do not read: " + e.what() +
                  "; its rows are convbench's alone"};
        }
        if (!file.contains("engine")) {
          for (const char* key : {"schema", "engine", "device", "provenance"})
            if (doc.contains(key)) file[key] = doc[key];
          file["provenance"]["spec"] = spec.file;
          file["provenance"]["spec_sha256"] = spec.sha256;
          file["provenance"]["run_by"] =
              "convbench compare --peer torch: one peer process per block and sweep point, right after "
              "convbench's rows of it, on that block's resolved spec (the command line is the first block's)";
        }
        for (const nlohmann::json& row : doc["results"]) rows.push_back(row);
        return {};
      }};
  out.ours = compare(spec, with_peer, notices);
  if (!file.contains("engine")) {  // the peer failed on every block: an empty file says so
    file = {{"schema", kResultsSchema},
            {"engine", "pytorch " + peer.torch_version},
            {"device", out.ours.device == "cuda" ? "cuda" : "cpu"},
            {"provenance",
             {{"spec", spec.file}, {"run_by", "convbench compare --peer torch: the peer failed on every block"}}}};
  }
  file["results"] = std::move(rows);
  out.peer = results_from_json(file, "the PyTorch peer's results");
  return out;
}

}  // namespace convbench
