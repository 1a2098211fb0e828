// Writing outputs safely (util/output_writer.hpp), in a private temporary folder: special
// files and symbolic links are refused as outputs, an input or the same file twice is refused,
// a planted symlink at a predictable temporary name is never followed, a failure leaves every
// earlier file as it was and no temporary behind, and a SIGTERM while writing (in a child
// process) cleans up and still ends the process by that signal; an ignored signal (nohup) stays
// ignored, and one that arrives while the files go in place still ends the process. A full disk is checked end to
// end on a small tmpfs in tests/hostile_outputs_test.sh.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "util/input_error.hpp"
#include "util/output_writer.hpp"

namespace convbench {
namespace {

namespace fs = std::filesystem;

class OutputWriter : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/convbench-output-test-XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr);
    dir_ = name;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (fs::path(dir_) / name).string(); }
  static std::string read(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static void write(const std::string& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
  // Every name in the folder (temporaries start with a dot).
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  // The error of writing `files`, or "" when it succeeded.
  static std::string error_of(const std::vector<OutputFile>& files, const std::vector<std::string>& inputs = {}) {
    try {
      write_output_files(files, inputs);
      return "";
    } catch (const InputError& e) {
      return e.what();
    }
  }

  std::string dir_;
};

TEST_F(OutputWriter, WritesEveryFileWithTheUsualModeAndLeavesNoTemporary) {
  write(path("old.csv"), "old");
  ::chmod(path("old.csv").c_str(), 0640);
  EXPECT_EQ(error_of({{{path("a.json"), "--json"}, "{}\n"}, {{path("old.csv"), "--csv"}, "new\n"}}), "");
  EXPECT_EQ(read(path("a.json")), "{}\n");
  EXPECT_EQ(read(path("old.csv")), "new\n");
  struct stat st {};
  ASSERT_EQ(::stat(path("old.csv").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u) << "a replaced file keeps its mode";
  ASSERT_EQ(::stat(path("a.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0111, 0u) << "a new file is not executable";
  EXPECT_EQ(entries(), (std::vector<std::string>{"a.json", "old.csv"}));
}

TEST_F(OutputWriter, SpecialFilesAndLinksAreRefusedAndLeftAsTheyAre) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  fs::create_directory(path("folder"));
  write(path("victim"), "precious");
  fs::create_symlink(path("victim"), path("link.json"));
  EXPECT_NE(error_of({{{path("fifo"), "--json"}, "x"}}).find("--json: is a FIFO"), std::string::npos);
  EXPECT_NE(error_of({{{path("folder"), "--csv"}, "x"}}).find("--csv: is a directory"), std::string::npos);
  EXPECT_NE(error_of({{{path("folder") + "/", "--csv"}, "x"}}).find("names a directory"), std::string::npos);
  EXPECT_NE(error_of({{{path("link.json"), "-o"}, "x"}}).find("-o: is a symbolic link"), std::string::npos);
  EXPECT_NE(error_of({{{path("nodir/r.html"), "--html"}, "x"}}).find("does not exist"), std::string::npos);
  if (::geteuid() == 0) {
    // A device node of our own (the null device's numbers), in the private folder: never /dev.
    ASSERT_EQ(::mknod(path("null").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
    EXPECT_NE(error_of({{{path("null"), "-o"}, "x"}}).find("-o: is a device"), std::string::npos);
    struct stat st {};
    ASSERT_EQ(::lstat(path("null").c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device node is still a device node";
  }
  struct stat st {};
  ASSERT_EQ(::lstat(path("fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  ASSERT_EQ(::lstat(path("link.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(read(path("victim")), "precious");
}

TEST_F(OutputWriter, AnInputOrTheSameFileTwiceIsRefused) {
  write(path("spec.yaml"), "blocks: []");
  fs::create_hard_link(path("spec.yaml"), path("same.yaml"));
  fs::create_directory(path("sub"));
  EXPECT_NE(error_of({{{path("spec.yaml"), "--csv"}, "x"}}, {path("spec.yaml")}).find("is also an input"),
            std::string::npos);
  EXPECT_NE(error_of({{{path("same.yaml"), "--csv"}, "x"}}, {path("spec.yaml")}).find("is also an input"),
            std::string::npos)
      << "a hard link is the same file";
  EXPECT_NE(error_of({{{path("sub/../spec.yaml"), "--csv"}, "x"}}, {path("spec.yaml")}).find("is also an input"),
            std::string::npos);
  const std::string twice = error_of({{{path("a.md"), "--markdown"}, "x"}, {{path("sub/../a.md"), "--latex"}, "y"}});
  EXPECT_NE(twice.find("--latex: is also the output of --markdown"), std::string::npos) << twice;
  EXPECT_NE(error_of({{{"-", "--json"}, "x"}, {{"-", "--csv"}, "y"}}).find("named by more than one output"),
            std::string::npos);
  EXPECT_EQ(read(path("spec.yaml")), "blocks: []");
  EXPECT_FALSE(fs::exists(path("a.md")));
}

TEST_F(OutputWriter, APlantedSymlinkAtTheOldTemporaryNameIsNeverFollowed) {
  write(path("victim"), "precious");
  fs::create_symlink(path("victim"), path("p.json.tmp"));
  EXPECT_EQ(error_of({{{path("p.json"), "--json"}, "results"}}), "");
  EXPECT_EQ(read(path("p.json")), "results");
  EXPECT_EQ(read(path("victim")), "precious");
  EXPECT_TRUE(fs::is_symlink(path("p.json.tmp")));
}

TEST_F(OutputWriter, AFailureLeavesEveryEarlierFileAndNoTemporary) {
  write(path("a.json"), "old a");
  write(path("b.csv"), "old b");
  fs::create_directory(path("gone"));
  // The third output cannot be written: its folder goes away after the paths were checked and
  // the first temporaries were written.
  std::string error;
  try {
    write_output_files({{{path("a.json"), "--json"}, "new a"},
                        {{path("b.csv"), "--csv"}, "new b"},
                        {{path("gone/c.html"), "--html"}, "new c"}},
                       {}, [&](const std::string& step, const std::string& p) {
                         if (step == "temporary written" && p == path("b.csv")) fs::remove(path("gone"));
                       });
  } catch (const InputError& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("gone/c.html: --html: cannot create a temporary file"), std::string::npos) << error;
  EXPECT_EQ(read(path("a.json")), "old a");
  EXPECT_EQ(read(path("b.csv")), "old b");
  EXPECT_EQ(entries(), (std::vector<std::string>{"a.json", "b.csv"})) << "no temporary left";
}

TEST_F(OutputWriter, SigtermWhileWritingCleansUpAndEndsTheProcessByTheSignal) {
  write(path("a.json"), "old a");
  write(path("b.csv"), "old b");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // In the child: a SIGTERM arrives after the first temporary is written.
    try {
      write_output_files({{{path("a.json"), "--json"}, "new a"}, {{path("b.csv"), "--csv"}, "new b"}}, {},
                         [](const std::string& step, const std::string&) {
                           if (step == "temporary written") ::kill(::getpid(), SIGTERM);
                         });
    } catch (...) {
    }
    ::_exit(0);  // reached only if the signal did not end the process
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(read(path("a.json")), "old a");
  EXPECT_EQ(read(path("b.csv")), "old b");
  EXPECT_EQ(entries(), (std::vector<std::string>{"a.json", "b.csv"})) << "no temporary or backup left";
}

// The child's exit status: what happens to a process that writes with SIGHUP ignored (nohup) and
// receives one while its first temporary is written, or a SIGTERM while the files go in place.
int status_of_child_writing(int ignored_signal, const char* step_to_signal_at, int signal_to_send,
                            const std::function<std::string(const char*)>& path) {
  const pid_t child = ::fork();
  if (child == 0) {
    if (ignored_signal != 0) ::signal(ignored_signal, SIG_IGN);
    try {
      write_output_files({{{path("a.json"), "--json"}, "new a"}, {{path("b.csv"), "--csv"}, "new b"}}, {},
                         [&](const std::string& step, const std::string& p) {
                           if (step == step_to_signal_at && p == path("b.csv")) ::kill(::getpid(), signal_to_send);
                         });
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return status;
}

TEST_F(OutputWriter, AnIgnoredSignalStaysIgnored) {
  const int status =
      status_of_child_writing(SIGHUP, "temporary written", SIGHUP, [&](const char* name) { return path(name); });
  ASSERT_TRUE(WIFEXITED(status)) << "the child ended by signal " << WTERMSIG(status) << " under nohup";
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(read(path("a.json")), "new a");
  EXPECT_EQ(read(path("b.csv")), "new b");
}

TEST_F(OutputWriter, ASignalWhileTheFilesGoInPlaceIsNotLost) {
  const int status = status_of_child_writing(0, "renamed", SIGTERM, [&](const char* name) { return path(name); });
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited with " << WEXITSTATUS(status) << ": the SIGTERM was dropped";
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(read(path("a.json")), "new a") << "the outputs were complete when the signal came";
  EXPECT_EQ(read(path("b.csv")), "new b");
  EXPECT_EQ(entries(), (std::vector<std::string>{"a.json", "b.csv"})) << "no temporary or backup left";
}

TEST_F(OutputWriter, DashIsStandardOutputAndEmptyPathsAreSkipped) {
  testing::internal::CaptureStdout();
  const std::string error = error_of({{{"-", "--json"}, "{\"to\": \"stdout\"}\n"}, {{"", "--csv"}, "unused"}});
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "{\"to\": \"stdout\"}\n");
  EXPECT_EQ(error, "");
  EXPECT_TRUE(entries().empty());
}

}  // namespace
}  // namespace convbench
