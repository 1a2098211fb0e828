// The spec loader's helpers: SHA-256, "did you mean" suggestions, the positioned node tree, and
// the regular expressions of --filter.
#include <gtest/gtest.h>

#include "spec/name_regex.hpp"
#include "spec/source_tree.hpp"
#include "spec/suggest.hpp"
#include "util/input_error.hpp"
#include "util/sha256.hpp"

namespace convbench {
namespace {

TEST(Sha256, MatchesTheFips180Examples) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the length no longer fits in the first block, so padding takes a second one.
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnop"
                       "qklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256_hex(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, HandlesEveryTailLengthAroundABlock) {
  // 55 bytes pads into one block, 64 into two; both digests from coreutils' sha256sum.
  EXPECT_EQ(sha256_hex(std::string(55, 'x')), "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072");
  EXPECT_EQ(sha256_hex(std::string(64, 'x')), "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c");
}

TEST(Suggest, EditDistanceCountsSwapsAsOneEdit) {
  EXPECT_EQ(edit_distance("kernel", "kernel"), 0);
  EXPECT_EQ(edit_distance("kernal", "kernel"), 1);
  EXPECT_EQ(edit_distance("ratoi", "ratio"), 1);
  EXPECT_EQ(edit_distance("in_channel", "in_channels"), 1);
  EXPECT_EQ(edit_distance("", "abc"), 3);
  EXPECT_EQ(edit_distance("sitting", "kitten"), 3);
}

TEST(Suggest, NearestMatchOnlyForLikelyTypos) {
  const std::vector<std::string> keys = {"kernel", "stride", "padding", "dilation", "in_channels"};
  EXPECT_EQ(nearest_match("kernal", keys), "kernel");
  EXPECT_EQ(nearest_match("Kernel", keys), "kernel");
  EXPECT_EQ(nearest_match("in_chanels", keys), "in_channels");
  EXPECT_EQ(nearest_match("paddin", keys), "padding");
  EXPECT_EQ(nearest_match("colour", keys), std::nullopt);
  EXPECT_EQ(nearest_match("ke", keys), std::nullopt);  // too short to guess from
  EXPECT_EQ(did_you_mean("strid", keys), " (did you mean \"stride\"?)");
  EXPECT_EQ(did_you_mean("zzz", keys), "");
  EXPECT_EQ(join_alternatives({"a"}), "a");
  EXPECT_EQ(join_alternatives({"a", "b", "c"}), "a, b or c");
}

TEST(SourceTree, KeepsQuotingOrderAndPositions) {
  const auto root = parse_source_tree("b: 1\na: \"1\"\nc: [x, 2.5, true, null]\n", "t.yaml");
  ASSERT_EQ(root->kind, SourceNode::Kind::map);
  ASSERT_EQ(root->entries.size(), 3u);
  EXPECT_EQ(root->entries[0].first->text, "b");  // file order, not sorted
  EXPECT_EQ(scalar_type(*root->entries[0].second), ScalarType::integer);
  EXPECT_EQ(scalar_type(*root->entries[1].second), ScalarType::string);  // quoted "1"
  const SourceNode& list = *root->entries[2].second;
  EXPECT_EQ(list.line, 3);
  EXPECT_EQ(list.column, 4);
  ASSERT_EQ(list.items.size(), 4u);
  EXPECT_EQ(scalar_type(*list.items[0]), ScalarType::string);
  EXPECT_EQ(scalar_type(*list.items[1]), ScalarType::number);
  EXPECT_EQ(scalar_type(*list.items[2]), ScalarType::boolean);
  EXPECT_EQ(scalar_type(*list.items[3]), ScalarType::null);
  EXPECT_EQ(list.items[1]->column, 8);
  EXPECT_EQ(to_compact_json(list), "[\"x\",2.5,true,null]");
  EXPECT_EQ(to_compact_json(*root->entries[1].second), "\"1\"");
}

TEST(SourceTree, ScalarTypesFollowJsonNotYaml11) {
  const auto root = parse_source_tree("[yes, True, 0x10, +7, -3, .5, 1e3, 1.5e-2, 007, 1_000]", "t.yaml");
  const auto type = [&](std::size_t i) { return scalar_type(*root->items[i]); };
  EXPECT_EQ(type(0), ScalarType::string);
  EXPECT_EQ(type(1), ScalarType::string);
  EXPECT_EQ(type(2), ScalarType::string);
  EXPECT_EQ(type(3), ScalarType::integer);
  EXPECT_EQ(type(4), ScalarType::integer);
  EXPECT_EQ(type(5), ScalarType::number);
  EXPECT_EQ(type(6), ScalarType::number);
  EXPECT_EQ(type(7), ScalarType::number);
  EXPECT_EQ(type(8), ScalarType::integer);
  EXPECT_EQ(type(9), ScalarType::string);
  EXPECT_EQ(to_compact_json(*root->items[3]), "7");
  EXPECT_EQ(to_compact_json(*root->items[6]), "1000.0");
}

TEST(SourceTree, AliasesShareTheAnchoredValue) {
  const auto root = parse_source_tree("a: &x [1, 2]\nb: *x\n", "t.yaml");
  const SourceNode& b = *root->entries[1].second;
  EXPECT_EQ(b.kind, SourceNode::Kind::sequence);
  EXPECT_EQ(b.line, 2);  // where the alias is written
  EXPECT_EQ(b.column, 4);
  EXPECT_EQ(to_compact_json(b), "[1,2]");
  EXPECT_EQ(root->weight, 1u + 1 + 3 + 1 + 3);
}

TEST(SourceTree, RejectsNonScalarKeys) {
  try {
    parse_source_tree("? [1, 2]\n: x\n", "t.yaml");
    FAIL() << "expected a InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "t.yaml:1:3: map keys must be strings");
  }
}

// --filter's expressions (RE2): linear in the name, so a 1,000,000-character name is searched on
// any stack (std::regex recursed per character and overflowed from about 30,000).
TEST(NameRegex, SearchesLongNamesInLinearTime) {
  const std::string name = std::string(1000000, 'x') + "/separable";
  EXPECT_TRUE(NameRegex(".*", "--filter").search(name));
  EXPECT_TRUE(NameRegex("^x+/sep", "--filter").search(name));
  EXPECT_TRUE(NameRegex("(x|y)*/separable$", "--filter").search(name));
  EXPECT_FALSE(NameRegex("^(x*)*$", "--filter").search(name));               // catastrophic for a backtracking engine
  EXPECT_TRUE(NameRegex("sep", "--filter").search("vnet-block/separable"));  // searched anywhere, as grep
  EXPECT_FALSE(NameRegex("^sep", "--filter").search("vnet-block/separable"));
  EXPECT_TRUE(NameRegex("caf\u00e9", "--filter").search("caf\u00e9/standard"));
}

TEST(NameRegex, ABadExpressionNamesTheFlag) {
  for (const char* bad : {"(", "a{2,1}", "(?=a)b", "(a)\\1", "caf\xe9"}) {
    try {
      NameRegex re(bad, "--filter");
      ADD_FAILURE() << bad << " compiled";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("command line: --filter: not a regular expression: \"", 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace convbench
