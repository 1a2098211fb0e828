// convbench completion bash|zsh: prints a shell completion script made from this program's own
// command line (every subcommand, its options, the values an option or positional takes), so that
// the script cannot drift from the options: `cmake --install` installs the two the build
// generates with it (cmake/completion.cmake).
#include <algorithm>
#include <cctype>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "build_info.hpp"
#include "commands.hpp"

// Its own namespace: the program's files are compiled in unity batches, where another file's
// helpers (a `join`, say) would clash with these.
namespace convbench::cli::completion {
namespace {

// What a value (an option's, or a positional argument) completes to.
struct ValueCompletion {
  bool files = false;                // file names (a TEXT value without a list of choices)
  std::vector<std::string> choices;  // the words an IsMember check accepts
};

struct OptionModel {
  std::vector<std::string> names;  // -q, --quiet
  bool takes_value = false;
  ValueCompletion value;
};

// One command: "" (the program), "compare", "history add", ...
struct CommandModel {
  std::string path;
  std::vector<std::string> subcommands;
  std::vector<OptionModel> options;
  bool has_positional = false;
  ValueCompletion positional;
};

// Words the scripts can carry unquoted: the scripts hand their word lists to `compgen -W`, which
// expands them as shell words, so a word with anything else in it is left out rather than quoted.
bool plain_word(const std::string& w) {
  return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("_.,:+/@%=-").find(c) != std::string_view::npos;
  });
}

// An option's value, from its type name as --help shows it: "TEXT:{auto,cpu,reference,cuda}" (an
// IsMember check: those words), "TEXT" (file names: most text values are files, and for the rest,
// a --filter's pattern say, file names are what bash offers anyway), a number (nothing).
ValueCompletion value_completion(const CLI::Option& opt) {
  ValueCompletion v;
  const std::string type = opt.get_type_name();
  const auto open = type.find('{');
  const auto close = type.find('}', open == std::string::npos ? 0 : open);
  // "->" marks a Transformer's map ({a->b,...}), whose words are not the accepted values alone.
  if (open != std::string::npos && close != std::string::npos &&
      type.substr(open, close - open).find("->") == std::string::npos) {
    const std::string list = type.substr(open + 1, close - open - 1);
    size_t start = 0;
    while (start <= list.size()) {
      const size_t comma = std::min(list.find(',', start), list.size());
      const std::string word = list.substr(start, comma - start);
      if (plain_word(word)) v.choices.push_back(word);
      start = comma + 1;
    }
    if (!v.choices.empty()) return v;
  }
  v.files = type.rfind("TEXT", 0) == 0;
  return v;
}

// A flag expects no items (CLI11 sets expected(0)); an option one or more.
bool takes_value(const CLI::Option& opt) { return opt.get_items_expected_max() > 0; }

void add_options(const CLI::App& app, bool inherited, CommandModel& model) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->nonpositional()) {
      // A parent's own --help and --version stay with the parent; its other options reach it
      // from after a subcommand (fallthrough: `convbench compare SPEC -v`).
      if (inherited && (opt == app.get_help_ptr() || opt == app.get_help_all_ptr() || opt == app.get_version_ptr()))
        continue;
      OptionModel o;
      for (const std::string& s : opt->get_snames())
        if (plain_word(s)) o.names.push_back("-" + s);
      for (const std::string& l : opt->get_lnames())
        if (plain_word(l)) o.names.push_back("--" + l);
      std::erase_if(o.names, [&](const std::string& name) {
        for (const OptionModel& known : model.options)
          if (std::find(known.names.begin(), known.names.end(), name) != known.names.end()) return true;
        return false;
      });
      if (o.names.empty()) continue;
      o.takes_value = takes_value(*opt);
      if (o.takes_value) o.value = value_completion(*opt);
      model.options.push_back(std::move(o));
    } else if (!inherited && opt->get_positional() && !model.has_positional) {
      model.has_positional = true;
      model.positional = value_completion(*opt);
    }
  }
}

