#include "this_program.hpp"

#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace convbench::cli {

std::string this_program() {
  std::string buf(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n < 0)
    throw std::runtime_error("cannot find this program's path (/proc/self/exe): " +
                             std::generic_category().message(errno));
  buf.resize(static_cast<size_t>(n));
  return buf;
}

}  // namespace convbench::cli
