#include "report/summary_tables.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>

#include "report/fold_notes.hpp"
#include "report/layout_table.hpp"
#include "report/network_vs_block.hpp"
#include "report/networks_side_by_side.hpp"
#include "report/policy_table.hpp"
#include "report/result_columns.hpp"
#include "util/markup_escape.hpp"

#include "report/run_warnings.hpp"
#include "results/trust.hpp"
#include "spec/spec_field.hpp"
#include "util/join.hpp"

namespace convbench {
namespace {

// Markdown's escaping would show a line break as "\n": a note there is one paragraph line.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

bool any_measured(const std::vector<const ResultRow*>& group) {
  for (const ResultRow* r : group)
    if (!r->device.empty()) return true;
  return false;
}

bool any_graph(const std::vector<const ResultRow*>& group) {
  for (const ResultRow* r : group)
    if (ran_with_graph(*r)) return true;
  return false;
}

// The input shapes of a swept group in one: a dim that varies lists its values, in sweep order
// ("{2,16}x16x32x32x32"). Shorter than naming the first point's shape and its label, so a
// swept table's title stays within the compact table's 100 columns.
std::string swept_shape_text(const std::vector<const ResultRow*>& group) {
  const std::vector<int64_t>& first = group.front()->input_shape;
  std::string s;
  for (size_t d = 0; d < first.size(); ++d) {
    std::vector<int64_t> values;
    for (const ResultRow* r : group)
      if (r->input_shape.size() == first.size() &&
          std::find(values.begin(), values.end(), r->input_shape[d]) == values.end())
        values.push_back(r->input_shape[d]);
    std::string dim;
    for (size_t i = 0; i < values.size(); ++i) dim += (i ? "," : "") + std::to_string(values[i]);
    s += (d ? "x" : "") + (values.size() > 1 ? "{" + dim + "}" : dim);
  }
  return s;
}

// The swept fields of a group, in the order the rows carry them.
std::vector<std::string> swept_fields(const std::vector<const ResultRow*>& group) {
  std::vector<std::string> fields;
  for (const ResultRow* r : group)
    for (const auto& [field, value] : r->point)
      if (std::find(fields.begin(), fields.end(), field) == fields.end()) fields.push_back(field);
  return fields;
}

std::string group_title(const std::vector<const ResultRow*>& group) {
  const ResultRow& r = *group.front();
  const std::vector<std::string> swept = swept_fields(group);
  bool one_point = true;
  for (const ResultRow* other : group) one_point = one_point && other->point_label == r.point_label;
  std::string t = r.block + (one_point && !r.point_label.empty() ? " [" + r.point_label + "]" : "") + ": input " +
                  (one_point ? shape_text(r.input_shape) : swept_shape_text(group));
  if (!one_point) {
    t += ", sweeping";
    for (size_t i = 0; i < swept.size(); ++i) t += (i ? ", " : " ") + swept[i];
  }
  // A swept dtype, layout or mode lists its values, as a varying dim does: the first row's alone
  // would claim the whole table is float32.
  const auto text_of = [&](const auto& field) {
    std::vector<std::string> values;
    for (const ResultRow* row : group)
      if (std::find(values.begin(), values.end(), field(*row)) == values.end()) values.push_back(field(*row));
    return values.size() > 1 ? "{" + join(values, ",") + "}" : values.front();
  };
  // A swept layout_conversion has its own column; otherwise the layout says whether it converts.
  const bool conversion_swept = std::find(swept.begin(), swept.end(), "layout_conversion") != swept.end();
  // An AMP row's dtype is its master weights' float32: its precision says more.
  t += ", " + text_of([](const ResultRow& row) { return row.precision == "plain" ? row.dtype : row.precision; }) +
       ", " + text_of([&](const ResultRow& row) { return conversion_swept ? row.layout : layout_text(row); }) + ", " +
       text_of([](const ResultRow& row) { return row.mode; });
  if (!r.device.empty()) t += ", device " + r.device;
  return t;
}

// "variant = what it builds", once per variant; a variant whose structure changes along the sweep
// (swept channels) says it at each point.
std::vector<std::string> structure_lines(const std::vector<const ResultRow*>& group) {
  std::vector<std::string> lines;
  std::vector<std::pair<std::string, std::string>> said;  // variant, structure
  for (const ResultRow* r : group) {
    if (r->structure.empty() ||
        std::find(said.begin(), said.end(), std::make_pair(r->variant, r->structure)) != said.end())
      continue;
    bool varies = false;
    for (const ResultRow* other : group)
      varies = varies || (other->variant == r->variant && other->structure != r->structure);
    said.emplace_back(r->variant, r->structure);
    lines.push_back(r->variant + (varies && !r->point_label.empty() ? " [" + r->point_label + "]" : "") + " = " +
                    r->structure);
  }
  return lines;
}

// A line wrapped at `width` columns (counted in code points), continuations indented by 4.
std::string wrapped(const std::string& line, size_t width) {
  std::string out, current;
  size_t current_width = 0;
  const auto columns = [](const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  std::istringstream words(line);
  for (std::string word; words >> word;) {
    const size_t w = columns(word);
    if (current_width > 0 && current_width + 1 + w > width) {
      out += current + "\n";
      current = "   ";
      current_width = 3;
    }
    current += (current_width > 0 ? " " : "") + word;
    current_width += (current_width > 0 ? 1 : 0) + w;
  }
  return out + current + "\n";
}

// The columns of `chosen` that have something to show in a table of `group`.
std::vector<const ResultColumn*> shown_columns(const std::vector<const ResultRow*>& group,
                                               const std::vector<std::string>& chosen) {
  const bool measured = any_measured(group);
  std::vector<const ResultColumn*> shown;
  for (const std::string& key : chosen) {
    const ResultColumn& c = result_column(key);
    if (column_applies(c, table_has(measured, is_training(*group.front()), measured && any_graph(group))))
      shown.push_back(&c);
  }
  return shown;
}

BlockTable block_table(const std::vector<const ResultRow*>& group, const std::vector<std::string>& chosen) {
  const bool train = is_training(*group.front());
  const std::vector<std::string> swept = swept_fields(group);
  // The baseline of each sweep point: ratios compare variants at the same point.
  std::map<std::string, const ResultRow*> base_at;
  for (const ResultRow* r : group)
    if (r->is_baseline || !base_at.count(r->point_label)) base_at[r->point_label] = r;

  const std::vector<const ResultColumn*> shown = shown_columns(group, chosen);
  // Variants that differ in their memory policy (not swept: a swept one has its own column) say it.
  bool policies_differ = false;
  for (const ResultRow* r : group)
    policies_differ = policies_differ || r->memory_policy != group.front()->memory_policy;
  const bool policy_column = policies_differ && std::find(swept.begin(), swept.end(), "memory_policy") == swept.end();
  // Likewise variants that differ in their precision (float32 beside AMP in one table).
  bool precisions_differ = false;
  for (const ResultRow* r : group) precisions_differ = precisions_differ || r->precision != group.front()->precision;
  const bool precision_column = precisions_differ && std::find(swept.begin(), swept.end(), "precision") == swept.end();
  TextTable t;
  t.header = {"variant"};
  if (policy_column) t.header.push_back("policy");
  if (precision_column) t.header.push_back("precision");
  for (const std::string& f : swept) t.header.push_back(f);
  for (const ResultColumn* c : shown) t.header.push_back(train ? c->header_train : c->header_infer);
  t.right_aligned.assign(t.header.size(), true);
  t.right_aligned[0] = false;
  if (policy_column) t.right_aligned[1] = false;
  if (precision_column) t.right_aligned[policy_column ? 2 : 1] = false;
  if (!shown.empty() && shown.back()->align == ColumnAlign::words) t.right_aligned.back() = false;
  for (const ResultRow* r : group) {
    std::vector<std::string> row = {variant_cell(*r)};
    if (policy_column) row.push_back(r->memory_policy);
    if (precision_column) row.push_back(r->precision);
    for (const std::string& f : swept) {
      std::string value;
      for (const auto& [field, v] : r->point)
        if (field == f) value = v.size() >= 2 && v.front() == '"' ? v.substr(1, v.size() - 2) : v;
      row.push_back(value);
    }
    std::vector<Tone> tones(t.header.size(), Tone::plain);
    const ColumnContext context{*r, *base_at.at(r->point_label), train};
    for (const ResultColumn* c : shown) {
      ColumnCell cell = column_cell(*c, context);
      tones[row.size()] = cell.tone;
      row.push_back(std::move(cell.text));
    }
    t.rows.push_back(std::move(row));
    t.tones.push_back(std::move(tones));
  }
  return {group_title(group), std::move(t), structure_lines(group)};
}

// Rows of the same block, all sweep points together, in row order. A block swept over `mode`
// gets a table per mode: train and infer rows have different columns (step vs forward time,
// backward FLOPs), and one header cannot name both.
std::vector<std::vector<const ResultRow*>> rows_by_block(const ResultSet& results) {
  std::vector<std::vector<const ResultRow*>> groups;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (const ResultRow& r : results.rows) {
    auto [it, added] = index.emplace(std::make_pair(r.block, r.mode), groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(&r);
  }
  return groups;
}

// Note lines as Markdown: a line that starts a paragraph, its indented lines as list items.
std::string markdown_notes(const std::string& notes) {
  std::string out, line;
  std::istringstream in(notes);
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line.rfind("  ", 0) == 0)
      out += "- " + markdown_escape(line.substr(2)) + "\n";
    else
      out += (out.empty() ? "" : "\n") + markdown_escape(line) + "\n";
  }
  return out + "\n";
}

// The compact sets fit 100 columns for a block of three variants with a swept field: the
// headline time and its ratio, throughput, the peak and its ratio, FLOPs ratio, status. A whole
// network's run also shows its forward GFLOP and GMAC: what papers compare networks by (their
// "FLOPs" are usually MACs). An analysis shows params, costs and predicted memory.
std::vector<std::string> columns_for(const TableOptions& options, TableStyle style, bool measured, bool network) {
  if (!options.columns.empty()) return options.columns;
  if (options.wide || style == TableStyle::markdown) return result_column_keys();
  if (measured && network) return column_set(ColumnSet::compact_network);
  return column_set(measured ? ColumnSet::compact : ColumnSet::compact_analysis);
}

// What the tables' output is made of, once for both formats: each part is tables (a title
// each), then lines about them (what each variant builds), then a note; terminal_part and
// markdown_part write it, each in its own way.
struct TitledTable {
  std::string title;
  TextTable table;
};
// How a note reads in Markdown (the terminal shows its lines as they are).
enum class NoteShape {
  lines,                 // its lines as they are, one paragraph
  paragraph,             // one paragraph line (Markdown would show a line break as "\n")
  paragraphs_and_items,  // a line starts a paragraph, its indented lines are list items
};
struct TablesPart {
  std::vector<TitledTable> tables = {};
  std::vector<std::string> items = {};
  std::string note = {};
  NoteShape note_shape = NoteShape::lines;
};

std::string terminal_part(const TablesPart& part, bool colour) {
  std::string out;
  for (const TitledTable& t : part.tables) out += printable(t.title) + "\n" + t.table.render_terminal(colour);
  for (const std::string& line : part.items) out += wrapped(printable(line), 100);
  if (!part.note.empty()) out += part.note + (part.note.back() == '\n' ? "" : "\n");
  return out + "\n";
}

std::string markdown_part(const TablesPart& part) {
  std::string out;
  for (const TitledTable& t : part.tables)
    out += "### " + markdown_escape(t.title) + "\n\n" + t.table.render_markdown() + "\n";
  for (const std::string& line : part.items) out += "- " + markdown_escape(line) + "\n";
  if (!part.items.empty()) out += "\n";
  switch (part.note_shape) {
    case NoteShape::lines: return part.note.empty() ? out : out + markdown_escape(part.note) + "\n";
    // Written even when empty (an analysis of several networks has no side-by-side note): the
    // Markdown has always had its blank lines there.
    case NoteShape::paragraph: return out + markdown_escape(one_line(part.note)) + "\n\n";
    case NoteShape::paragraphs_and_items: return part.note.empty() ? out : out + markdown_notes(part.note);
  }
  return out;
}

}  // namespace

std::vector<BlockTable> block_tables(const ResultSet& results) {
  std::vector<BlockTable> tables;
  for (const auto& group : group_by_block(results)) tables.push_back(block_table(group, result_column_keys()));
  return tables;
}

std::vector<std::string> block_tables_columns(const ResultSet& results) {
  std::vector<std::string> keys;
  for (const auto& group : group_by_block(results))
    for (const ResultColumn* c : shown_columns(group, result_column_keys()))
      if (std::find(keys.begin(), keys.end(), c->key) == keys.end()) keys.emplace_back(c->key);
  return keys;
}

std::string tables_footnote(const ResultSet& results, const std::vector<std::string>& shown) {
  if (results.rows.empty()) return "";
  bool measured = false;
  NoteContext context;
  for (const ResultRow& r : results.rows) {
    measured = measured || !r.device.empty();
    (is_training(r) ? context.train : context.infer) = true;
  }
  std::string note = column_notes(shown, context);
  // Which prediction an analysis shows: analyze leaves the backends' workspace out unless --device.
  const bool peak_shown = std::find(shown.begin(), shown.end(), "peak_predicted") != shown.end() ||
                          std::find(shown.begin(), shown.end(), "peak") != shown.end();
  if (peak_shown && !measured && results.provenance.is_object() && results.provenance.contains("predicted_workspace") &&
      results.provenance["predicted_workspace"].is_string()) {
    const std::string ws = results.provenance["predicted_workspace"].get<std::string>();
    note += ws == "none" ? " pred. leaves out any backend's workspace (analyze --device cpu|cuda includes it)."
                         : " pred. includes the " + ws + " backend's workspace.";
  }
  if (measured) note += std::string(note.empty() ? "" : " ") + "--wide shows every column, --columns chooses.";
  note += "\n";
  for (const std::string& w : run_warnings(results)) note += "warning: " + printable(w) + "\n";
  return note;
}

std::string format_tables(const ResultSet& results, TableStyle style) { return format_tables(results, style, false); }

std::string format_tables(const ResultSet& results, TableStyle style, bool colour) {
  return format_tables(results, style, colour, TableOptions{});
}

std::string format_tables(const ResultSet& results, TableStyle style, bool colour, const TableOptions& options) {
  std::vector<TablesPart> parts;
  std::vector<std::string> shown;  // every column some table shows: the note explains those
  for (const auto& group : rows_by_block(results)) {
    const std::vector<std::string> chosen =
        columns_for(options, style, any_measured(group), is_network(*group.front()));
    for (const ResultColumn* c : shown_columns(group, chosen))
      if (std::find(shown.begin(), shown.end(), c->key) == shown.end()) shown.emplace_back(c->key);
    BlockTable b = block_table(group, chosen);
    parts.push_back(
        {.tables = {{.title = std::move(b.title), .table = std::move(b.table)}}, .items = std::move(b.structure)});
    // A variant run with and without a memory policy: what the policy buys.
    if (std::optional<BlockTable> pt = policies_table(group))
      parts.push_back({.tables = {{.title = std::move(pt->title), .table = std::move(pt->table)}},
                       .note = policies_note(group),
                       .note_shape = NoteShape::lines});
    // Folded variants: what each folds into what, its proof, and what it buys against its source.
    if (std::string notes = fold_notes(group); !notes.empty())
      parts.push_back({.note = std::move(notes), .note_shape = NoteShape::paragraphs_and_items});
    // A block run in both layouts: its variants' two layouts side by side, after its own table.
    if (std::optional<BlockTable> l = layouts_table(group))
      parts.push_back({.tables = {{.title = std::move(l->title), .table = std::move(l->table)}},
                       .note = layouts_note(group),
                       .note_shape = NoteShape::paragraph});
  }
  // Networks and blocks in one run: each variant's effect at both scales, side by side.
  if (std::optional<BlockTable> nb = network_vs_block_table(results))
    parts.push_back({.tables = {{.title = std::move(nb->title), .table = std::move(nb->table)}},
                     .note = network_vs_block_note(results),
                     .note_shape = NoteShape::paragraph});
  // Several networks at one input (seed 001): each against the first, FLOPs beside time.
  if (std::vector<BlockTable> side = networks_side_by_side_tables(results); !side.empty()) {
    TablesPart part{.note = networks_side_by_side_note(results), .note_shape = NoteShape::paragraph};
    for (BlockTable& t : side) part.tables.push_back({.title = std::move(t.title), .table = std::move(t.table)});
    parts.push_back(std::move(part));
  }
  std::string out;
  for (const TablesPart& part : parts)
    out += style == TableStyle::markdown ? markdown_part(part) : terminal_part(part, colour);
  return out + tables_footnote(results, shown);
}

}  // namespace convbench
