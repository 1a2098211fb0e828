// Plans, shards and merges (lib/sweep, pipeline/shard_run): stable item ids and plan hashes,
// balanced shards that cover every item once, --shard parsing with its environment fallback,
// shard files that round-trip, refuse tampering and name their plan file, and every merge refusal.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>

#include <cstdlib>

#include "cli_harness.hpp"
#include "pipeline/analyze.hpp"
#include "pipeline/shard_run.hpp"
#include "spec/spec_loader.hpp"
#include "sweep/merge.hpp"
#include "sweep/shard_file.hpp"
#include "sweep/slurm_script.hpp"
#include "sweep/slurm_submit.hpp"
#include "util/input_error.hpp"

namespace convbench {
namespace {

const char* kSpec = R"(
name: plan-test
sweep:
  batch: [1, 2]
blocks:
  - name: a
    in_channels: 8
    out_channels: 8
    size: 8
    variants: [standard, {kind: bottleneck, ratio: 2}, separable]
  - name: b
    in_channels: 4
    out_channels: 8
    size: 6
    variants: [standard, {kind: grouped, groups: 2}]
)";

Plan plan_from_text(const std::string& text) { return plan_of(parse_spec_text(text, "plan.yaml")); }

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(Plan, SameSpecGivesSameIdsAndHash) {
  const Plan a = plan_from_text(kSpec), b = plan_from_text(kSpec);
  ASSERT_EQ(a.items.size(), 10u);  // (3 + 2 variants) x 2 batches
  EXPECT_EQ(a.hash, b.hash);
  std::set<std::string> ids;
  for (size_t i = 0; i < a.items.size(); ++i) {
    EXPECT_EQ(a.items[i].id, b.items[i].id);
    EXPECT_EQ(a.items[i].id.size(), 16u);
    ids.insert(a.items[i].id);
  }
  EXPECT_EQ(ids.size(), a.items.size()) << "ids are unique";
  EXPECT_EQ(a.items[0].block, "a");
  EXPECT_EQ(a.items[0].point_label, "batch=1");
  EXPECT_GT(a.items[0].cost, 1.0);
}

TEST(Plan, AChangedBlockChangesItsItemsIdsAndThePlanHashOnly) {
  const Plan before = plan_from_text(kSpec);
  const Plan after = plan_from_text(replaced(kSpec, "in_channels: 4", "in_channels: 2"));
  EXPECT_NE(before.hash, after.hash);
  ASSERT_EQ(before.items.size(), after.items.size());
  for (size_t i = 0; i < before.items.size(); ++i) {
    if (before.items[i].block == "b")
      EXPECT_NE(before.items[i].id, after.items[i].id) << i;
    else
      EXPECT_EQ(before.items[i].id, after.items[i].id) << i;
  }
}

TEST(Plan, RoundTripsAndRefusesAnEditedItemList) {
  const Plan plan = plan_from_text(kSpec);
  const nlohmann::json doc = nlohmann::json::parse(plan_to_json(plan).dump());
  const Plan read = plan_from_json(doc, "p.json");
  EXPECT_EQ(read.hash, plan.hash);
  ASSERT_EQ(read.items.size(), plan.items.size());
  EXPECT_EQ(read.items[3].id, plan.items[3].id);
  nlohmann::json edited = doc;
  edited["items"].erase(edited["items"].end() - 1);
  try {
    plan_from_json(edited, "p.json");
    FAIL() << "an edited plan was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("does not match the listed items"), std::string::npos) << e.what();
  }
}

Plan synthetic_plan(const std::vector<double>& costs) {
  Plan p;
  for (size_t i = 0; i < costs.size(); ++i) {
    PlanItem item;
    item.id = std::string(15, '0') + std::to_string(i % 10);
    item.block = "b" + std::to_string(i);
    item.variant = "v";
    item.cost = costs[i];
    p.items.push_back(item);
  }
  p.hash = plan_hash_of(p.items);
  return p;
}

TEST(ShardAssignment, EveryItemInExactlyOneShardAndLoadsWithinTheLargestItem) {
  std::vector<double> costs;
  for (int i = 0; i < 37; ++i) costs.push_back(1.0 + (i * 7919 % 23));
  const Plan plan = synthetic_plan(costs);
  const double largest = *std::max_element(costs.begin(), costs.end());
  for (int n = 1; n <= 12; ++n) {
    const std::vector<int> shard_of = assign_shards(plan, n);
    ASSERT_EQ(shard_of.size(), plan.items.size());
    for (int s : shard_of) ASSERT_TRUE(s >= 0 && s < n);
    const std::vector<double> loads = shard_loads(plan, shard_of, n);
    double total = 0;
    for (double l : loads) total += l;
    EXPECT_DOUBLE_EQ(
        total, 37.0 + [&] {
          double extra = 0;
          for (double c : costs) extra += c - 1.0;
          return extra;
        }());
    // Greedy to the least loaded shard: no shard ends more than one item above another.
    EXPECT_LE(*std::max_element(loads.begin(), loads.end()) - *std::min_element(loads.begin(), loads.end()),
              largest + 1e-9)
        << n;
    EXPECT_EQ(shard_of, assign_shards(plan, n)) << "deterministic";
  }
}

TEST(ShardAssignment, BalancesByCostNotByCount) {
  // One expensive item and four cheap ones: the expensive one gets a shard of its own.
  const std::vector<int> shard_of = assign_shards(synthetic_plan({1, 1, 10, 1, 1}), 2);
  EXPECT_EQ(shard_of, (std::vector<int>{1, 1, 0, 1, 1}));
}

// The assignment a plan's shards were run with must not change: the heap gives exactly what the
// scan of every shard's load (the lowest index among the least loaded) gave, ties included.
TEST(ShardAssignment, TheHeapAssignsAsTheScanOfEveryShardDid) {
  std::vector<double> costs;
  for (int i = 0; i < 300; ++i) costs.push_back(i % 3 == 0 ? 1.0 : 1.0 + (i * 7919 % 17) / 8.0);
  const Plan plan = synthetic_plan(costs);
  for (int n : {1, 2, 7, 64, 299, 300, 301}) {
    std::vector<size_t> order(costs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return costs[a] > costs[b]; });
    std::vector<double> load(static_cast<size_t>(n), 0.0);
    std::vector<int> scan(costs.size(), 0);
    for (size_t item : order) {
      const auto least = std::min_element(load.begin(), load.end());
      scan[item] = static_cast<int>(least - load.begin());
      *least += costs[item];
    }
    EXPECT_EQ(assign_shards(plan, n), scan) << n;
  }
}

