#include "onnx/onnx_model.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <utility>

#include <google/protobuf/unknown_field_set.h>

#include "onnx/onnx_graph.hpp"
#include "ops/op_registry.hpp"
#include "util/input_error.hpp"
#include "util/join.hpp"
#include "util/markup_escape.hpp"
#include "util/sha256.hpp"

namespace convbench {
namespace {

// Bytes per element of the data types a weight may have; 0 for those with no fixed size.
int64_t element_bytes(int32_t type) {
  switch (type) {
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::BOOL: return 1;
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: return 2;
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::UINT32: return 4;
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::UINT64: return 8;
    default: return 0;
  }
}

// How many values the typed (not raw) fields hold for a type.
int64_t typed_count(const onnx::TensorProto& t) {
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: return t.float_data_size();
    case onnx::TensorProto::DOUBLE: return t.double_data_size();
    case onnx::TensorProto::INT64: return t.int64_data_size();
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64: return t.uint64_data_size();
    default: return t.int32_data_size();  // int32, int16, int8, uint16, uint8, bool, float16, bfloat16
  }
}

template <class T>
T little_endian_at(const std::string& raw, int64_t i) {
  T v;
  std::memcpy(&v, raw.data() + i * static_cast<int64_t>(sizeof(T)), sizeof(T));  // x86 and arm64 are little-endian
  return v;
}

std::optional<std::vector<double>> small_values(const onnx::TensorProto& t, int64_t count) {
  if (count > kSmallTensor) return std::nullopt;
  std::vector<double> v;
  const bool raw = !t.raw_data().empty();
  for (int64_t i = 0; i < count; ++i) {
    const int k = static_cast<int>(i);
    switch (t.data_type()) {
      case onnx::TensorProto::FLOAT:
        v.push_back(raw ? little_endian_at<float>(t.raw_data(), i) : t.float_data(k));
        break;
      case onnx::TensorProto::DOUBLE:
        v.push_back(raw ? little_endian_at<double>(t.raw_data(), i) : t.double_data(k));
        break;
      case onnx::TensorProto::INT64:
        v.push_back(static_cast<double>(raw ? little_endian_at<int64_t>(t.raw_data(), i) : t.int64_data(k)));
        break;
      case onnx::TensorProto::INT32:
        v.push_back(raw ? little_endian_at<int32_t>(t.raw_data(), i) : t.int32_data(k));
        break;
      default: return std::nullopt;  // values of other types are never needed
    }
  }
  return v;
}

// IEEE half precision bits as a number (subnormals, infinities and NaN included).
double half_value(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

// bfloat16 bits are a float32's upper half.
double bfloat16_value(uint16_t bits) {
  const uint32_t f = uint32_t{bits} << 16;
  float v;
  std::memcpy(&v, &f, sizeof v);
  return v;
}

// Element i of little-endian bytes of an ONNX floating type.
double element_value(const char* bytes, int64_t i, int32_t type) {
  const char* at = bytes + i * element_bytes(type);
  auto read = [at]<class T>(T v) {
    std::memcpy(&v, at, sizeof v);  // little-endian, as on x86 and arm64
    return v;
  };
  switch (type) {
    case onnx::TensorProto::FLOAT: return read(0.0f);
    case onnx::TensorProto::DOUBLE: return read(0.0);
    case onnx::TensorProto::FLOAT16: return half_value(read(uint16_t{0}));
    case onnx::TensorProto::INT64: return static_cast<double>(read(int64_t{0}));
    case onnx::TensorProto::INT32: return read(int32_t{0});
    default: return bfloat16_value(read(uint16_t{0}));
  }
}

// Closes a file descriptor when it goes out of scope.
class Descriptor {
 public:
  explicit Descriptor(int fd = -1) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  Descriptor(Descriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Descriptor& operator=(Descriptor&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Opens the external data file `location` below the model's folder for reading. The location is
// the model's text, so the model decides what it names: read_onnx_tensor already refused an
// absolute path or a `..`; here each component is opened from the one before it with O_NOFOLLOW,
// so that no symbolic link (a file linked to /etc/shadow, a folder linked elsewhere) is followed,
// and nothing can be swapped in between a check and the open. With allow_links (the spec's
// `allow_links: true`, the command line's --allow-links) the user vouches for the links and they
// are followed. O_NONBLOCK: a FIFO planted as the data file must not hang the open; it is then
// refused as not a regular file.
Descriptor open_external_file(const OnnxContext& cx, const std::string& location, const std::string& where) {
  const auto refuse = [&](const std::string& why) {
    throw InputError({cx.file, 0, 0}, where, "its external data file \"" + printable(location) + "\" " + why);
  };
  const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;
  Descriptor file;
  if (cx.allow_links) {
    file = Descriptor(::open((std::filesystem::path(cx.folder) / location).c_str(), flags));
    if (file.get() < 0) refuse(std::string("cannot be read: ") + std::strerror(errno));
  } else {
    std::vector<std::string> parts;
    for (const auto& part : std::filesystem::path(location))
      if (!part.empty() && part != ".") parts.push_back(part.string());
    if (parts.empty()) refuse("names no file");
    Descriptor dir(::open(cx.folder.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECTORY));
    if (dir.get() < 0) refuse(std::string("cannot be read: the model's folder: ") + std::strerror(errno));
    for (size_t i = 0; i < parts.size(); ++i) {
      const bool last = i + 1 == parts.size();
      Descriptor next(::openat(dir.get(), parts[i].c_str(), (last ? flags : flags | O_DIRECTORY) | O_NOFOLLOW));
      if (next.get() < 0) {
        const int error = errno;
        struct stat st {};
        if (::fstatat(dir.get(), parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
          refuse("is reached through the symbolic link \"" + printable(parts[i]) +
                 "\": refused, since a model's links could point anywhere (convbench would copy what they point "
                 "at into its results and exports); give the variant allow_links: true in the spec (or "
                 "--allow-links with a model file) to follow the links of a model you trust");
        refuse(std::string("cannot be read: ") + std::strerror(error));
      }
      dir = std::move(next);
    }
    file = std::move(dir);
  }
  struct stat st {};
  if (::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) refuse("is not a regular file");
  return file;
}

// The bytes an external data file holds for a tensor of `bytes` bytes: inside the model's folder
// (open_external_file), at `offset`, all of them there.
std::string external_bytes(OnnxContext& cx, const onnx::TensorProto& t, int64_t bytes, const std::string& where) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& entry : t.external_data()) {
    const auto number = [&](const std::string& key) {
      try {
        size_t used = 0;
        const long long v = std::stoll(entry.value(), &used);
        if (used != entry.value().size() || v < 0) throw std::invalid_argument(key);
        return static_cast<int64_t>(v);
      } catch (const std::exception&) {
        throw InputError({cx.file, 0, 0}, where,
                         "external data " + key + " \"" + printable(entry.value()) + "\" is not a byte count");
      }
    };
    if (entry.key() == "location") location = entry.value();
    if (entry.key() == "offset") offset = number("offset");
    if (entry.key() == "length") length = number("length");
  }
  if (location.empty()) throw InputError({cx.file, 0, 0}, where, "external data without a location");
  if (length >= 0 && length != bytes)
    throw InputError(
        {cx.file, 0, 0}, where,
        "external data of " + std::to_string(length) + " bytes, where its shape needs " + std::to_string(bytes));
  if (cx.external_bytes + bytes > kMaxOnnxBytes)
    throw InputError({cx.file, 0, 0}, where,
                     "external data beyond the " + std::to_string(kMaxOnnxBytes >> 20) + " MiB an ONNX block may have");
  const Descriptor file = open_external_file(cx, location, where);
  struct stat st {};
  ::fstat(file.get(), &st);  // open_external_file checked it
  const auto size = static_cast<int64_t>(st.st_size);
  if (offset > size || bytes > size - offset)
    throw InputError({cx.file, 0, 0}, where,
                     "its external data file \"" + printable(location) + "\" holds fewer bytes than offset " +
                         std::to_string(offset) + " plus the " + std::to_string(bytes) + " its shape needs");
  std::string data(static_cast<size_t>(bytes), '\0');
  for (int64_t done = 0; done < bytes;) {
    const ssize_t got = ::pread(file.get(), data.data() + done, static_cast<size_t>(bytes - done), offset + done);
    if (got <= 0) {
      if (got < 0 && errno == EINTR) continue;
      throw InputError({cx.file, 0, 0}, where,
                       "its external data file \"" + printable(location) + "\": read failed" +
                           (got < 0 ? std::string(": ") + std::strerror(errno) : std::string(" (it got shorter)")));
    }
    done += got;
  }
  cx.external_bytes += bytes;
  return data;
}

std::string read_file_bytes(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    throw InputError({path, 0, 0}, "file", "cannot read the ONNX file: no such file");
  if (!std::filesystem::is_regular_file(status))
    throw InputError({path, 0, 0}, "file", "is not a regular file: an ONNX model is one");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError({path, 0, 0}, "file", "cannot read the ONNX file: " + ec.message());
  if (static_cast<int64_t>(size) > kMaxOnnxBytes)
    throw InputError({path, 0, 0}, "file",
                     "is " + std::to_string(size) + " bytes, more than the " + std::to_string(kMaxOnnxBytes >> 20) +
                         " MiB an ONNX block may have");
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<size_t>(size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size)))
    throw InputError({path, 0, 0}, "file", "cannot read the ONNX file: read failed");
  return bytes;
}

// A metadata_props entry `key`: ONNX 1.16's NodeProto field 9 and GraphProto field 16, where
// PyTorch's exporter records what it did to a node and the module's signature. Debian's libonnx
// 1.12 predates both, so its parser keeps them among the message's unknown fields, read here as
// the StringStringEntryProto each one is.
std::optional<std::string> metadata_entry(const google::protobuf::UnknownFieldSet& unknown, int field_number,
                                          const std::string& key) {
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField& field = unknown.field(i);
    if (field.number() != field_number || field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto entry;
    if (entry.ParseFromString(field.length_delimited()) && entry.key() == key) return entry.value();
  }
  return std::nullopt;
}

std::optional<std::string> node_metadata(const onnx::NodeProto& node, const std::string& key) {
  constexpr int kNodeMetadataProps = 9;
  return metadata_entry(node.unknown_fields(), kNodeMetadataProps, key);
}

// The parameters the module had, by their names, from the signature PyTorch's default exporter
// records in the graph's metadata ("pkg.torch.export.ExportedProgram.graph_signature", one line
// per input such as "p_conv_dw_bias: PARAMETER target='conv_dw.bias'"). Empty for other files.
std::set<std::string> exported_parameters(const onnx::GraphProto& graph) {
  constexpr int kGraphMetadataProps = 16;
  std::set<std::string> names;
  const auto signature =
      metadata_entry(graph.unknown_fields(), kGraphMetadataProps, "pkg.torch.export.ExportedProgram.graph_signature");
  if (!signature) return names;
  const std::string marker = ": PARAMETER target='";
  for (size_t at = signature->find(marker); at != std::string::npos; at = signature->find(marker, at + 1)) {
    const size_t begin = at + marker.size(), end = signature->find('\'', begin);
    if (end != std::string::npos) names.insert(signature->substr(begin, end - begin));
  }
  return names;
}

// The default exporter's optimizer drops a conv's or a linear's bias whose values are all zero
// (RemoveOptionalBiasFromConv: timm initialises its biases to zero, torchvision its ConvNeXt's
// classifier), so that its file has fewer parameters than the module. Where the exporter's record
// names the bias, the op gets it back, zeros, as the module holds it.
void restore_dropped_biases(const onnx::GraphProto& graph, const OnnxContext& cx, std::vector<ImportedOp>& ops) {
  const std::set<std::string> parameters = exported_parameters(graph);
  if (parameters.empty()) return;
  for (ImportedOp& op : ops) {
    if ((op.op != "conv" && op.op != "conv_transpose" && op.op != "linear") ||
        op.fields.get<bool>("bias").value_or(false))
      continue;
    const std::string bias = op.name + ".bias";
    if (!parameters.count(bias) || cx.constants.count(bias)) continue;
    const auto out = op.fields.get<int64_t>(op.op == "linear" ? "out_features" : "out_channels");
    if (!out) continue;
    op.fields.set("bias", true);
    op.values["bias"] = std::make_shared<const std::vector<double>>(static_cast<size_t>(*out), 0.0);
  }
}

// Which nodes the graph's outputs depend on, followed through each value's producer whatever the
// nodes' order (nodes out of order are still translated, and refused there). The others are an
// exporter's leftovers, not part of the block: they are not translated and cannot block the file.
// A node with no output is kept: it is refused.
std::vector<bool> live_nodes(const onnx::GraphProto& g) {
  std::map<std::string, int> producer;
  std::vector<bool> live(static_cast<size_t>(g.node_size()), false);
  std::vector<int> todo;
  for (int i = 0; i < g.node_size(); ++i) {
    bool any_output = false;
    for (const std::string& out : g.node(i).output())
      if (!out.empty()) {
        producer.emplace(out, i);
        any_output = true;
      }
    if (!any_output) {
      live[static_cast<size_t>(i)] = true;
      todo.push_back(i);
    }
  }
  const auto need = [&](const std::string& value) {
    const auto it = producer.find(value);
    if (it == producer.end() || live[static_cast<size_t>(it->second)]) return;
    live[static_cast<size_t>(it->second)] = true;
    todo.push_back(it->second);
  };
  for (const auto& out : g.output()) need(out.name());
  while (!todo.empty()) {
    const int i = todo.back();
    todo.pop_back();
    for (const std::string& in : g.node(i).input()) need(in);
  }
  return live;
}

// Translates every live node, in order. A node that cannot be read does not end the reading: the
// nodes after it still are (those reading its outputs only as far as to say whether their operator
// is one convbench translates), so that one refusal names every node that blocks the file, not the
// first of them (issue 52: MBConv's Mul hid behind a later Gather).
void translate_live_nodes(const onnx::GraphProto& g, const std::vector<bool>& live, OnnxContext& cx) {
  const auto& supported = supported_onnx_operators();
  struct Blocker {
    std::string where, why;
  };
  std::vector<Blocker> blockers;
  bool unknown_operator = false;
  std::set<std::string> unread;  // the outputs of nodes that were not translated
  for (int i = 0; i < g.node_size(); ++i) {
    if (!live[static_cast<size_t>(i)]) continue;
    const onnx::NodeProto& node = g.node(i);
    const bool standard = node.domain().empty() || node.domain() == "ai.onnx";
    const bool known = standard && std::find(supported.begin(), supported.end(), node.op_type()) != supported.end();
    const bool after_unread = std::any_of(node.input().begin(), node.input().end(),
                                          [&](const std::string& in) { return unread.count(in) > 0; });
    std::optional<Blocker> refusal;
    if (!known) {
      refusal = Blocker{onnx_node_label(node, i), standard ? std::string("not an operator convbench translates")
                                                           : "domain \"" + printable(node.domain()) +
                                                                 "\": convbench reads the standard operators only"};
      unknown_operator = unknown_operator || standard;
    } else if (!after_unread) {
      try {
        translate_onnx_node(node, i, cx);
      } catch (const InputError& e) {
        if (e.where().file != cx.file) throw;
        refusal = Blocker{e.key_path(), e.message()};
      }
    }
    if (refusal) blockers.push_back(*refusal);
    if (refusal || after_unread)
      for (const std::string& out : node.output()) unread.insert(out);
  }
  if (blockers.empty()) return;
  const std::string reads = unknown_operator ? "; it reads " + join(supported, ", ") : std::string();
  if (blockers.size() == 1) throw InputError({cx.file, 0, 0}, blockers[0].where, blockers[0].why + reads);
  // Every blocker, each with its index, name and operator; bounded, as a hostile file may have
  // 100,000 of them.
  constexpr size_t kListed = 24;
  std::vector<std::string> listed;
  for (size_t k = 0; k < blockers.size() && k < kListed; ++k)
    listed.push_back(blockers[k].where + ": " + blockers[k].why);
  if (blockers.size() > kListed) listed.push_back("and " + std::to_string(blockers.size() - kListed) + " more");
  throw InputError({cx.file, 0, 0}, "graph.node",
                   std::to_string(blockers.size()) + " nodes block reading this file: " + join(listed, "; ") + reads);
}

}  // namespace

std::string onnx_node_label(const onnx::NodeProto& node, int index) {
  std::string label = "graph.node[" + std::to_string(index) + "] (" + printable(node.op_type());
  if (!node.name().empty()) label += " \"" + printable(node.name()) + "\"";
  return label + ")";
}

OnnxTensor read_onnx_tensor(const onnx::TensorProto& t, const std::string& file, const std::string& where) {
  OnnxTensor out;
  out.data_type = t.data_type();
  int64_t count = 1;
  for (const int64_t d : t.dims()) {
    if (d < 0) throw InputError({file, 0, 0}, where, "a negative dimension (" + std::to_string(d) + ")");
    if (d != 0 && count > (int64_t{1} << 40) / d)
      throw InputError({file, 0, 0}, where, "claims more than 2^40 elements");
    count *= d;
    out.dims.push_back(d);
  }
  out.proto = &t;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    // The values live in another file, read when a parameter takes them (read_onnx_values); a
    // location outside the model's folder is refused here, as onnxruntime does.
    for (const auto& entry : t.external_data())
      if (entry.key() == "location") {
        const std::filesystem::path p(entry.value());
        bool escapes = p.is_absolute();
        for (const auto& part : p) escapes = escapes || part == "..";
        if (escapes)
          throw InputError(
              {file, 0, 0}, where,
              "its external data file \"" + printable(entry.value()) + "\" lies outside the model's folder: refused");
      }
    return out;
  }
  const int64_t bytes = element_bytes(t.data_type());
  if (bytes == 0)
    throw InputError({file, 0, 0}, where,
                     "data type " + std::to_string(t.data_type()) + " is not a numeric type a weight may have");
  if (!t.raw_data().empty()) {
    if (static_cast<int64_t>(t.raw_data().size()) != count * bytes)
      throw InputError({file, 0, 0}, where,
                       "holds " + std::to_string(t.raw_data().size()) + " bytes, where its shape needs " +
                           std::to_string(count * bytes));
  } else if (typed_count(t) != count) {
    throw InputError(
        {file, 0, 0}, where,
        "holds " + std::to_string(typed_count(t)) + " values, where its shape needs " + std::to_string(count));
  }
  out.values = small_values(t, count);
  return out;
}

int64_t OnnxTensor::elements() const {
  int64_t n = 1;
  for (const int64_t d : dims) n *= d;  // read_onnx_tensor bounded the product
  return n;
}

void hold_onnx_values(OnnxContext& cx, int64_t count, const std::string& where) {
  // Compared before it is multiplied: a count from a file (a channel count) may be any int64.
  const int64_t room = (kMaxOnnxValueBytes - cx.held_value_bytes) / static_cast<int64_t>(sizeof(double));
  if (count < 0 || count > room)
    throw InputError({cx.file, 0, 0}, where,
                     std::to_string(count) + " more values would take the starting values held for the block past " +
                         std::to_string(kMaxOnnxValueBytes >> 20) +
                         " MiB (as doubles, each shared tensor counted once): more than a block's weights");
  cx.held_value_bytes += count * static_cast<int64_t>(sizeof(double));
}

GivenValues read_onnx_values(OnnxContext& cx, const OnnxTensor& t, const std::string& where, ValueKind kind) {
  if (!t.proto) {  // a Constant node's value_float(s): small, held already
    if (!t.values) throw InputError({cx.file, 0, 0}, where, "its values are not in a form convbench reads");
    return std::make_shared<const std::vector<double>>(*t.values);
  }
  const onnx::TensorProto& p = *t.proto;
  if (const auto known = cx.values_read.find(&p); known != cx.values_read.end()) return known->second;
  const int32_t type = p.data_type();
  const bool integer = type == onnx::TensorProto::INT64 || type == onnx::TensorProto::INT32;
  if (kind == ValueKind::indices && !integer)
    throw InputError({cx.file, 0, 0}, where, "data type " + std::to_string(type) + ": indices are int64 or int32");
  if (kind == ValueKind::weight && type != onnx::TensorProto::FLOAT && type != onnx::TensorProto::DOUBLE &&
      type != onnx::TensorProto::FLOAT16 && type != onnx::TensorProto::BFLOAT16)
    throw InputError({cx.file, 0, 0}, where,
                     "data type " + std::to_string(type) +
                         ": a weight or statistic convbench loads is float, double, float16 or bfloat16");
  const int64_t n = t.elements();
  hold_onnx_values(cx, n, where);
  auto values = std::make_shared<std::vector<double>>();
  values->reserve(static_cast<size_t>(n));
  if (p.data_location() == onnx::TensorProto::EXTERNAL || !p.raw_data().empty()) {
    const std::string ext = p.data_location() == onnx::TensorProto::EXTERNAL
                                ? external_bytes(cx, p, n * element_bytes(type), where)
                                : std::string();
    const char* bytes = ext.empty() ? p.raw_data().data() : ext.data();
    for (int64_t i = 0; i < n; ++i) values->push_back(element_value(bytes, i, type));
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const int k = static_cast<int>(i);
      switch (type) {
        case onnx::TensorProto::FLOAT: values->push_back(p.float_data(k)); break;
        case onnx::TensorProto::DOUBLE: values->push_back(p.double_data(k)); break;
        case onnx::TensorProto::FLOAT16: values->push_back(half_value(static_cast<uint16_t>(p.int32_data(k)))); break;
        case onnx::TensorProto::INT64: values->push_back(static_cast<double>(p.int64_data(k))); break;
        case onnx::TensorProto::INT32: values->push_back(p.int32_data(k)); break;
        default: values->push_back(bfloat16_value(static_cast<uint16_t>(p.int32_data(k))));
      }
    }
  }
  cx.values_read[&p] = values;
  return values;
}

