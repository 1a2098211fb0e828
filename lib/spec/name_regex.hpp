// The regular expressions of every --filter (compare, analyze, explain, plan, slurm; history list,
// show, export, report): RE2, a linear-time engine. std::regex's ECMAScript engine recurses once
// per character matched, so `.*` over a 30,000-character block name overflowed the stack
// (SIGSEGV); RE2 runs in time linear in the name and in constant stack. Its syntax is
// ECMAScript's for everything a filter needs (. * + ? {n,m} | () [] ^ $ \d \w \s \b, non-greedy
// forms), without back-references and lookaround, which a linear-time engine cannot have.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace convbench {

class NameRegex {
 public:
  // Throws InputError naming `flag` (on the command line) when `pattern` is not a regular
  // expression RE2 accepts (the pattern shown with RE2's reason), is not UTF-8, or is too large
  // to compile within RE2's memory budget.
  NameRegex(const std::string& pattern, const std::string& flag);
  // Whether the expression matches anywhere in `name` (as grep searches a line).
  bool search(std::string_view name) const;

 private:
  std::shared_ptr<const re2::RE2> re_;
};

}  // namespace convbench
