#include "tests/fake_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace shardfeed {
namespace testing {
namespace {

const char *Reason(int status) {
  switch (status) {
  case 200:
    return "OK";
  case 401:
    return "Unauthorized";
  case 403:
    return "Forbidden";
  case 404:
    return "Not Found";
  case 405:
    return "Method Not Allowed";
  default:
    return "Error";
  }
}

FakeRequest Parse(const std::string &head) {
  FakeRequest r;
  bool first = true;
  for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
    if (first) {
      std::vector<std::string> parts = absl::StrSplit(line, ' ');
      if (parts.size() >= 2) {
        r.method = parts[0];
        r.path = parts[1];
      }
      first = false;
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos)
      continue;
    r.headers[absl::AsciiStrToLower(line.substr(0, colon))] =
        std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  }
  return r;
}

} // namespace

FakeHttpServer::FakeHttpServer(Handler handler) : handler_(std::move(handler)) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd_, reinterpret_cast<sockaddr *>(&a), sizeof(a));
  ::listen(fd_, 16);
  socklen_t len = sizeof(a);
  ::getsockname(fd_, reinterpret_cast<sockaddr *>(&a), &len);
  port_ = ntohs(a.sin_port);
  timeval tv{0, 100000}; // accept() returns every 100 ms to see stop_
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  thread_ = std::thread([this] { Serve(); });
}

FakeHttpServer::~FakeHttpServer() {
  stop_ = true;
  thread_.join();
  ::close(fd_);
}

std::string FakeHttpServer::endpoint() const {
  return absl::StrCat("http://127.0.0.1:", port_);
}

void FakeHttpServer::Serve() {
  while (!stop_) {
    const int c = ::accept(fd_, nullptr, nullptr);
    if (c < 0)
      continue;
    timeval tv{2, 0}; // a client that sends nothing cannot hold the loop
    ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    std::string head;
    char buf[4096];
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536) {
      const ssize_t n = ::recv(c, buf, sizeof(buf), 0);
      if (n <= 0)
        break;
      head.append(buf, static_cast<size_t>(n));
    }
    ++requests_;
    const FakeAnswer a = handler_(Parse(head.substr(0, head.find("\r\n\r\n"))));
    const std::string answer =
        absl::StrCat("HTTP/1.1 ", a.status, " ", Reason(a.status),
                     "\r\nContent-Type: ", a.content_type,
                     "\r\nContent-Length: ", a.body.size(),
                     "\r\nConnection: close\r\n\r\n", a.body);
    ::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
    ::close(c);
  }
}

} // namespace testing
} // namespace shardfeed
