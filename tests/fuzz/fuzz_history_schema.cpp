// libFuzzer harness: a convbench history as a damaged or forged file would be. A whole history
// (one run of tests/data/results/measured.json added) is made once; each input sets the file's
// schema version (SQLite's user_version) and application id from its first eight bytes, then
// patches the file's bytes with the rest ((offset, byte) pairs), and every path a command takes
// into a history runs on the result: the check compare --db makes before measuring, an add (the
// schema checks and migrations included), a reader's listing and the integrity check. Bad input
// may only end in HistoryDbError or InputError; anything else (a crash, a sanitizer finding,
// another exception) is a bug. The first finding it is made for: a negative user_version, which
// once indexed the migrations below zero.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "history/history_db.hpp"
#include "history/history_store.hpp"
#include "history/history_tables.hpp"
#include "util/input_error.hpp"

namespace {

struct Pristine {
  std::string dir, image;
  convbench::HistoryRun run;
};

// The folder the harness works in and the bytes of a whole history, made once per process.
const Pristine& pristine() {
  static const Pristine p = [] {
    Pristine made;
    std::string d = (std::filesystem::temp_directory_path() / "convbench-fuzz-history-XXXXXX").string();
    made.dir = ::mkdtemp(d.data()) ? d : "/tmp";
    made.run =
        convbench::history_run_from_file(std::string(CONVBENCH_SOURCE_DIR) + "/tests/data/results/measured.json");
    const std::string path = made.dir + "/pristine.sqlite";
    convbench::add_runs(path, {made.run});
    std::ifstream in(path, std::ios::binary);
    made.image.assign(std::istreambuf_iterator<char>(in), {});
    return made;
  }();
  return p;
}

uint32_t big_endian(const uint8_t* b) {
  return uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | uint32_t{b[3]};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Pristine& p = pristine();
  if (size < 8) return 0;
  std::string image = p.image;
  // SQLite's header: user_version at offset 60, application_id at 68, both big-endian.
  std::copy(data, data + 4, image.begin() + 60);
  if (data[4] & 1) std::copy(data + 4, data + 8, image.begin() + 68);
  for (size_t i = 8; i + 5 <= size; i += 5) image[big_endian(data + i) % image.size()] = static_cast<char>(data[i + 4]);
  const std::string path = p.dir + "/damaged.sqlite";
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path + suffix);
  std::ofstream(path, std::ios::binary) << image;
  const auto tolerated = [](const auto& step) {
    try {
      step();
    } catch (const convbench::HistoryDbError&) {
    } catch (const convbench::InputError&) {
    }
  };
  tolerated([&] { convbench::check_history_addable(path, 0); });
  tolerated([&] {
    convbench::HistoryReader reader(path, 0);
    (void)convbench::format_series_list(reader, "");
  });
  tolerated([&] { (void)convbench::check_history_integrity(path, 0); });
  tolerated([&] { (void)convbench::add_runs(path, {p.run}, 0); });
  return 0;
}