void collect(const CLI::App& app, const std::string& path, std::vector<CommandModel>& out) {
  CommandModel model;
  model.path = path;
  add_options(app, false, model);
  for (const CLI::App *parent = app.get_parent(), *child = &app; parent != nullptr && child->get_fallthrough();
       child = parent, parent = parent->get_parent())
    add_options(*parent, true, model);
  std::vector<const CLI::App*> subs;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_disabled(); }))
    if (plain_word(sub->get_name())) subs.push_back(sub);
  for (const CLI::App* sub : subs) model.subcommands.push_back(sub->get_name());
  out.push_back(model);
  for (const CLI::App* sub : subs) collect(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

// The data both scripts read, as shell functions (the same text in bash and zsh): for a command
// path, its subcommands, its options, the options that take a value, and what a value completes
// to ("=files", or the choices; nothing for a number). The positional's key is the empty option.
std::string data_functions(const std::vector<CommandModel>& commands) {
  std::string subs, options, valued, values;
  for (const CommandModel& c : commands) {
    const std::string key = "'" + c.path + "'";
    if (!c.subcommands.empty()) subs += "    " + key + ") printf '%s\\n' '" + join(c.subcommands) + "' ;;\n";
    std::vector<std::string> all, with_value;
    // What a value completes to, with the keys (command|option) that complete to it, in order.
    std::vector<std::pair<std::string, std::vector<std::string>>> by_value;
    const auto add_value = [&](const ValueCompletion& v, const std::string& option) {
      const std::string what = v.choices.empty() ? (v.files ? "=files" : "") : join(v.choices);
      if (what.empty()) return;
      auto it = std::find_if(by_value.begin(), by_value.end(), [&](const auto& e) { return e.first == what; });
      if (it == by_value.end()) it = by_value.insert(by_value.end(), {what, {}});
      it->second.push_back("'" + c.path + "|" + option + "'");
    };
    for (const OptionModel& o : c.options) {
      all.insert(all.end(), o.names.begin(), o.names.end());
      if (!o.takes_value) continue;
      with_value.insert(with_value.end(), o.names.begin(), o.names.end());
      for (const std::string& name : o.names) add_value(o.value, name);
    }
    if (c.has_positional) add_value(c.positional, "");
    if (!all.empty()) options += "    " + key + ") printf '%s\\n' '" + join(all) + "' ;;\n";
    if (!with_value.empty()) valued += "    " + key + ") printf '%s\\n' '" + join(with_value) + "' ;;\n";
    for (const auto& [what, keys] : by_value) {
      std::string patterns;
      for (const std::string& k : keys) patterns += (patterns.empty() ? "" : " | ") + k;
      values += "    " + patterns + ") printf '%s\\n' '" + what + "' ;;\n";
    }
  }
  return "# The subcommands of a command (its words joined by spaces: '' is the program, 'history add' one of\n"
         "# history's).\n"
         "_convbench_subcommands() {\n  case $1 in\n" +
         subs +
         "  esac\n}\n"
         "# Its options.\n"
         "_convbench_options() {\n  case $1 in\n" +
         options +
         "  esac\n}\n"
         "# Its options that take a value.\n"
         "_convbench_valued() {\n  case $1 in\n" +
         valued +
         "  esac\n}\n"
         "# What the value of command|option completes to (command| is its positional argument): =files,\n"
         "# or the words it accepts; nothing for a number.\n"
         "_convbench_value() {\n  case \"$1|$2\" in\n" +
         values + "  esac\n}\n";
}

std::string header(const std::string& shell, const std::string& install_hint) {
  return "# " + shell + " completion for convbench " + std::string(build_info::version) +
         ", generated by `convbench completion " + shell +
         "` from its own command line: regenerate it\n"
         "# rather than edit it. " +
         install_hint + "\n";
}

// bash: the words before the cursor give the command path (subcommand names) and say whether
// the cursor's word is an option's value. bash breaks `--device=c` into `--device`, `=`, `c`
// (COMP_WORDBREAKS), hence the lone "=" words. No bash-completion helpers: the script works
// with or without that package.
std::string bash_script(const std::vector<CommandModel>& commands) {
  return header("bash",
                "Installed as share/bash-completion/completions/convbench; by hand: source <(convbench completion "
                "bash)") +
         "\n" + data_functions(commands) +
         R"sh(
# Adds the completions of a value (of option $2 of command $1; $2 empty: its positional) to COMPREPLY.
_convbench_complete_value() {
  local what
  what=$(_convbench_value "$1" "$2")
  case $what in
    '') ;;
    =files)
      compopt -o filenames 2>/dev/null
      mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$3") ;;
    *) mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -W "$what" -- "$3") ;;
  esac
}