const std::vector<std::string>& supported_onnx_operators() {
  // The operators onnx_nodes.cpp reads itself (patterns, shapes, constants, the ops with several
  // forms), then every one an op's definition imports one-to-one (OpDefinition::onnx_import).
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v = {"Add",
                                  "AveragePool",
                                  "BatchNormalization",
                                  "Cast",
                                  "Clip",
                                  "Concat",
                                  "Constant",
                                  "ConstantOfShape",
                                  "Conv",
                                  "ConvTranspose",
                                  "DepthToSpace",
                                  "Div",
                                  "Dropout",
                                  "Erf",
                                  "Flatten",
                                  "Gather",
                                  "Gemm",
                                  "GroupNormalization",
                                  "Identity",
                                  "InstanceNormalization",
                                  "LayerNormalization",
                                  "Less",
                                  "MatMul",
                                  "MaxPool",
                                  "Mul",
                                  "RandomUniformLike",
                                  "ReduceMean",
                                  "Reshape",
                                  "Resize",
                                  "Shape",
                                  "Slice",
                                  "SpaceToDepth",
                                  "Split",
                                  "Sub",
                                  "Transpose",
                                  "Unsqueeze",
                                  "Upsample"};
    for (const OpDefinition* d : op_definitions())
      if (d->onnx_import) v.emplace_back(d->onnx_import->node);
    std::sort(v.begin(), v.end());
    return v;
  }();
  return ops;
}

