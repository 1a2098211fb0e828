#include "explain/explanation_output.hpp"

#include <sstream>

#include "util/markup_escape.hpp"
#include "util/text_table.hpp"

namespace convbench {
namespace {

enum class Style { text, markdown, html };

std::string opt_fixed(const std::optional<double>& v, int decimals) { return v ? format_fixed(*v, decimals) : "-"; }
std::string opt_percent(const std::optional<double>& v) { return v ? format_fixed(*v * 100.0, 0) + "%" : "-"; }

std::string headline(const VariantExplanation& v, const BlockExplanation& b) {
  const VariantFacts& f = v.facts;
  std::string s = f.variant + (f.variant == b.baseline ? " (base)" : "") + ": " + (f.training ? "step " : "forward ") +
                  (f.time_ms ? format_significant(*f.time_ms, 4) + " ms" : "not timed") + ", " +
                  format_significant(static_cast<double>(f.flops) / 1e9, 4) + " GFLOP (" +
                  format_significant(static_cast<double>(f.macs) / 1e9, 4) + " GMAC), peak " +
                  format_mib(f.memory.measured_peak_bytes.value_or(f.memory.peak_bytes)) +
                  (f.memory.measured_peak_bytes ? " measured" : " predicted");
  if (f.training) s += ", saved " + format_mib(f.memory.saved_bytes);
  if (!f.trust.empty() && f.trust != "ok") s += " [" + f.trust + "]";
  return s;
}

// The limits of another GPU (--limits NAME) that did not run these rows; nullptr otherwise.
const DeviceLimits* other_device_limits(const Explanation& e) {
  return e.limits && e.limits->other_device ? &*e.limits : nullptr;
}

// "of floor" against this device's limits; on another GPU's, that GPU's floor itself (ms), as no
// time measured here is compared with it.
TextTable op_table(const VariantFacts& f, const DeviceLimits* other) {
  TextTable t;
  t.header = {"op",     "kind",  "ms",
              "share",  "GFLOP", "MB",
              "FLOP/B", "bound", other ? "floor on " + other->datasheet + " (ms)" : std::string("of floor"),
              "saved"};
  t.right_aligned = {false, false, true, true, true, true, true, false, true, true};
  for (const OpFacts& o : f.ops)
    t.rows.push_back({o.name, o.kind, opt_fixed(o.time_ms, 3), opt_percent(o.time_share),
                      format_fixed(static_cast<double>(o.flops) / 1e9, 3),
                      format_fixed(static_cast<double>(o.bytes) / 1e6, 1), format_significant(o.intensity(), 2),
                      o.bound == Bound::unknown ? "-" : to_string(o.bound),
                      other ? (o.floor_ms ? format_significant(*o.floor_ms, 3) : "-") : opt_percent(o.of_floor),
                      o.saved_bytes > 0 ? format_mib(o.saved_bytes) : "-"});
  return t;
}

// The footer's clause on the floor column.
std::string floor_legend(const Explanation& e) {
  if (const DeviceLimits* other = other_device_limits(e))
    return "floor on " + other->datasheet + " (ms): max(FLOP / peak, bytes / bandwidth) with " + other->datasheet +
           "'s datasheet limits, every FLOP at its dense peak and every byte moved once at its full bandwidth: a "
           "lower bound on that GPU, not a prediction of its time; these rows ran on " +
           e.device + ", and no time measured here is compared with it";
  return "of floor: max(FLOP / peak, bytes / bandwidth) over the measured time (over 100%: the op ran faster than "
         "the floor these limits allow, so they are too low; a memory-bound op may also have found its data in a "
         "cache)";
}

// A network's cost by stage (explain/stage_breakdown.hpp), with each stage's share of the totals.
TextTable stage_table(const VariantFacts& f) {
  TextTable t;
  t.header = {"stage", "ops", "params", "share", "GMAC", "share", "saved", "share", "ms", "time share"};
  t.right_aligned = {false, true, true, true, true, true, true, true, true, true};
  auto share = [](int64_t part, int64_t whole) {
    return whole > 0 ? format_fixed(100.0 * static_cast<double>(part) / static_cast<double>(whole), 0) + "%"
                     : std::string("-");
  };
  for (const StageFacts& s : f.stages)
    t.rows.push_back({s.name, std::to_string(s.ops), format_count(s.params), share(s.params, f.params),
                      format_fixed(static_cast<double>(s.macs) / 1e9, 3), share(s.macs, f.macs),
                      f.training ? format_mib(s.saved_bytes) : "-",
                      f.training ? share(s.saved_bytes, f.memory.saved_bytes) : "-", opt_fixed(s.time_ms, 3),
                      opt_percent(s.time_share)});
  return t;
}

TextTable saved_table(const VariantFacts& f) {
  TextTable t;
  t.header = {"saved tensor", "bytes", "kept by"};
  t.right_aligned = {false, true, false};
  for (const SavedTensorFacts& s : f.memory.saved) {
    std::string by;
    for (size_t i = 0; i < s.saved_by.size(); ++i) by += (i ? ", " : "") + s.saved_by[i];
    t.rows.push_back({s.what, s.counted ? format_bytes(s.bytes) : "(input, not counted)", by});
  }
  return t;
}

std::string at_peak_line(const VariantFacts& f) {
  std::string s = "at the peak";
  if (!f.memory.peak_op.empty()) s += " (" + f.memory.peak_phase + " of " + f.memory.peak_op + ")";
  s += ":";
  bool first = true;
  for (int c = 0; c < kMemoryCategoryCount; ++c) {
    const int64_t bytes = f.memory.at_peak[static_cast<size_t>(c)];
    if (bytes <= 0) continue;
    s += std::string(first ? " " : ", ") + std::string(to_string(static_cast<MemoryCategory>(c))) + " " +
         format_bytes(bytes);
    first = false;
  }
  return s;
}

std::string render(const Explanation& e, Style style) {
  std::ostringstream out;
  auto esc = [&](const std::string& s) {
    return style == Style::html ? html_escape(s) : style == Style::markdown ? markdown_escape(s) : printable(s);
  };
  auto table = [&](const TextTable& t) {
    return style == Style::html       ? t.render_html()
           : style == Style::markdown ? t.render_markdown()
                                      : t.render_terminal();
  };
  auto heading = [&](int level, const std::string& s) {
    if (style == Style::html)
      out << "<h" << level << ">" << esc(s) << "</h" << level << ">\n";
    else if (style == Style::markdown)
      out << std::string(static_cast<size_t>(level), '#') << " " << esc(s) << "\n\n";
    else
      out << s << "\n" << std::string(std::min<size_t>(s.size(), 100), level == 2 ? '=' : '-') << "\n";
  };
  auto para = [&](const std::string& s) {
    if (style == Style::html)
      out << "<p>" << esc(s) << "</p>\n";
    else
      out << esc(s) << "\n\n";
  };
  auto bullets = [&](const std::vector<std::string>& items) {
    if (style == Style::html) {
      out << "<ul>\n";
      for (const std::string& s : items) out << "<li>" << esc(s) << "</li>\n";
      out << "</ul>\n";
    } else {
      for (const std::string& s : items) out << "- " << esc(s) << "\n";
      out << "\n";
    }
  };
  // The doubt, when there is one, right under the limits it is about (a line of its own, which
  // readers of warnings find by its "warning:").
  const std::string doubt = limits_doubt_line(e);
  if (style == Style::html)
    out << "<p>" << esc(limits_line(e)) << (doubt.empty() ? "" : "<br>\n" + esc(doubt)) << "</p>\n";
  else
    out << esc(limits_line(e)) << "\n" << (doubt.empty() ? "" : esc(doubt) + "\n") << "\n";
  bool any_stages = false;
  for (const BlockExplanation& b : e.blocks)
    for (const VariantExplanation& v : b.variants) any_stages = any_stages || !v.facts.stages.empty();
  for (const BlockExplanation& b : e.blocks) {
    heading(2, b.block + (b.point_label.empty() ? "" : " [" + b.point_label + "]") + " on " + e.device);
    for (const VariantExplanation& v : b.variants) {
      heading(3, headline(v, b));
      bullets(v.sentences);
      if (!v.facts.stages.empty()) out << table(stage_table(v.facts)) << "\n";
      out << table(op_table(v.facts, other_device_limits(e))) << "\n";
      if (v.facts.training && !v.facts.memory.saved.empty()) out << table(saved_table(v.facts)) << "\n";
      para(at_peak_line(v.facts));
    }
  }
  para(
      "ms: the op's median forward (+ backward in training) time with --per-op, the device synchronised around it; "
      "share: of the variant's median step (forward pass in inference). GFLOP, MB: counted work and minimum traffic "
      "of the op (every tensor it reads or writes, once); 1 GMAC = 2 GFLOP of multiply-adds. FLOP/B: arithmetic "
      "intensity; bound: compute when it is at or above the ridge point (peak FLOP/s over bandwidth), else memory; " +
      floor_legend(e) +
      ". saved: bytes this op keeps for backward (a tensor kept by several ops counts once, for "
      "the first). " +
      std::string(any_stages ? "A network's stage table adds its ops up by stage (the first part of their names), "
                               "with each stage's share of the variant's params, GMAC, saved bytes and headline time; "
                               "a stage shows no time unless every op in it was timed. "
                             : "") +
      "Sentences are generated from these figures by fixed rules (lib/explain/README.md, \"Reading an explanation\").");
  return out.str();
}

nlohmann::json op_json(const OpFacts& o) {
  nlohmann::json j = {{"name", o.name},
                      {"kind", o.kind},
                      {"macs", o.macs},
                      {"flops", o.flops},
                      {"bytes", o.bytes},
                      {"intensity_flop_per_byte", o.intensity()},
                      {"saved_bytes", o.saved_bytes},
                      {"params", o.params}};
  j["time_ms"] = o.time_ms ? nlohmann::json(*o.time_ms) : nlohmann::json(nullptr);
  j["time_share"] = o.time_share ? nlohmann::json(*o.time_share) : nlohmann::json(nullptr);
  j["bound"] = o.bound == Bound::unknown ? nlohmann::json(nullptr) : nlohmann::json(to_string(o.bound));
  j["floor_ms"] = o.floor_ms ? nlohmann::json(*o.floor_ms) : nlohmann::json(nullptr);
  j["of_floor"] = o.of_floor ? nlohmann::json(*o.of_floor) : nlohmann::json(nullptr);
  return j;
}

nlohmann::json variant_json(const VariantExplanation& v) {
  const VariantFacts& f = v.facts;
  nlohmann::json j = {{"variant", f.variant},
                      {"kind", f.kind},
                      {"baseline", f.is_baseline},
                      {"mode", f.training ? "train" : "infer"},
                      {"dtype", f.dtype},
                      {"layout", f.layout},
                      {"trust", f.trust},
                      {"params", f.params},
                      {"macs", f.macs},
                      {"flops", f.flops},
                      {"bytes", f.bytes}};
  j["time_ms"] = f.time_ms ? nlohmann::json(*f.time_ms) : nlohmann::json(nullptr);
  j["ops"] = nlohmann::json::array();
  for (const OpFacts& o : f.ops) j["ops"].push_back(op_json(o));
  if (!f.stages.empty()) {
    j["stages"] = nlohmann::json::array();
    for (const StageFacts& s : f.stages) {
      nlohmann::json js = {{"name", s.name}, {"ops", s.ops},     {"params", s.params},
                           {"macs", s.macs}, {"flops", s.flops}, {"saved_bytes", s.saved_bytes}};
      js["time_ms"] = s.time_ms ? nlohmann::json(*s.time_ms) : nlohmann::json(nullptr);
      js["time_share"] = s.time_share ? nlohmann::json(*s.time_share) : nlohmann::json(nullptr);
      j["stages"].push_back(js);
    }
  }
  if (f.precision.precision != "plain")  // an explanation of a plain variant keeps its form
    j["precision"] = {
        {"precision", f.precision.precision},
        {"low_dtype", f.precision.low_dtype},
        {"low_ops", f.precision.low_ops},
        {"casts", f.precision.casts},
        {"saved_weight_copy_bytes", f.precision.saved_weight_copy_bytes},
        {"loss_scaled_gradient_bytes", f.precision.loss_scaled_gradient_bytes},
        {"cast_ms", f.precision.cast_ms ? nlohmann::json(*f.precision.cast_ms) : nlohmann::json(nullptr)}};
  if (f.precision.plain)
    j["precision"]["plain"] = {{"saved_bytes", f.precision.plain->saved_bytes},
                               {"peak_bytes", f.precision.plain->peak_bytes},
                               {"bytes", f.precision.plain->bytes}};
  j["memory_policy"] = {{"policy", f.policy.policy},
                        {"in_place", f.policy.in_place},
                        {"not_in_place", f.policy.not_in_place},
                        {"fused", f.policy.fused},
                        {"segments", f.policy.segments},
                        {"rerun_ops", f.policy.rerun_ops},
                        {"recompute_flops", f.policy.recompute_flops}};
  nlohmann::json mem = {{"peak_bytes_predicted", f.memory.peak_bytes},
                        {"peak_op", f.memory.peak_op},
                        {"peak_phase", f.memory.peak_phase},
                        {"saved_bytes", f.memory.saved_bytes}};
  mem["peak_bytes_measured"] =
      f.memory.measured_peak_bytes ? nlohmann::json(*f.memory.measured_peak_bytes) : nlohmann::json(nullptr);
  mem["at_peak"] = nlohmann::json::object();
  for (int c = 0; c < kMemoryCategoryCount; ++c)
    mem["at_peak"][std::string(to_string(static_cast<MemoryCategory>(c)))] = f.memory.at_peak[static_cast<size_t>(c)];
  mem["saved"] = nlohmann::json::array();
  for (const SavedTensorFacts& s : f.memory.saved)
    mem["saved"].push_back({{"what", s.what},
                            {"producer", s.producer},
                            {"saved_by", s.saved_by},
                            {"bytes", s.bytes},
                            {"counted", s.counted}});
  j["memory"] = mem;
  nlohmann::json l = {{"op_runs", f.launches.op_runs}};
  l["op_time_sum_ms"] =
      f.launches.op_time_sum_ms ? nlohmann::json(*f.launches.op_time_sum_ms) : nlohmann::json(nullptr);
  l["outside_ops_share"] =
      f.launches.outside_ops_share ? nlohmann::json(*f.launches.outside_ops_share) : nlohmann::json(nullptr);
  j["launches"] = l;
  j["time_by_kind"] = nlohmann::json::array();
  for (const KindDelta& k : v.by_kind)
    j["time_by_kind"].push_back(
        {{"kind", k.kind}, {"ops", k.ops}, {"base_ops", k.base_ops}, {"ms", k.ms}, {"base_ms", k.base_ms}});
  j["main_ops"] = v.main_ops;
  j["sentences"] = v.sentences;
  return j;
}

}  // namespace

std::string limits_line(const Explanation& e) {
  if (!e.limits)
    return "Device limits: unknown (no calibration for this device and dtype; give --peak-flops and --bandwidth), "
           "so no op is called compute- or memory-bound.";
  const DeviceLimits& l = *e.limits;
  const std::string line = "Device limits" + (l.other_device ? " of " + l.datasheet : std::string()) + ": peak " +
                           format_significant(l.peak_flops / 1e9, 4) + " GFLOP/s, bandwidth " +
                           format_significant(l.bandwidth_bytes_per_s / 1e9, 4) + " GB/s, ridge point " +
                           format_significant(l.peak_flops / l.bandwidth_bytes_per_s, 3) + " FLOP/B (" + l.source +
                           ")" + (e.limits_dtype.empty() ? "" : ", for " + e.limits_dtype + " rows") + ".";
  if (!l.other_device) return line;
  return line + " Floor on " + l.datasheet +
         " from its datasheet: a lower bound, not a prediction; these rows ran on " + e.device +
         ", and no time measured here is compared with it.";
}

std::string limits_doubt_line(const Explanation& e) {
  if (!e.limits || e.limits->doubt.empty()) return "";
  return "warning: these limits were " + e.limits->doubt +
         ", so every floor below is too long and every op looks nearer its floor than it is; measure them again on "
         "a quiet machine (--calibrate).";
}

std::string explanation_text(const Explanation& e) { return render(e, Style::text); }
std::string explanation_markdown(const Explanation& e) { return render(e, Style::markdown); }

std::string explanation_html(const Explanation& e) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>convbench explain</title>\n"
         "<style>body{font-family:sans-serif;max-width:70em;margin:1em auto}"
         "table{border-collapse:collapse;display:block;overflow-x:auto;max-width:100%}"
         "td,th{padding:2px 8px;border-bottom:1px solid #ddd}td{text-align:right}td:first-child{text-align:left}"
         "</style></head><body>\n<h1>Why: what each variant's time and memory are made of</h1>\n" +
         render(e, Style::html) + "</body></html>\n";
}

nlohmann::json explanation_json(const Explanation& e) {
  nlohmann::json j = {{"schema", kExplanationSchema}, {"device", e.device}};
  if (e.limits) {
    j["device_limits"] = device_limits_json(*e.limits);
    j["device_limits"]["ridge_flop_per_byte"] = e.limits->peak_flops / e.limits->bandwidth_bytes_per_s;
    j["device_limits"]["dtype"] = e.limits_dtype;
  } else
    j["device_limits"] = nullptr;
  j["blocks"] = nlohmann::json::array();
  for (const BlockExplanation& b : e.blocks) {
    nlohmann::json jb = {{"block", b.block}, {"point", b.point_label}, {"baseline", b.baseline}};
    jb["variants"] = nlohmann::json::array();
    for (const VariantExplanation& v : b.variants) jb["variants"].push_back(variant_json(v));
    j["blocks"].push_back(jb);
  }
  return j;
}

}  // namespace convbench
