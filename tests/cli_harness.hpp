// Runs the convbench binary in tests and captures exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace convbench::testing {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("convbench_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// `args` is appended to the binary's path as shell words (quote them yourself).
// `text` without the SVG namespace declaration, which is a name, not a reference to fetch: what
// remains must hold no URL at all for a report to be self-contained.
inline std::string without_svg_namespace(std::string text) {
  const std::string ns = "xmlns=\"http://www.w3.org/2000/svg\"";
  for (size_t at = text.find(ns); at != std::string::npos; at = text.find(ns, at)) text.erase(at, ns.size());
  return text;
}

inline CliResult run_cli(const std::string& args) {
  const std::string err_path = temp_path("stderr.txt");
  const std::string cmd = std::string(CONVBENCH_BINARY) + " " + args + " 2>" + err_path;
  CliResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_file(err_path);
  std::filesystem::remove(err_path);
  return r;
}

inline std::string source_path(const std::string& rel) { return std::string(CONVBENCH_SOURCE_DIR) + "/" + rel; }

}  // namespace convbench::testing