OnnxBlock read_onnx_block(const std::string& path, const OnnxReadOptions& options) {
  return parse_onnx_block(read_file_bytes(path), path, options);
}

OnnxBlock parse_onnx_block(const std::string& bytes, const std::string& path, const OnnxReadOptions& options) {
  if (static_cast<int64_t>(bytes.size()) > kMaxOnnxBytes)
    throw InputError({path, 0, 0}, "file", "is larger than an ONNX block may be");
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    throw InputError({path, 0, 0}, "file",
                     "is not an ONNX model: its protobuf does not parse (truncated, or another kind of file)");
  if (!model.has_graph()) throw InputError({path, 0, 0}, "graph", "the model has no graph");
  OnnxBlock block;
  block.file = path;
  block.sha256 = sha256_hex(bytes);
  block.producer = model.producer_name() + (model.producer_version().empty() ? "" : " " + model.producer_version());
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") block.opset = o.version();
  if (block.opset < 7 || block.opset > 21)
    throw InputError({path, 0, 0}, "opset_import",
                     block.opset == 0
                         ? std::string("the model imports no opset of the default domain")
                         : "opset " + std::to_string(block.opset) + " is outside the opsets convbench reads (7 to 21)");
  const onnx::GraphProto& g = model.graph();
  if (g.node_size() > kMaxOnnxNodes)
    throw InputError(
        {path, 0, 0}, "graph.node",
        std::to_string(g.node_size()) + " nodes, more than the " + std::to_string(kMaxOnnxNodes) + " a block may have");
  if (g.sparse_initializer_size() > 0)
    throw InputError({path, 0, 0}, "graph.sparse_initializer", "sparse initializers are not read");

  OnnxContext cx;
  cx.file = path;
  cx.allow_links = options.allow_links;
  cx.folder = std::filesystem::path(path).parent_path().string();
  if (cx.folder.empty()) cx.folder = ".";
  cx.opset = block.opset;
  for (int i = 0; i < g.initializer_size(); ++i) {
    const std::string where =
        "graph.initializer[" + std::to_string(i) + "] (" + printable(g.initializer(i).name()) + ")";
    // Two initializers of one name: which one a node reads would be a guess (the ONNX checker
    // refuses such a graph too).
    if (cx.constants.count(g.initializer(i).name()))
      throw InputError({path, 0, 0}, where,
                       "a second initializer named \"" + printable(g.initializer(i).name()) + "\": names are unique");
    cx.constants[g.initializer(i).name()] = read_onnx_tensor(g.initializer(i), path, where);
  }
  // The data input: the graph's one input that is not an initializer (older exporters list the
  // initializers among the inputs too).
  int data_input = -1;
  for (int i = 0; i < g.input_size(); ++i) {
    if (cx.constants.count(g.input(i).name())) continue;
    if (data_input >= 0)
      throw InputError({path, 0, 0}, "graph.input[" + std::to_string(i) + "]",
                       "a second data input (\"" + printable(g.input(i).name()) + "\"): a block has one input");
    data_input = i;
  }
  if (data_input < 0) throw InputError({path, 0, 0}, "graph.input", "the graph has no data input");
  const onnx::ValueInfoProto& input = g.input(data_input);
  const std::string input_at = "graph.input[" + std::to_string(data_input) + "] (" + printable(input.name()) + ")";
  if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape())
    throw InputError({path, 0, 0}, input_at, "has no tensor shape: convbench needs its rank (N, C, spatial)");
  for (const auto& d : input.type().tensor_type().shape().dim()) {
    // As every size a spec takes: at most 2^31 (a channel count is what later ops multiply).
    if (d.has_dim_value() && d.dim_value() > (int64_t{1} << 31))
      throw InputError({path, 0, 0}, input_at,
                       "a dim of " + std::to_string(d.dim_value()) + ": convbench takes sizes from 1 to 2^31");
    block.input_shape.push_back(d.has_dim_value() && d.dim_value() > 0 ? std::optional<int64_t>(d.dim_value())
                                                                       : std::nullopt);
  }
  if (block.input_shape.size() < 3 || block.input_shape.size() > 5)
    throw InputError(
        {path, 0, 0}, input_at,
        "has rank " + std::to_string(block.input_shape.size()) + ": a block's input is N x C x 1 to 3 spatial dims");
  cx.dims = static_cast<int>(block.input_shape.size()) - 2;
  cx.values[input.name()] = "input";
  if (block.input_shape[1]) cx.channels["input"] = *block.input_shape[1];
  cx.batch = block.input_shape[0];
  cx.names.insert("input");

  const std::vector<bool> live = live_nodes(g);
  for (int i = 0; i < g.node_size(); ++i)
    if (live[static_cast<size_t>(i)])
      for (const std::string& in : g.node(i).input()) ++cx.uses[in];
  for (const auto& out : g.output()) ++cx.uses[out.name()];
  translate_live_nodes(g, live, cx);
  // Convs into which an exporter folded a batch norm: the default exporter says so in the node's
  // metadata; the TorchScript exporter's constant folding (an eval-mode export) names the weight it
  // computed "onnx::Conv_<n>", where a parameter keeps its module's name.
  const bool pytorch = model.producer_name() == "pytorch";
  for (int i = 0; i < g.node_size(); ++i) {
    if (!live[static_cast<size_t>(i)]) continue;
    const onnx::NodeProto& node = g.node(i);
    const auto rules = node_metadata(node, "pkg.onnxscript.rewriter.rule_name");
    const bool fused = rules && rules->find("FuseBatchNormIntoConv") != std::string::npos;
    const bool computed_weight = pytorch && (node.op_type() == "Conv" || node.op_type() == "ConvTranspose") &&
                                 node.input_size() > 1 && node.input(1).starts_with("onnx::");
    if (fused || computed_weight) block.folded_norms.push_back(onnx_node_label(node, i));
  }

  if (g.output_size() != 1)
    throw InputError({path, 0, 0}, "graph.output",
                     std::to_string(g.output_size()) + " outputs: a block has one output");
  const auto out = cx.values.find(g.output(0).name());
  if (cx.channels_last.count(g.output(0).name()))
    throw InputError({path, 0, 0}, "graph.output[0]",
                     "\"" + printable(g.output(0).name()) +
                         "\" is a channels-last view (N x spatial x C, after a Transpose): a block's output is N x C x "
                         "spatial");
  if (out == cx.values.end() || out->second == "input")
    throw InputError({path, 0, 0}, "graph.output[0]",
                     "\"" + printable(g.output(0).name()) + "\" is not computed from the input by any node");
  if (cx.ops.empty()) throw InputError({path, 0, 0}, "graph.node", "no node computes anything from the input");
  restore_dropped_biases(g, cx, cx.ops);
  block.ops = std::move(cx.ops);
  block.output = out->second;
  if (const auto c = cx.channels.find(block.output); c != cx.channels.end()) block.output_channels = c->second;
  return block;
}

}  // namespace convbench
