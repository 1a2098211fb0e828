// What the host backends (reference, cpu) share: they compute synchronously in the host's memory,
// so their allocator is the caching host allocator, their host copies are plain byte copies and
// their measurement is the host's (a steady clock, the CPU's clock, no replay). Each derived
// backend adds its kernels, its limitations, its workspace and its accumulate/add.
#pragma once

#include <string>

#include "runtime/backend.hpp"
#include "runtime/caching_host_allocator.hpp"

namespace convbench {

class HostBackend : public Backend {
 public:
  explicit HostBackend(const std::string& name) : name_(name), measurement_(name) {}

  std::string name() const override { return name_; }
  Allocator& allocator() override { return allocator_; }

  void copy_from_host(Tensor& dst, const void* src) override;
  void copy_to_host(const Tensor& src, void* dst) override;

  DeviceMeasurement& measurement() override { return measurement_; }

  void scale(Tensor& out, const Tensor& in, double factor) override;
  bool unscale(const std::vector<Tensor*>& grads, double factor, Tensor& flags) override;

 private:
  std::string name_;
  CachingHostAllocator allocator_;
  HostMeasurement measurement_;
};

}  // namespace convbench
