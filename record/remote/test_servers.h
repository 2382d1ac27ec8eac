// Test support: real servers on 127.0.0.1 for the remote-dataset tests,
// started and stopped inside the test (RAII), every wait bounded.
//
//  - SeaweedFS (`weed mini`, strict SigV4): the main S3 server;
//  - rclone (`rclone serve s3`): a second S3 implementation (it answers
//    Range with 200 + Content-Range);
//  - nginx (Debian): HTTP or HTTPS with Range.
// Binaries: SHARDFEED_WEED, SHARDFEED_RCLONE (tools/setup.sh's
// shardfeed_object_store_servers exports them), nginx from PATH or
// /usr/sbin. A missing binary skips the test, except under CI
// (SHARDFEED_REQUIRE_TF=1 or CI=true), where it fails.
#ifndef SHARDFEED_RECORD_REMOTE_TEST_SERVERS_H_
#define SHARDFEED_RECORD_REMOTE_TEST_SERVERS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace shardfeed {
namespace testing {

// A child process, killed (SIGTERM, then SIGKILL after 5 s) on destruction.
class ServerProcess {
 public:
  ServerProcess() = default;
  ~ServerProcess();
  ServerProcess(ServerProcess&& o) noexcept : pid_(o.pid_), log_(std::move(o.log_)) { o.pid_ = -1; }
  ServerProcess& operator=(ServerProcess&& o) noexcept {
    if (this != &o) {
      Stop();
      pid_ = o.pid_;
      log_ = std::move(o.log_);
      o.pid_ = -1;
    }
    return *this;
  }
  // argv[0] is the binary's path; output goes to `log`.
  static absl::StatusOr<ServerProcess> Start(const std::vector<std::string>& argv,
                                             const std::string& log);
  // Waits (at most `seconds`) until 127.0.0.1:port accepts connections.
  absl::Status WaitForPort(int port, double seconds) const;
  std::string LogTail() const;
  void Stop();

 private:
  pid_t pid_ = -1;
  std::string log_;
};

// A TCP port free on 127.0.0.1 now.
int FreePort();

// The binary's path, or "" (the caller skips or fails: MissingBinary).
std::string FindBinary(const char* env_name, const char* fallback_name);
// True when a missing server must fail the test (CI).
bool ServersRequired();

struct S3Server {
  ServerProcess process;
  std::string endpoint;  // "http://127.0.0.1:PORT"
};

// SeaweedFS with one identity (access/secret) and `bucket` created.
absl::StatusOr<S3Server> StartSeaweedFs(const std::string& weed, const std::string& dir,
                                        const std::string& access, const std::string& secret,
                                        const std::string& bucket);

// rclone serving `dir` (its sub-folders are buckets) over S3.
absl::StatusOr<S3Server> StartRcloneS3(const std::string& rclone, const std::string& dir,
                                       const std::string& access, const std::string& secret);

// A server certificate and its key (PEM files) for HTTPS.
struct TlsFiles {
  std::string certificate, key;
};

// nginx serving `root` on loopback: over HTTP, or over HTTPS when `tls` has
// a certificate (endpoint "https://127.0.0.1:PORT").
absl::StatusOr<S3Server> StartNginx(const std::string& nginx, const std::string& root,
                                    const std::string& work_dir, const TlsFiles& tls = {});

}  // namespace testing
}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_REMOTE_TEST_SERVERS_H_