EnvLookup env(std::map<std::string, std::string> values) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(values));
  return [shared](const char* name) -> const char* {
    const auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

std::string shard_error(const std::string& text, const EnvLookup& lookup) {
  try {
    parse_shard(text, lookup);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ShardOption, ParsesIAndNAndTakesIFromTheEnvironment) {
  const ShardIndex s = parse_shard("2/4", env({}));
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(parse_shard("/4", env({{"SLURM_ARRAY_TASK_ID", "3"}})).index, 3);
  EXPECT_EQ(parse_shard("/4", env({{"JOB_COMPLETION_INDEX", "1"}})).index, 1);
  EXPECT_EQ(parse_shard("/4", env({{"SLURM_ARRAY_TASK_ID", "0"}, {"JOB_COMPLETION_INDEX", "2"}})).index, 0);
  EXPECT_EQ(parse_shard("1/4", env({{"SLURM_ARRAY_TASK_ID", "3"}})).index, 1) << "an explicit I wins";
}

TEST(ShardOption, RefusesBadSyntaxAndBadIndices) {
  for (const std::string bad : {"4/4", "5/4", "0/0", "x/4", "1/x", "-1/4", "1/", "4", "", "1/4/2", " 1/4", "1/+4"}) {
    const std::string e = shard_error(bad, env({}));
    EXPECT_NE(e, "") << bad;
    EXPECT_NE(e.find("--shard"), std::string::npos) << e;
  }
  EXPECT_NE(shard_error("/4", env({})).find("neither is set"), std::string::npos);
  EXPECT_NE(shard_error("/4", env({{"SLURM_ARRAY_TASK_ID", "x"}})).find("SLURM_ARRAY_TASK_ID"), std::string::npos);
  EXPECT_NE(shard_error("/4", env({{"SLURM_ARRAY_TASK_ID", "4"}})).find("not below"), std::string::npos);
  EXPECT_NE(shard_error("/4", env({{"JOB_COMPLETION_INDEX", "-1"}})).find("JOB_COMPLETION_INDEX"), std::string::npos);
}

// Shard files built from the analysis (no runs): rows marked ok on a named device.
struct Sweep {
  Spec spec;
  Plan plan;
  ResultSet analysis;
};

Sweep sweep_of(const std::string& text) {
  Sweep s;
  s.spec = parse_spec_text(text, "plan.yaml");
  s.analysis = analyze_spec(s.spec);
  s.plan = make_plan(s.spec, s.analysis);
  return s;
}

ShardFile shard(const Sweep& s, int index, int count, const std::string& cpu = "Test CPU",
                RunStatus status = RunStatus::ok) {
  ShardFile f;
  f.plan = std::make_shared<const Plan>(s.plan);
  f.shard = {index, count};
  f.results.engine = "convbench test";
  f.results.device = "cpu";
  f.results.provenance = {{"cpu", cpu}, {"convbench_version", "0.1.0"}, {"onednn_version", "3.0.0"}};
  const std::vector<int> shard_of = assign_shards(s.plan, count);
  for (size_t i = 0; i < shard_of.size(); ++i) {
    if (shard_of[i] != index) continue;
    f.items.push_back({i, f.results.rows.size()});
    ResultRow row = s.analysis.rows[i];
    row.device = "cpu";
    row.status = status;
    f.results.rows.push_back(row);
  }
  return f;
}

// Through JSON, as merge reads them.
MergeInput input(const ShardFile& f, const std::string& name) {
  ShardPlans plans;
  return {name, shard_file_from_json(nlohmann::json::parse(shard_file_json(f).dump()), name, plans)};
}

ShardFile read_back(const nlohmann::json& doc, const std::string& name) {
  ShardPlans plans;
  return shard_file_from_json(doc, name, plans);
}

std::string read_error(const nlohmann::json& doc, const std::string& name, ShardPlans& plans) {
  try {
    shard_file_from_json(doc, name, plans);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string merge_error(const std::vector<MergeInput>& inputs, bool allow_mixed = false) {
  try {
    merge_shards(inputs, allow_mixed);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ShardFile, RoundTripsAndRefusesTampering) {
  const Sweep s = sweep_of(kSpec);
  ShardFile f = shard(s, 1, 3);
  f.items.back().row.reset();  // pending
  f.results.rows.pop_back();
  const nlohmann::json doc = nlohmann::json::parse(shard_file_json(f).dump());
  const ShardFile read = read_back(doc, "s.json");
  EXPECT_EQ(read.items.size(), f.items.size());
  EXPECT_FALSE(read.items.back().row.has_value());
  EXPECT_FALSE(shard_complete(read));
  EXPECT_TRUE(shard_complete(shard(s, 1, 3)));

  nlohmann::json wrong_index = doc;
  wrong_index["shard"]["index"] = 2;  // the items are shard 1's
  EXPECT_THROW(read_back(wrong_index, "s.json"), InputError);
  nlohmann::json wrong_row = doc;
  wrong_row["shard"]["items"][0]["row"] = 1;
  EXPECT_THROW(read_back(wrong_row, "s.json"), InputError);
  nlohmann::json wrong_hash = doc;
  wrong_hash["shard"]["plan_hash"] = std::string(64, 'a');
  EXPECT_THROW(read_back(wrong_hash, "s.json"), InputError);
  nlohmann::json no_shard = doc;
  no_shard.erase("shard");
  EXPECT_THROW(read_back(no_shard, "s.json"), InputError);
}

// A shard that names its plan file: the file holds the hash and the path, not the plan; read
// back, it has the plan file's plan; a missing, edited or replaced plan file is refused, located.
TEST(ShardFile, NamesItsPlanFileInsteadOfCarryingIt) {
  const Sweep s = sweep_of(kSpec);
  const std::string dir = testing::temp_path("named-plan");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/shards");
  const std::string plan_path = dir + "/plan.json", shard_path = dir + "/shards/s.json";
  auto write_plan = [&](const nlohmann::ordered_json& plan) { std::ofstream(plan_path) << plan.dump(2); };
  write_plan(plan_to_json(s.plan));
  ShardFile f = shard(s, 1, 3);
  f.plan_file = plan_file_reference(plan_path, shard_path);
  EXPECT_EQ(f.plan_file, "../plan.json");
  const nlohmann::json doc = nlohmann::json::parse(shard_file_json(f).dump());
  EXPECT_FALSE(doc["shard"].contains("plan"));
  EXPECT_EQ(doc["shard"]["plan_file"], "../plan.json");
  EXPECT_EQ(doc["shard"]["schema"], kShardSchema);
  EXPECT_LT(doc.dump().size(), nlohmann::json::parse(shard_file_json(shard(s, 1, 3)).dump()).dump().size());

  ShardPlans plans;
  const ShardFile read = shard_file_from_json(doc, shard_path, plans);
  EXPECT_EQ(read.plan->hash, s.plan.hash);
  EXPECT_EQ(read.plan->items.size(), s.plan.items.size());
  EXPECT_EQ(read.plan_file, "../plan.json");
  // A second file of the plan shares the copy: the plan file is read once.
  std::filesystem::remove(plan_path);
  EXPECT_EQ(shard_file_from_json(doc, shard_path, plans).plan.get(), read.plan.get());

  ShardPlans fresh;
  std::string e = read_error(doc, shard_path, fresh);  // the plan file is gone
  EXPECT_NE(e.find(shard_path), std::string::npos) << e;
  EXPECT_NE(e.find("shard.plan_file"), std::string::npos) << e;
  EXPECT_NE(e.find("cannot be read"), std::string::npos) << e;
  nlohmann::ordered_json edited = plan_to_json(s.plan);
  edited["items"][0]["id"] = "0123456789abcdef";
  write_plan(edited);
  e = read_error(doc, shard_path, fresh);
  EXPECT_EQ(e.find(dir + "/shards/../plan.json: plan_hash: does not match the listed items"), 0u) << e;
  EXPECT_NE(e.find("the plan file of " + shard_path), std::string::npos) << e;
  write_plan(plan_to_json(sweep_of(replaced(kSpec, "size: 6", "size: 7")).plan));
  e = read_error(doc, shard_path, fresh);
  EXPECT_NE(e.find("shard.plan_file"), std::string::npos) << e;
  EXPECT_NE(e.find("the plan file was replaced"), std::string::npos) << e;
  nlohmann::json not_a_path = doc;
  not_a_path["shard"]["plan_file"] = 7;
  EXPECT_NE(read_error(not_a_path, shard_path, plans).find("shard.plan_file: expected the plan file's path"),
            std::string::npos);
  // The older schema always carried its plan, and is still read.
  nlohmann::json old = nlohmann::json::parse(shard_file_json(shard(s, 1, 3)).dump());
  old["shard"]["schema"] = kShardSchemaCarrying;
  EXPECT_EQ(read_back(old, "old.json").plan->hash, s.plan.hash);
  std::filesystem::remove_all(dir);
}

TEST(Merge, AllShardsGiveEveryItemOnceInPlanOrder) {
  const Sweep s = sweep_of(kSpec);
  std::vector<MergeInput> inputs;
  for (int i = 3; i >= 0; --i) inputs.push_back(input(shard(s, i, 4), "s" + std::to_string(i)));
  const MergeOutcome m = merge_shards(inputs, false);
  EXPECT_TRUE(m.missing.empty());
  ASSERT_EQ(m.results.rows.size(), s.plan.items.size());
  for (size_t i = 0; i < m.results.rows.size(); ++i) {
    EXPECT_EQ(m.results.rows[i].block, s.plan.items[i].block);
    EXPECT_EQ(m.results.rows[i].variant, s.plan.items[i].variant);
    EXPECT_EQ(m.results.rows[i].params, s.analysis.rows[i].params);
  }
  const nlohmann::json doc = merged_results_json(m);
  EXPECT_EQ(doc["schema"], kResultsSchema);
  EXPECT_EQ(doc["plan"]["plan_hash"], s.plan.hash);
  EXPECT_EQ(doc["plan"]["covered"], s.plan.items.size());
}

TEST(Merge, MissingItemsNameTheShardsToRerun) {
  const Sweep s = sweep_of(kSpec);
  const MergeOutcome m = merge_shards({input(shard(s, 0, 4), "s0"), input(shard(s, 3, 4), "s3")}, false);
  const std::vector<int> shard_of = assign_shards(s.plan, 4);
  EXPECT_EQ(m.rerun, (std::vector<int>{1, 2}));
  EXPECT_EQ(m.missing.size(), static_cast<size_t>(std::count_if(shard_of.begin(), shard_of.end(),
                                                                [](int x) { return x == 1 || x == 2; })));
  EXPECT_EQ(m.results.rows.size() + m.missing.size(), s.plan.items.size());
  EXPECT_EQ(merged_results_json(m)["plan"]["rerun_shards"], nlohmann::json({1, 2}));
}

TEST(Merge, RefusesShardsOfAnotherPlan) {
  const Sweep a = sweep_of(kSpec);
  const Sweep b = sweep_of(replaced(kSpec, "size: 6", "size: 7"));
  const std::string e = merge_error({input(shard(a, 0, 2), "a0.json"), input(shard(b, 1, 2), "b1.json")});
  EXPECT_NE(e.find("b1.json"), std::string::npos) << e;
  EXPECT_NE(e.find("different plans"), std::string::npos) << e;
  EXPECT_NE(merge_error({input(shard(a, 0, 2), "a0"), input(shard(a, 1, 3), "a1")}).find("the same N"),
            std::string::npos);
}

TEST(Merge, RefusesAnItemDoneTwice) {
  const Sweep s = sweep_of(kSpec);
  const std::string e = merge_error(
      {input(shard(s, 0, 2), "first.json"), input(shard(s, 1, 2), "x"), input(shard(s, 0, 2), "again.json")});
  EXPECT_NE(e.find("again.json"), std::string::npos) << e;
  EXPECT_NE(e.find("is also done in first.json"), std::string::npos) << e;
}

TEST(Merge, ALaterSuccessReplacesAnEarlierFailure) {
  const Sweep s = sweep_of(kSpec);
  const MergeOutcome m = merge_shards({input(shard(s, 0, 2, "Test CPU", RunStatus::oom), "failed.json"),
                                       input(shard(s, 1, 2), "one.json"), input(shard(s, 0, 2), "retry.json")},
                                      false);
  EXPECT_TRUE(m.missing.empty());
  for (const ResultRow& r : m.results.rows) EXPECT_EQ(r.status, RunStatus::ok);
  EXPECT_FALSE(m.notes.empty());
  // A failure after a success does not replace it.
  const MergeOutcome kept = merge_shards({input(shard(s, 0, 2), "ok.json"), input(shard(s, 1, 2), "one.json"),
                                          input(shard(s, 0, 2, "Test CPU", RunStatus::error), "later.json")},
                                         false);
  for (const ResultRow& r : kept.results.rows) EXPECT_EQ(r.status, RunStatus::ok);
}

// An item whose only row failed is in the merged file but not covered, and its shard is to rerun,
// as `convbench slurm` (shard_complete) would rerun it.
TEST(Merge, AFailedOnlyItemIsUnsettledAndItsShardIsRerun) {
  const Sweep s = sweep_of(kSpec);
  const ShardFile failed = shard(s, 0, 2, "Test CPU", RunStatus::error);
  const MergeOutcome m = merge_shards({input(failed, "failed.json"), input(shard(s, 1, 2), "one.json")}, false);
  EXPECT_TRUE(m.missing.empty());
  EXPECT_EQ(m.unsettled.size(), failed.items.size());
  EXPECT_EQ(m.rerun, std::vector<int>{0});
  EXPECT_FALSE(shard_complete(failed));
  const nlohmann::json doc = merged_results_json(m);
  EXPECT_EQ(doc["plan"]["covered"].get<size_t>(), s.plan.items.size() - failed.items.size());
  EXPECT_EQ(doc["plan"]["unsettled"].size(), failed.items.size());
}

TEST(Merge, RefusesMixedDevicesUnlessAllowedAndThenSaysWhichRowsRanWhere) {
  const Sweep s = sweep_of(kSpec);
  const std::vector<MergeInput> inputs = {input(shard(s, 0, 2, "CPU A"), "a.json"),
                                          input(shard(s, 1, 2, "CPU B"), "b.json")};
  const std::string e = merge_error(inputs);
  EXPECT_NE(e.find("another device"), std::string::npos) << e;
  EXPECT_NE(e.find("CPU A"), std::string::npos) << e;
  EXPECT_NE(e.find("--allow-mixed"), std::string::npos) << e;
  const MergeOutcome m = merge_shards(inputs, true);
  EXPECT_TRUE(m.mixed);
  EXPECT_EQ(m.results.rows.size(), s.plan.items.size());
  const nlohmann::json doc = merged_results_json(m);
  ASSERT_EQ(doc["plan"]["sources"].size(), 2u);
  EXPECT_EQ(doc["plan"]["sources"][1]["ran"]["device"], "cpu (CPU B)");
  EXPECT_FALSE(doc["plan"]["sources"][1]["rows"].empty());
  bool said = false;
  for (const std::string& n : m.notes) said = said || n.find("ran on cpu (CPU B)") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(SlurmScript, QuotesValuesAndRefusesWhatBreaksADirective) {
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(array_indices({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(array_indices({2}), "2");
  EXPECT_EQ(array_indices({0, 2, 3, 4, 7}), "0,2-4,7");
  EXPECT_THROW(check_sbatch_value("--partition", "gpu\n#SBATCH --uid=0"), InputError);
  EXPECT_THROW(check_sbatch_path("--dir", "/tmp/a b"), InputError);
  EXPECT_NO_THROW(check_sbatch_value("--gres", "gpu:a100:1"));
  SlurmSweepFiles files{"/bin/convbench", "/s/spec.yaml", "/d"};
  const std::string script = shard_array_script(files, std::string(64, 'a'), 4, {1, 3}, {"p1", "gpu:1", "1:00:00"},
                                                {"--device", "cpu'; rm -rf /"});
  EXPECT_NE(script.find("#SBATCH --array=1,3\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --partition=p1\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --gres=gpu:1\n"), std::string::npos);
  EXPECT_NE(script.find("--shard /4"), std::string::npos);
  EXPECT_NE(script.find("'cpu'\\''; rm -rf /'"), std::string::npos) << "a flag stays one quoted word";
  EXPECT_NE(merge_job_script(files, std::string(64, 'a'), 4, {}).find("merge \"${shards[@]}\" -o '/d/results.json'"),
            std::string::npos);
}

TEST(SlurmSubmit, ReadsSbatchParsableOutput) {
  EXPECT_EQ(parse_sbatch_parsable("1234\n"), "1234");
  EXPECT_EQ(parse_sbatch_parsable("77;cluster\n"), "77");
  EXPECT_THROW(parse_sbatch_parsable("Submitted batch job 5\n"), std::runtime_error);
  EXPECT_THROW(parse_sbatch_parsable(""), std::runtime_error);
}

// The flags after -- go to every shard's compare: a typo in one is refused before anything is
// written or submitted, not found by every job of the array.
TEST(SlurmCli, ATypoInTheShardsFlagsIsRefusedBeforeSubmitting) {
  using testing::run_cli;
  const std::string spec = testing::source_path("tests/data/specs/sweep-small.yaml");
  const std::string dir = testing::temp_path("slurm-typo");
  std::filesystem::remove_all(dir);
  for (const std::string flags : {"--device cdua", "--min-time x", "--no-such-flag"}) {
    const auto r = run_cli("slurm " + spec + " --shards 2 --dry-run --dir " + dir + " -- " + flags);
    EXPECT_EQ(r.exit_code, 2) << flags << r.err;
    EXPECT_NE(r.err.find("the flags after -- go to every shard"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir)) << flags;
  }
}

// Bad --shard values and a plan of another spec: exit 2, one line, nothing written.
TEST(ShardCli, BadShardsAndForeignPlansExit2WithoutOutput) {
  using testing::run_cli;
  const std::string spec = testing::source_path("tests/data/specs/sweep-small.yaml");
  const std::string out = testing::temp_path("shard.json");
  std::filesystem::remove(out);
  for (const std::string shard : {"4/4", "0/0", "x/2", "1/two", "''"}) {  // '': an unset variable
    const auto r = run_cli("compare " + spec + " --device cpu --shard " + shard + " --json " + out);
    EXPECT_EQ(r.exit_code, 2) << shard << r.err;
    EXPECT_NE(r.err.find("--shard"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // /N without the variables, and with garbage in them (ctest sets neither).
  ::unsetenv("SLURM_ARRAY_TASK_ID");
  ::unsetenv("JOB_COMPLETION_INDEX");
  auto r = run_cli("compare " + spec + " --device cpu --shard /2 --json " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("neither is set"), std::string::npos) << r.err;
  for (const char* garbage : {"one", "2", "-1", ""}) {
    ::setenv("SLURM_ARRAY_TASK_ID", garbage, 1);
    r = run_cli("compare " + spec + " --device cpu --shard /2 --json " + out);
    ::unsetenv("SLURM_ARRAY_TASK_ID");
    EXPECT_EQ(r.exit_code, 2) << garbage;
    EXPECT_NE(r.err.find("SLURM_ARRAY_TASK_ID"), std::string::npos) << r.err;
  }
  r = run_cli("compare " + spec + " --device cpu --shard 1/2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("needs --json FILE"), std::string::npos) << r.err;
  // A plan of another spec.
  const std::string other_plan = testing::temp_path("other-plan.json");
  r = run_cli("plan " + testing::source_path("configs/seed-blocks.yaml") + " -o " + other_plan);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli("compare " + spec + " --device cpu --plan " + other_plan + " --shard 0/2 --json " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the plan is of another spec"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  std::filesystem::remove(other_plan);
}

}  // namespace
}  // namespace convbench
