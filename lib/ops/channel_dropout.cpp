// channel_dropout (PyTorch's nn.Dropout2d / nn.Dropout3d): drops whole (n, c) channels, keeping
// channel n*C + c when dropout_keep(n*C + c, seed, p) (dropout's Philox rule indexed by channel
// instead of element) and scaling kept ones by 1/(1-p). Forward saves what PyTorch's
// feature_dropout saves: the noise, one value per (n, c) of shape (N, C, 1, ..., 1) in the input's
// dtype (0 or 1/(1-p)), which its multiply keeps for backward. In inference it is the identity and
// returns its input itself; 1 FLOP per element each way, as dropout.
#include "ops/dropout_family.hpp"
#include "ops/op_registry.hpp"

namespace convbench {

OpDefinition define_channel_dropout() {
  OpDefinition d = dropout_family_definition(OpKind::channel_dropout);
  d.aux = [](const Graph& graph, const Op& op) { return unit_noise(graph, op, 2); };
  d.aux_names = {"noise"};
  d.peer_module = "nn.Dropout2d";
  return d;
}

}  // namespace convbench
