// A tensor: its description and a reference-counted storage owned through an allocator. Dropping
// the last reference returns the bytes to the allocator, which is how the executor frees tensors
// at their last use, exactly as reference counting does in PyTorch.
#pragma once

#include <memory>

#include "graph/tensor_desc.hpp"
#include "runtime/allocator.hpp"

namespace convbench {

class Storage {
 public:
  Storage(Allocator& allocator, int64_t bytes, MemoryCategory category);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  int64_t bytes() const { return bytes_; }
  MemoryCategory category() const { return category_; }
  bool on_device() const { return allocator_.on_device(); }

 private:
  Allocator& allocator_;
  void* data_;
  int64_t bytes_;
  MemoryCategory category_;
};

struct Tensor {
  TensorDesc desc;
  std::shared_ptr<Storage> storage;

  void* raw() const { return storage ? storage->data() : nullptr; }
  template <class T>
  T* data() const {
    return static_cast<T*>(raw());
  }
  bool defined() const { return storage != nullptr; }
};

// Allocates storage for `desc` (the tensor is uninitialised).
Tensor make_tensor(Allocator& allocator, const TensorDesc& desc, MemoryCategory category);

}  // namespace convbench
