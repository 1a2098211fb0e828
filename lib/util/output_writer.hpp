// Writing output files safely: the one implementation every command uses (analyze and compare
// --json/--csv/..., report -o, diff --markdown).
//
// convbench often runs as root, in directories others can write to, on disks that fill up, and
// under CI that kills jobs. So:
//  - a path is checked before any work: `-` is standard output (once); an existing path must be
//    a regular file (not a device, FIFO, directory, socket or symbolic link: a root run must not
//    replace /dev/null or write through a link someone planted); its directory must exist; no
//    output may be an input of the command (the spec, a results file) or another output;
//  - each file is written to a temporary with an unpredictable name in its own directory, created
//    with O_CREAT|O_EXCL (mkostemp: a planted symlink makes the create fail, it is never
//    followed), every write checked, fsync'd, closed and checked, given the old file's mode (or
//    0666 less the umask);
//  - only when every temporary is complete are they renamed into place, each old file first kept
//    as a hard-linked backup, so a failed rename puts every earlier file back;
//  - on any failure (no space, no permission, SIGINT / SIGTERM / SIGHUP while writing) every
//    temporary and backup is removed and every earlier file is left as it was; the error names
//    the path and the system's reason. A signal is re-raised once the files are clean, so the
//    process still ends the way the signal asked. (SIGKILL cannot be caught: after one, a
//    temporary `.NAME.convbench-XXXXXX` may remain, never a half-written NAME.)
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace convbench {

// An output the command will write: its path (`-` for standard output) and the flag that named
// it, for messages ("--json", "-o", "--markdown").
struct OutputPath {
  std::string path;
  std::string flag;
};

// Refuses (InputError naming the flag, the path and why) any output that is not a writable
// regular-file path or `-`, that is also one of `inputs`, or that is named twice. Call it before
// the work that produces the outputs. Empty paths (outputs not asked for) are skipped.
void check_output_paths(const std::vector<OutputPath>& outputs, const std::vector<std::string>& inputs);

struct OutputFile {
  OutputPath where;
  std::string content;
};

// Called after each step of write_output_files: "temporary written" for each file, then
// "renamed" for each. Tests use it to interrupt the writing; commands pass nothing.
using OutputStepHook = std::function<void(const std::string& step, const std::string& path)>;

// Checks the paths again (check_output_paths), then writes every file all or nothing as
// described above; content for `-` goes to standard output after the files are in place.
// Throws InputError on failure, after cleaning up.
void write_output_files(const std::vector<OutputFile>& files, const std::vector<std::string>& inputs,
                        const OutputStepHook& hook = {});

}  // namespace convbench
