// An enum's spellings in one table: the words a spec accepts, the word results and messages
// write, and the value a word means, all read from the same rows, so that a new enumerator is
// one row and no parser keeps its own list of words beside a to_string switch.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace convbench {

template <class Enum>
struct EnumWord {
  Enum value;
  std::string_view word;
};

template <class Enum>
using EnumWords = std::vector<EnumWord<Enum>>;

// The word of `value` ("?" for a value the table lacks: a programming error the tests catch).
template <class Enum>
std::string_view word_of(const EnumWords<Enum>& table, Enum value) {
  for (const EnumWord<Enum>& row : table)
    if (row.value == value) return row.word;
  return "?";
}

// Every word, in the table's order (the order messages list them in).
template <class Enum>
std::vector<std::string> words_of(const EnumWords<Enum>& table) {
  std::vector<std::string> words;
  for (const EnumWord<Enum>& row : table) words.emplace_back(row.word);
  return words;
}

template <class Enum>
std::optional<Enum> value_of(const EnumWords<Enum>& table, std::string_view word) {
  for (const EnumWord<Enum>& row : table)
    if (row.word == word) return row.value;
  return std::nullopt;
}

}  // namespace convbench
