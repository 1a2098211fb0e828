// Where `compare --peer torch` finds PyTorch: the peer environment's Python (.venv-peers, made by
// scripts/setup-peers.sh, run through scripts/peer-python.sh --no-setup, which never downloads
// anything) or the Python $CONVBENCH_PEER_PYTHON names, and scripts/torch_peer.py, both from the
// checkout this convbench was built in, or from where `cmake --install` put them beside it. Found
// and asked for torch before any measurement, so a missing environment costs the user nothing but
// an error naming the script that makes it.
#pragma once

#include <string>
#include <vector>

namespace convbench {

struct PeerProgram {
  std::vector<std::string> python;  // the command that runs the peer's Python (arguments follow)
  std::string script;               // scripts/torch_peer.py
  std::string torch_version;        // what the Python's torch says it is
};

// The folder that holds scripts/torch_peer.py and scripts/peer-python.sh: the copy `cmake --install`
// put beside an installed `executable` (BINDIR/../share/convbench), else the checkout looked for
// from the folder of `executable` up (build/convbench -> the repository); "" when there is none.
std::string peer_checkout_of(const std::string& executable);

// `executable`: this program's path (/proc/self/exe); `peer_python`: $CONVBENCH_PEER_PYTHON or
// null (a command, split at spaces: "/usr/bin/python3", "env X=1 python3"). Throws InputError
// (exit 2) naming scripts/setup-peers.sh when there is no checkout or no usable torch.
PeerProgram find_torch_peer(const std::string& executable, const char* peer_python);

}  // namespace convbench
