#include "record/remote/test_servers.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace shardfeed {
namespace testing {
namespace {

bool Executable(const std::string& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0; }

bool PortOpen(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

ServerProcess::~ServerProcess() { Stop(); }

void ServerProcess::Stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 100; ++i) {  // 5 s
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

absl::StatusOr<ServerProcess> ServerProcess::Start(const std::vector<std::string>& argv,
                                                   const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ServerProcess p;
  p.log_ = log;
  const int rc = ::posix_spawn(&p.pid_, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    p.pid_ = -1;
    return absl::UnavailableError(absl::StrCat("cannot start ", argv[0], ": ", strerror(rc)));
  }
  return p;
}

absl::Status ServerProcess::WaitForPort(int port, double seconds) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (PortOpen(port)) return absl::OkStatus();
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      return absl::UnavailableError(absl::StrCat("the server exited: ", LogTail()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("port ", port, " not open after ", seconds, " s: ", LogTail()));
}

std::string ServerProcess::LogTail() const {
  std::ifstream in(log_);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
}

int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string FindBinary(const char* env_name, const char* fallback_name) {
  if (const char* v = std::getenv(env_name); v != nullptr && Executable(v)) return v;
  for (const char* dir : {"/usr/sbin/", "/usr/bin/"}) {
    const std::string p = absl::StrCat(dir, fallback_name);
    if (Executable(p)) return p;
  }
  return "";
}

bool ServersRequired() {
  const char* tf = std::getenv("SHARDFEED_REQUIRE_TF");
  const char* ci = std::getenv("CI");
  return (tf != nullptr && tf[0] == '1') || (ci != nullptr && std::string(ci) == "true");
}

absl::StatusOr<S3Server> StartSeaweedFs(const std::string& weed, const std::string& dir,
                                        const std::string& access, const std::string& secret,
                                        const std::string& bucket) {
  const std::string config = dir + "/s3.json";
  std::ofstream(config) << "{\"identities\":[{\"name\":\"test\",\"credentials\":[{\"accessKey\":\""
                        << access << "\",\"secretKey\":\"" << secret
                        << "\"}],\"actions\":[\"Admin\",\"Read\",\"Write\",\"List\"]}]}";
  // weed mini opens a gRPC port at each HTTP port + 10000: pick ports whose
  // +10000 is free too.
  auto port = [] {
    for (;;) {
      const int p = FreePort();
      if (p + 10000 < 65536 && !PortOpen(p + 10000)) return p;
    }
  };
  const int s3 = port(), master = port(), volume = port(), filer = port(), admin = port();
  S3Server server;
  absl::StatusOr<ServerProcess> p = ServerProcess::Start(
      {weed, "mini", "-dir=" + dir, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
       absl::StrCat("-s3.port=", s3), "-s3.config=" + config, "-bucket=" + bucket,
       absl::StrCat("-master.port=", master), absl::StrCat("-volume.port=", volume),
       absl::StrCat("-filer.port=", filer), absl::StrCat("-admin.port=", admin),
       "-admin.ui=false", "-webdav=false", "-s3.port.iceberg=0", "-s3.port.lance=0"},
      dir + "/weed.log");
  if (!p.ok()) return p.status();
  server.process = *std::move(p);
  if (absl::Status s = server.process.WaitForPort(s3, 60); !s.ok()) return s;
  server.endpoint = absl::StrCat("http://127.0.0.1:", s3);
  return server;
}

absl::StatusOr<S3Server> StartRcloneS3(const std::string& rclone, const std::string& dir,
                                       const std::string& access, const std::string& secret) {
  const int port = FreePort();
  S3Server server;
  absl::StatusOr<ServerProcess> p = ServerProcess::Start(
      {rclone, "serve", "s3", "--config=/dev/null", absl::StrCat("--addr=127.0.0.1:", port),
       "--auth-key=" + access + "," + secret, dir},
      dir + "/../rclone.log");
  if (!p.ok()) return p.status();
  server.process = *std::move(p);
  if (absl::Status s = server.process.WaitForPort(port, 30); !s.ok()) return s;
  server.endpoint = absl::StrCat("http://127.0.0.1:", port);
  return server;
}

absl::StatusOr<S3Server> StartNginx(const std::string& nginx, const std::string& root,
                                    const std::string& work_dir, const TlsFiles& tls) {
  const int port = FreePort();
  const bool https = !tls.certificate.empty();
  const std::string listen =
      https ? absl::StrCat(port, " ssl;\n    ssl_certificate ", tls.certificate,
                           ";\n    ssl_certificate_key ", tls.key, ";\n")
            : absl::StrCat(port, ";\n");
  const std::string conf = work_dir + "/nginx.conf";
  // As root, nginx would chown its temp folders to "nobody" (refused in
  // sandboxes): it keeps the user it runs as.
  std::ofstream(conf) << (::getuid() == 0 ? "user root;\n" : "")
                      << "daemon off;\nmaster_process off;\npid " << work_dir
                      << "/nginx.pid;\nerror_log " << work_dir
                      << "/nginx-error.log;\nevents {}\nhttp {\n  access_log off;\n"
                      << "  client_body_temp_path " << work_dir << ";\n  proxy_temp_path "
                      << work_dir << ";\n  fastcgi_temp_path " << work_dir
                      << ";\n  uwsgi_temp_path " << work_dir << ";\n  scgi_temp_path " << work_dir
                      << ";\n  server {\n    listen 127.0.0.1:" << listen << "    root " << root
                      << ";\n  }\n}\n";
  S3Server server;
  absl::StatusOr<ServerProcess> p =
      ServerProcess::Start({nginx, "-c", conf, "-e", work_dir + "/nginx-error.log"},
                           work_dir + "/nginx.log");
  if (!p.ok()) return p.status();
  server.process = *std::move(p);
  if (absl::Status s = server.process.WaitForPort(port, 30); !s.ok()) return s;
  server.endpoint = absl::StrCat(https ? "https" : "http", "://127.0.0.1:", port);
  return server;
}

}  // namespace testing
}  // namespace shardfeed
