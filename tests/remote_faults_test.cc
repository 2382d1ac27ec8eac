// Every fault injected between the client and SeaweedFS is retried or
// reported, never a hang: tests/fault_proxy.py (asyncio, loopback) adds
// latency, connection resets mid-body, stalled trickles and 503 SlowDown
// bursts; the batches still equal the local ones, and a server that only
// answers 503 is UNAVAILABLE naming the URL and the status, within the
// retry budget.
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "reader/dataset.h"
#include "record/remote/http_client.h"
#include "record/remote/object_store.h"
#include "record/remote/test_servers.h"
#include "record/test_util.h"
#include "tests/remote_test_util.h"

namespace shardfeed {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The proxy in front of `upstream` with `faults` (fault_proxy.py flags).
struct Proxy {
  testing::ServerProcess process;
  std::string endpoint, stats;
};

absl::StatusOr<Proxy> StartProxy(const std::string& upstream,
                                 const std::vector<std::string>& faults) {
  const std::string dir = testing::MakeTempDir();
  Proxy p;
  p.stats = dir + "/stats.json";
  std::vector<std::string> argv = {"/usr/bin/python3", "tests/fault_proxy.py",
                                   "--upstream", upstream.substr(upstream.find("//") + 2),
                                   "--port-file", dir + "/port", "--stats", p.stats};
  argv.insert(argv.end(), faults.begin(), faults.end());
  auto process = testing::ServerProcess::Start(argv, dir + "/proxy.log");
  if (!process.ok()) return process.status();
  p.process = *std::move(process);
  for (int i = 0; i < 200 && ReadText(dir + "/port").empty(); ++i) {  // 20 s
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string port = ReadText(dir + "/port");
  if (port.empty()) return absl::UnavailableError("the proxy did not start: " + p.process.LogTail());
  p.endpoint = "http://127.0.0.1:" + port;
  return p;
}

class RemoteFaultsTest : public testing::SeaweedSuite {
 protected:
  void SetUp() override {
    SeaweedSuite::SetUp();
    saved_ = remote::HttpClient::Get().options();
  }
  void TearDown() override { remote::HttpClient::Get().set_options(saved_); }
  remote::HttpOptions saved_;
};

TEST_F(RemoteFaultsTest, ResetsStallsAndSlowDownsAreRetried) {
  auto proxy = StartProxy(endpoint(),
                          {"--latency-ms", "5", "--jitter-ms", "3", "--reset-every", "4",
                           "--trickle-every", "9", "--slowdown-every", "6",
                           "--slowdown-burst", "2"});
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  remote::HttpOptions o = saved_;
  o.stall_seconds = 1;  // a trickle is abandoned after 1 s below 1 KB/s
  o.max_attempts = 10;
  o.backoff_base = 0.01;
  o.backoff_cap = 0.2;
  remote::HttpClient::Get().set_options(o);
  testing::UseEnvironmentKeys(proxy->endpoint);
  const auto start = std::chrono::steady_clock::now();
  for (const LoaderOptions& lo :
       {testing::EveryLoaderPath()[0], testing::EveryLoaderPath()[3]}) {
    auto local = testing::ReadBatchBytes({local_dir()}, lo);
    ASSERT_TRUE(local.ok()) << local.status();
    auto remote = testing::ReadBatchBytes({"s3://data/ds/"}, lo);
    ASSERT_TRUE(remote.ok()) << remote.status();
    EXPECT_TRUE(*local == *remote);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(120));
  const std::string stats = ReadText(proxy->stats);
  for (const char* fault : {"\"resets\": 0", "\"trickles\": 0", "\"slowdowns\": 0"}) {
    EXPECT_EQ(stats.find(fault), std::string::npos) << "no fault of this kind was injected: "
                                                    << stats;
  }
}

TEST_F(RemoteFaultsTest, OnlySlowDownIsUnavailableNamingUrlAndStatus) {
  auto proxy = StartProxy(endpoint(), {"--always-503"});
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  remote::HttpOptions o = saved_;
  o.max_attempts = 3;
  o.backoff_base = 0.01;
  o.backoff_cap = 0.05;
  remote::HttpClient::Get().set_options(o);
  testing::UseEnvironmentKeys(proxy->endpoint);
  auto ds = Dataset::Open({"s3://data/ds/"});
  ASSERT_FALSE(ds.ok());
  EXPECT_TRUE(absl::IsUnavailable(ds.status())) << ds.status();
  EXPECT_NE(ds.status().message().find("HTTP 503"), std::string::npos) << ds.status();
  EXPECT_NE(ds.status().message().find(proxy->endpoint), std::string::npos) << ds.status();
  EXPECT_NE(ds.status().message().find("3 attempts"), std::string::npos) << ds.status();
  EXPECT_EQ(ds.status().message().find(testing::kTestSecretKey), std::string::npos);
}

TEST_F(RemoteFaultsTest, AStalledServerTimesOut) {
  // Every body stalls after its first byte: each attempt is abandoned after
  // stall_seconds, and the read fails after max_attempts: never a hang.
  auto proxy = StartProxy(endpoint(), {"--trickle-every", "1"});
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  remote::HttpOptions o = saved_;
  o.stall_seconds = 1;
  o.max_attempts = 2;
  o.backoff_base = 0.01;
  remote::HttpClient::Get().set_options(o);
  testing::UseEnvironmentKeys(proxy->endpoint);
  const auto start = std::chrono::steady_clock::now();
  auto ds = Dataset::Open({"s3://data/ds/"});
  EXPECT_FALSE(ds.ok());
  EXPECT_TRUE(absl::IsUnavailable(ds.status())) << ds.status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

}  // namespace
}  // namespace shardfeed
