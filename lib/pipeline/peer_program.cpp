#include "pipeline/peer_program.hpp"

#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "pipeline/peer_failure.hpp"
#include "sweep/child_process.hpp"
#include "util/input_error.hpp"

namespace convbench {
namespace {

namespace fs = std::filesystem;

// build/convbench, build/app/convbench, a build folder of its own beside the checkout's scripts.
constexpr int kLevelsUp = 4;

// Where `cmake --install` puts the peer's scripts, from the installed program's folder (BINDIR to
// DATADIR/convbench; CMakeLists.txt sets it from GNUInstallDirs).
#ifndef CONVBENCH_DATA_FROM_BIN
#define CONVBENCH_DATA_FROM_BIN "../share/convbench"
#endif

bool holds_peer(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "scripts" / "torch_peer.py", ec) &&
         fs::is_regular_file(dir / "scripts" / "peer-python.sh", ec);
}

[[noreturn]] void refuse(const std::string& why) { throw InputError({"command line", 0, 0}, "--peer", why); }

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

}  // namespace

std::string peer_checkout_of(const std::string& executable) {
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(fs::path(executable), ec).parent_path();
  if (ec) return "";
  // An installed program uses the copy installed with it, never a checkout it happens to sit in.
  const fs::path installed = fs::weakly_canonical(dir / CONVBENCH_DATA_FROM_BIN, ec);
  if (!ec && holds_peer(installed)) return installed.string();
  for (int level = 0; level <= kLevelsUp && !dir.empty(); ++level) {
    if (holds_peer(dir)) return dir.string();
    if (dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  return "";
}

PeerProgram find_torch_peer(const std::string& executable, const char* peer_python) {
  const std::string checkout = peer_checkout_of(executable);
  if (checkout.empty())
    refuse("torch: scripts/torch_peer.py is neither installed with this convbench (" + executable + ", in " +
           CONVBENCH_DATA_FROM_BIN +
           "/scripts from its folder) nor in the checkout it was built in: run the convbench "
           "of a repository checkout (scripts/build.sh builds it) or an installed one (cmake --install)");
  PeerProgram peer;
  peer.script = (fs::path(checkout) / "scripts" / "torch_peer.py").string();
  const bool from_env = peer_python != nullptr && peer_python[0] != '\0';
  if (from_env) {
    std::istringstream words(peer_python);
    for (std::string w; words >> w;) peer.python.push_back(w);
  } else {
    peer.python = {(fs::path(checkout) / "scripts" / "peer-python.sh").string(), "--no-setup"};
  }
  std::vector<std::string> probe = peer.python;
  probe.insert(probe.end(), {"-c", "import torch; print('torch', torch.__version__)"});
  const std::string fix = from_env ? "give CONVBENCH_PEER_PYTHON a Python that imports torch, or unset it to use "
                                     "the peer environment (scripts/setup-peers.sh makes it)"
                                   : "create it once with scripts/setup-peers.sh (PyTorch from PyPI; "
                                     "scripts/README.md, \"The peer environment\"), or set CONVBENCH_PEER_PYTHON "
                                     "to a Python with PyTorch 2";
  ChildResult r;
  try {
    r = run_child(probe);
  } catch (const std::runtime_error& e) {
    refuse(std::string("torch: cannot run the peer's Python: ") + e.what() + ": " + fix);
  }
  const std::string out = first_line(r.out);
  if (r.exit_code != 0 || out.rfind("torch ", 0) != 0) {
    if (from_env)
      refuse("torch: CONVBENCH_PEER_PYTHON (" + std::string(peer_python) + ") does not import torch (" +
             child_failure(r) + "): " + fix);
    // peer-python.sh --no-setup says "SKIP: torch not importable: the peer environment DIR is not
    // ready (why)" where it is not ready.
    const std::string skip = "SKIP: torch not importable: ";
    refuse("torch: " +
           (out.rfind(skip, 0) == 0 ? out.substr(skip.size())
                                    : "the peer environment does not import torch (" + child_failure(r) + ")") +
           ": " + fix);
  }
  peer.torch_version = out.substr(6);
  return peer;
}

}  // namespace convbench
