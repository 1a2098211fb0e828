// GPU time of work queued on a stream, from a pair of CUDA events (nvbench's method): the
// interval the device spent between the two records, without the host's launch overhead or
// the synchronisation that a host clock would include. The header names no CUDA type beyond
// the opaque stream handle, so measurement code can hold a timer without CUDA's headers.
#pragma once

struct CUstream_st;  // cudaStream_t is CUstream_st*
struct CUevent_st;   // cudaEvent_t is CUevent_st*

namespace convbench::cuda {

class EventTimer {
 public:
  explicit EventTimer(CUstream_st* stream);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Records the start / stop event on the stream (returns at once; the device records later).
  void start();
  void stop();
  // Waits for the stop event, then returns the milliseconds between start and stop.
  double elapsed_ms();

 private:
  CUstream_st* stream_;
  CUevent_st* start_ = nullptr;
  CUevent_st* stop_ = nullptr;
  bool started_ = false, stopped_ = false;
};

}  // namespace convbench::cuda
