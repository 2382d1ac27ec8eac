// ConsumerFence with a fake GpuOps: the slot-reuse rules without a GPU.
// Regressions: the old ring remembered one stream (the last), treated
// stream 0 as "no stream", let a slot released with no stream be refilled at
// once, and ignored a failed cudaEventRecord.
#include "reader/consumer_fence.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace shardfeed {
namespace {

class FakeOps : public GpuOps {
 public:
  absl::StatusOr<int> StreamDevice(void* stream) override {
    auto it = device_of.find(reinterpret_cast<intptr_t>(stream));
    return it == device_of.end() ? 0 : it->second;
  }
  absl::StatusOr<void*> CreateEvent(int device) override {
    log.push_back(device == 0 ? "create" : absl::StrCat("create on d", device));
    event_device[++events] = device;
    return reinterpret_cast<void*>(events);
  }
  void DestroyEvent(void*, int) override { ++destroyed; }
  absl::Status RecordEvent(void* event, int, void* stream) override {
    log.push_back(absl::StrCat("record e", reinterpret_cast<intptr_t>(event), " s",
                               reinterpret_cast<intptr_t>(stream)));
    // As cudaEventRecord: the event and the stream must be on one device.
    if (event_device[reinterpret_cast<intptr_t>(event)] != *StreamDevice(stream)) {
      return absl::InvalidArgumentError("event and stream on different devices");
    }
    return fail_record ? absl::InternalError("record failed") : absl::OkStatus();
  }
  absl::Status StreamWaitEvent(void* stream, void* event) override {
    log.push_back(absl::StrCat("wait s", reinterpret_cast<intptr_t>(stream), " e",
                               reinterpret_cast<intptr_t>(event)));
    return absl::OkStatus();
  }
  absl::Status SynchronizeDevice() override {
    log.push_back("sync device");
    return absl::OkStatus();
  }
  std::vector<std::string> log;
  std::map<intptr_t, int> device_of;  // stream -> device (default 0)
  std::map<intptr_t, int> event_device;  // event -> the device it was created on
  intptr_t events = 0;
  int destroyed = 0;
  bool fail_record = false;
};

void* S(intptr_t s) { return reinterpret_cast<void*>(s); }

TEST(ConsumerFence, EveryConsumerStreamIsWaitedFor) {
  FakeOps ops;
  {
    ConsumerFence f(&ops);
    f.OnRelease(ConsumerStreams::Of({S(7), S(8), S(9)}));
    ASSERT_TRUE(f.BeforeReuse(S(100)).ok());
    std::vector<std::string> want = {"create", "record e1 s7", "create", "record e2 s8",
                                     "create", "record e3 s9", "wait s100 e1", "wait s100 e2",
                                     "wait s100 e3"};
    EXPECT_EQ(want, ops.log);
    // Events are reused, and a reused slot has nothing left to wait for.
    ops.log.clear();
    ASSERT_TRUE(f.BeforeReuse(S(100)).ok());
    EXPECT_TRUE(ops.log.empty());
    f.OnRelease(ConsumerStreams::Of({S(5)}));
    ASSERT_TRUE(f.BeforeReuse(S(100)).ok());
    EXPECT_EQ((std::vector<std::string>{"record e1 s5", "wait s100 e1"}), ops.log);
  }
  EXPECT_EQ(3, ops.destroyed);
}

TEST(ConsumerFence, StreamZeroIsAStream) {
  FakeOps ops;
  ConsumerFence f(&ops);
  f.OnRelease(ConsumerStreams::Of({nullptr}));
  EXPECT_FALSE(f.must_sync_device());
  ASSERT_TRUE(f.BeforeReuse(S(100)).ok());
  EXPECT_EQ((std::vector<std::string>{"create", "record e1 s0", "wait s100 e1"}), ops.log);
}

TEST(ConsumerFence, UnknownStreamsWaitForTheWholeDevice) {
  FakeOps ops;
  ConsumerFence f(&ops);
  f.OnRelease(ConsumerStreams::Unknown());
  EXPECT_TRUE(f.must_sync_device());
  ASSERT_TRUE(f.BeforeReuse(S(100)).ok());
  EXPECT_EQ((std::vector<std::string>{"sync device"}), ops.log);
  EXPECT_FALSE(f.must_sync_device());
}

TEST(ConsumerFence, AFailedEventRecordWaitsForTheWholeDevice) {
  FakeOps ops;
  ops.fail_record = true;
  ConsumerFence f(&ops);
  f.OnRelease(ConsumerStreams::Of({S(7)}));
  EXPECT_TRUE(f.must_sync_device());
  ASSERT_TRUE(f.BeforeReuse(S(100)).ok());
  EXPECT_EQ("sync device", ops.log.back());
}

TEST(ConsumerFence, HostPathDoesNothing) {
  ConsumerFence f(nullptr);
  f.OnRelease(ConsumerStreams::Unknown());
  EXPECT_TRUE(f.BeforeReuse(nullptr).ok());
}

// Issue 21 defect 8: a consumer stream of another device gets an event of
// that device (one of the loader's device cannot be recorded there), and a
// reused event of the wrong device is replaced.
TEST(ConsumerFence, EventsLiveOnTheConsumerStreamsDevice) {
  FakeOps ops;
  ops.device_of[8] = 1;
  {
    ConsumerFence f(&ops);
    f.OnRelease(ConsumerStreams::Of({S(7), S(8)}));
    EXPECT_FALSE(f.must_sync_device());
    ASSERT_TRUE(f.BeforeReuse(S(100)).ok());
    EXPECT_EQ((std::vector<std::string>{"create", "record e1 s7", "create on d1", "record e2 s8",
                                        "wait s100 e1", "wait s100 e2"}),
              ops.log);
    ops.log.clear();
    // Event 1 is device 0's: dropped, and device 1's event 2 takes its place.
    f.OnRelease(ConsumerStreams::Of({S(8)}));
    ASSERT_TRUE(f.BeforeReuse(S(100)).ok());
    EXPECT_EQ((std::vector<std::string>{"record e2 s8", "wait s100 e2"}), ops.log);
    EXPECT_EQ(1, ops.destroyed);
    ops.log.clear();
    f.OnRelease(ConsumerStreams::Of({S(7)}));  // device 0 again: a new event
    ASSERT_TRUE(f.BeforeReuse(S(100)).ok());
    EXPECT_EQ((std::vector<std::string>{"create", "record e3 s7", "wait s100 e3"}), ops.log);
  }
  EXPECT_EQ(3, ops.destroyed);
}

// Review of defect 8's fix: of a pool [e1 on d0, e2 on d0] released on a
// device-1 stream, only e1 was replaced; e2 (device 0) failed to record on
// the device-1 stream and the fallback synchronized device 0, not device 1.
TEST(ConsumerFence, EveryPooledEventOfAnotherDeviceIsReplaced) {
  FakeOps ops;
  ops.device_of[9] = 1;
  ConsumerFence f(&ops);
  f.OnRelease(ConsumerStreams::Of({S(7), S(8)}));  // the pool: e1, e2 on device 0
  ASSERT_TRUE(f.BeforeReuse(S(100)).ok());
  ops.log.clear();
  f.OnRelease(ConsumerStreams::Of({S(9)}));
  EXPECT_FALSE(f.must_sync_device());
  EXPECT_EQ(1u, f.pending_events());
  ASSERT_TRUE(f.BeforeReuse(S(100)).ok());
  EXPECT_EQ((std::vector<std::string>{"create on d1", "record e3 s9", "wait s100 e3"}), ops.log);
  EXPECT_EQ(2, ops.destroyed);
}

}  // namespace
}  // namespace shardfeed
