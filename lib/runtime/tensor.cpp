#include "runtime/tensor.hpp"

namespace convbench {

Storage::Storage(Allocator& allocator, int64_t bytes, MemoryCategory category)
    : allocator_(allocator), data_(allocator.allocate(bytes, category)), bytes_(bytes), category_(category) {}

Storage::~Storage() { allocator_.deallocate(data_, bytes_, category_); }

Tensor make_tensor(Allocator& allocator, const TensorDesc& desc, MemoryCategory category) {
  return Tensor{desc, std::make_shared<Storage>(allocator, desc.bytes(), category)};
}

}  // namespace convbench
