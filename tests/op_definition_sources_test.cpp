// What lives outside an op's definition and must follow it: the PyTorch peer's module for the op
// (scripts/peer/modules.py) and CONTRIBUTING.md's recipe and op table. Each op's definition names
// its peer module (OpDefinition::peer_module); these tests fail when the peer or the document drifts
// from the registry.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "ops/op_registry.hpp"

namespace convbench {
namespace {

std::string source_text(const std::string& relative) {
  std::ifstream in(std::string(CONVBENCH_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(in) << relative;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

// Whether `word` occurs in `text` as a whole name ("nn.ReLU" is not found in "nn.ReLU6").
bool names(const std::string& text, std::string_view word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !is_identifier_char(text[at - 1]);
    const size_t end = at + word.size();
    const bool ends = end == text.size() || !is_identifier_char(text[end]);
    if (starts && ends) return true;
  }
  return false;
}

// The peer's part that builds a custom variant's ops, one branch per op kind.
std::string build_custom_ops(const std::string& modules) {
  const size_t start = modules.find("def build_custom_ops(");
  EXPECT_NE(start, std::string::npos) << "scripts/peer/modules.py has no build_custom_ops";
  if (start == std::string::npos) return "";
  const size_t end = modules.find("\ndef ", start + 1);
  return modules.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(PeerModules, EverySpecOpNamesAModuleThePeerBuilds) {
  const std::string modules = source_text("scripts/peer/modules.py");
  for (const OpDefinition* d : op_definitions()) {
    if (!d->spec_op) continue;  // only a transform or autocast makes it: the peer never sees one
    EXPECT_FALSE(d->peer_module.empty()) << d->name << ": its definition names no peer_module";
    if (!d->peer_module.empty()) {
      EXPECT_TRUE(names(modules, d->peer_module))
          << d->name << ": scripts/peer/modules.py does not build " << d->peer_module << " (its peer_module)";
    }
    // Every activation has its branch, by its own spelling (a block's act and a custom op both).
    if (d->traits->activation) {
      EXPECT_NE(modules.find("\"" + std::string(d->name) + "\""), std::string::npos)
          << d->name << ": scripts/peer/modules.py never names the op";
    }
  }
}

TEST(PeerModules, EveryKindThePeerBuildsIsAnOpKind) {
  const std::string modules = source_text("scripts/peer/modules.py");
  const std::string custom = build_custom_ops(modules);
  // `kind == "relu"`, `kind in ("conv", "conv_transpose")`.
  const std::regex branch(R"(kind (?:==|in) \(?((?:"\w+"(?:, )?)+)\)?)");
  const std::regex quoted("\"(\\w+)\"");
  int seen = 0;
  for (auto b = std::sregex_iterator(custom.begin(), custom.end(), branch); b != std::sregex_iterator(); ++b) {
    const std::string list = (*b)[1];
    for (auto q = std::sregex_iterator(list.begin(), list.end(), quoted); q != std::sregex_iterator(); ++q) {
      ++seen;
      EXPECT_NE(find_op_definition((*q)[1].str()), nullptr)
          << "scripts/peer/modules.py build_custom_ops: " << (*q)[1] << " is no op kind";
    }
  }
  EXPECT_GT(seen, 10) << "build_custom_ops' branches were not found: has its form changed?";
}

// CONTRIBUTING.md's op table: a row per activation, in the elementwise family, with the
// elementwise file of every backend; and the recipe "To add an op" names what an activation takes.
TEST(ContributingRecipe, EveryActivationIsAnElementwiseRowOfTheOpTable) {
  const std::string doc = source_text("CONTRIBUTING.md");
  for (const OpDefinition* d : op_definitions()) {
    if (!d->traits->activation) continue;
    const std::string row_start = "| " + std::string(d->name) + " | ";
    const size_t at = doc.find(row_start);
    ASSERT_NE(at, std::string::npos) << d->name << ": no row in CONTRIBUTING.md's op table";
    const std::string row = doc.substr(at, doc.find('\n', at) - at);
    EXPECT_EQ(row.rfind(row_start + "elementwise |", 0), 0u) << row;
    for (const char* file :
         {"`elementwise_reference.cpp`", "`elementwise_cpu.cpp`", "`elementwise_cuda.cpp`", "`elementwise.cu`"})
      EXPECT_NE(row.find(file), std::string::npos) << d->name << "'s row names no " << file;
  }
  // What the recipe says an activation touches: the definition, the kernels in each backend's
  // elementwise file (and the sim test's case), the peer module; nothing of ONNX's or the fusions'.
  const size_t recipe = doc.find("## To add an op");
  ASSERT_NE(recipe, std::string::npos);
  const std::string intro = doc.substr(recipe, doc.find("\n1. ", recipe) - recipe);
  for (const char* named : {"lib/ops/<op>.cpp", "elementwise_reference.cpp", "elementwise_cpu.cpp",
                            "kernels/elementwise.cu", "tests/sim/kernels_sim_test.cpp", "scripts/peer/modules.py"})
    EXPECT_NE(intro.find(named), std::string::npos) << "the recipe's opening names no " << named;
  for (const char* elsewhere : {"onnx_export_ops.cpp", "conv_fusion.cpp", "cudnn_graph.cpp", "onednn_conv.cpp"})
    EXPECT_EQ(intro.find(elsewhere), std::string::npos)
        << "the recipe's opening still sends an activation to " << elsewhere;
  // A block's act: is the op of its name (block_assembler.cpp has no case per activation).
  EXPECT_EQ(intro.find("block_assembler.cpp`)"), std::string::npos) << "the recipe sends an act: to the assembler";
  for (const char* stale : {"onnx_export_ops.cpp", "seven files", "six files"})
    EXPECT_EQ(doc.find(stale), std::string::npos) << "CONTRIBUTING.md still says " << stale;
}

}  // namespace
}  // namespace convbench