_convbench() {
  local cur=${COMP_WORDS[COMP_CWORD]} cmd='' word value_of='' i=1 j
  COMPREPLY=()
  while ((i < COMP_CWORD)); do
    word=${COMP_WORDS[i]}
    case $word in
      --*=*) ;;
      -*)
        if [[ " $(_convbench_valued "$cmd") " == *" $word "* ]]; then
          j=$((i + 1))
          [[ ${COMP_WORDS[j]-} == = ]] && j=$((j + 1))
          if ((j >= COMP_CWORD)); then
            value_of=$word
            break
          fi
          i=$j
        fi ;;
      *)
        [[ " $(_convbench_subcommands "$cmd") " == *" $word "* ]] && cmd=${cmd:+$cmd }$word ;;
    esac
    i=$((i + 1))
  done
  [[ $cur == = ]] && cur=''
  if [[ -n $value_of ]]; then
    _convbench_complete_value "$cmd" "$value_of" "$cur"
  elif [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_convbench_options "$cmd")" -- "$cur")
  else
    mapfile -t COMPREPLY < <(compgen -W "$(_convbench_subcommands "$cmd")" -- "$cur")
    _convbench_complete_value "$cmd" '' "$cur"
  fi
}
complete -F _convbench convbench
)sh";
}

// zsh: the same walk over $words (1-based, the cursor's word at $CURRENT; zsh does not break
// words at "="). Works autoloaded from a directory on $fpath (its first line) or sourced.
std::string zsh_script(const std::vector<CommandModel>& commands) {
  return "#compdef convbench\n" +
         header("zsh",
                "Installed as share/zsh/site-functions/_convbench; any folder on $fpath does, before compinit.") +
         "\n" + data_functions(commands) +
         R"sh(
_convbench_complete_value() {
  local what
  what=$(_convbench_value "$1" "$2")
  case $what in
    '') ;;
    '=files') _files ;;  # quoted: zsh expands an unquoted =word to a command's path
    *) compadd -- ${=what} ;;
  esac
}

_convbench() {
  local cur=${words[CURRENT]} cmd='' word value_of='' i=2
  while (( i < CURRENT )); do
    word=${words[i]}
    case $word in
      --*=*) ;;
      -*)
        if [[ " $(_convbench_valued "$cmd") " == *" $word "* ]]; then
          if (( i + 1 >= CURRENT )); then
            value_of=$word
            break
          fi
          i=$(( i + 1 ))
        fi ;;
      *)
        [[ " $(_convbench_subcommands "$cmd") " == *" $word "* ]] && cmd=${cmd:+$cmd }$word ;;
    esac
    i=$(( i + 1 ))
  done
  if [[ -z $value_of && $cur == --*=* ]]; then
    value_of=${cur%%=*}
    compset -P '*='
  fi
  if [[ -n $value_of ]]; then
    _convbench_complete_value "$cmd" "$value_of"
  elif [[ $cur == -* ]]; then
    compadd -- ${=$(_convbench_options "$cmd")}
  else
    compadd -- ${=$(_convbench_subcommands "$cmd")}
    _convbench_complete_value "$cmd" ''
  fi
}

if [[ ${funcstack[1]} == _convbench ]]; then
  _convbench "$@"
else
  compdef _convbench convbench
fi
)sh";
}

}  // namespace
}  // namespace convbench::cli::completion

namespace convbench::cli {

Command add_completion_command(CLI::App& app) {
  auto shell = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand(
      "completion",
      "Print a shell completion script for convbench's subcommands and options (bash or zsh), made from this "
      "program's own command line");
  sub->add_option("shell", *shell, "The shell to print the script for: bash or zsh")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh"}));
  // The whole program's command line, read when the command runs: every subcommand is registered by then.
  return {sub, [shell, &app] {
            std::vector<completion::CommandModel> commands;
            completion::collect(app, "", commands);
            std::cout << (*shell == "bash" ? completion::bash_script(commands) : completion::zsh_script(commands));
            return 0;
          }};
}

}  // namespace convbench::cli
