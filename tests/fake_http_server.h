// FakeHttpServer: a tiny HTTP/1.1 server on 127.0.0.1 for tests that play
// a metadata service (ECS/EKS container credentials, EC2 instance metadata):
// one request per connection (Connection: close), answered by a handler
// called on the server's thread.
//
// Lifetime: listens from construction to destruction (RAII); the accept loop
// polls a stop flag every 100 ms, so destruction is bounded. The handler
// must be thread-compatible with the test (it runs on the server thread;
// guard shared state). Requests are counted.
#ifndef SHARDFEED_TESTS_FAKE_HTTP_SERVER_H_
#define SHARDFEED_TESTS_FAKE_HTTP_SERVER_H_

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <thread>

namespace shardfeed {
namespace testing {

struct FakeRequest {
  std::string method, path;
  std::map<std::string, std::string>
      headers; // lower-case names, trimmed values
  std::string Header(const std::string &name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct FakeAnswer {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain";
};

class FakeHttpServer {
public:
  using Handler = std::function<FakeAnswer(const FakeRequest &)>;
  explicit FakeHttpServer(Handler handler);
  ~FakeHttpServer();
  FakeHttpServer(const FakeHttpServer &) = delete;
  FakeHttpServer &operator=(const FakeHttpServer &) = delete;

  // "http://127.0.0.1:PORT"
  std::string endpoint() const;
  int requests() const { return requests_; }

private:
  void Serve();
  Handler handler_;
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

} // namespace testing
} // namespace shardfeed

#endif // SHARDFEED_TESTS_FAKE_HTTP_SERVER_H_
