// HTTPS with a private CA: nginx on loopback serves the test dataset over
// TLS with a server certificate signed by a CA made here (openssl CLI). TLS
// is verified by default, so reading fails with an error naming the URL and
// the certificate problem; the CA given by AWS_CA_BUNDLE, CURL_CA_BUNDLE or
// SSL_CERT_FILE is trusted, and then batches are byte-identical to the
// local dataset's; a CA that did not sign the certificate, or a host name
// the certificate does not name, still fails; SHARDFEED_TLS_INSECURE=1
// reads without verifying and says so loudly.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

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

constexpr const char* kCaVariables[] = {"AWS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE"};

// Runs a shell command line (openssl: quick, no network); false on failure.
bool Run(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

// A CA (ca.pem), a second CA that signs nothing here (other-ca.pem), and a
// server certificate for IP 127.0.0.1 signed by the first (server.pem,
// server.key), in `dir`.
absl::Status MakeCertificates(const std::string& openssl, const std::string& dir) {
  const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  for (const std::string ca : {"ca", "other-ca"}) {
    if (!Run(absl::StrCat(openssl, " req -x509", ec, " -keyout ", dir, "/", ca, ".key -out ",
                          dir, "/", ca, ".pem -days 2 -subj /CN=shardfeed-test-", ca,
                          " -addext basicConstraints=critical,CA:TRUE"
                          " -addext keyUsage=critical,keyCertSign,cRLSign"))) {
      return absl::InternalError("openssl could not make the CA " + ca);
    }
  }
  std::ofstream(dir + "/server.ext") << "subjectAltName=IP:127.0.0.1\n"
                                        "basicConstraints=CA:FALSE\n"
                                        "extendedKeyUsage=serverAuth\n";
  if (!Run(absl::StrCat(openssl, " req", ec, " -keyout ", dir, "/server.key -out ", dir,
                        "/server.csr -subj /CN=127.0.0.1")) ||
      !Run(absl::StrCat(openssl, " x509 -req -in ", dir, "/server.csr -CA ", dir,
                        "/ca.pem -CAkey ", dir, "/ca.key -CAcreateserial -days 2 -out ", dir,
                        "/server.pem -extfile ", dir, "/server.ext"))) {
    return absl::InternalError("openssl could not sign the server certificate");
  }
  return absl::OkStatus();
}

class RemoteTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string nginx = testing::FindBinary("SHARDFEED_NGINX", "nginx");
    const std::string openssl = testing::FindBinary("SHARDFEED_OPENSSL", "openssl");
    if (nginx.empty() || openssl.empty()) return;
    dir_ = new std::string(testing::MakeTempDir());
    ::mkdir((*dir_ + "/data").c_str(), 0755);
    testing::WriteRemoteTestDataset(*dir_ + "/data", 4, false);
    if (absl::Status s = MakeCertificates(openssl, *dir_); !s.ok()) {
      error_ = new std::string(s.ToString());
      return;
    }
    auto server = testing::StartNginx(nginx, *dir_ + "/data", *dir_,
                                      {*dir_ + "/server.pem", *dir_ + "/server.key"});
    if (!server.ok()) {
      error_ = new std::string(server.status().ToString());
      return;
    }
    server_ = new testing::S3Server(*std::move(server));
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    if (dir_ == nullptr) {
      if (testing::ServersRequired()) FAIL() << "nginx and openssl are required in CI";
      GTEST_SKIP() << "no nginx or openssl binary";
    }
    ASSERT_EQ(error_, nullptr) << *error_;
    ASSERT_EQ(server_->endpoint.rfind("https://127.0.0.1:", 0), 0u) << server_->endpoint;
    UseEnvironment({});
  }
  void TearDown() override { UseEnvironment({}); }

  // Only the variables given (name, value) among the CA and TLS ones; the
  // client re-reads its options from the environment.
  static void UseEnvironment(const std::vector<std::pair<std::string, std::string>>& vars) {
    for (const char* name : kCaVariables) unsetenv(name);
    unsetenv("SHARDFEED_TLS_INSECURE");
    for (const auto& [name, value] : vars) setenv(name.c_str(), value.c_str(), 1);
    // An empty extent cache each time: every read goes over TLS.
    setenv("SHARDFEED_CACHE_DIR", testing::MakeTempDir().c_str(), 1);
    remote::HttpClient::Get().set_options(remote::HttpOptions::FromEnvironment());
    remote::ForgetStores();
  }

  static std::vector<std::string> ShardUrls(const std::string& endpoint) {
    std::vector<std::string> urls;
    for (int s = 0; s < 4; ++s) urls.push_back(absl::StrCat(endpoint, "/part-", s, ".tfrecord"));
    return urls;
  }

  // Batches over HTTPS equal the local ones (global and quasi shuffle).
  static void ExpectLocalBatches() {
    for (const LoaderOptions& o : {testing::EveryLoaderPath()[0], testing::EveryLoaderPath()[1]}) {
      auto local = testing::ReadBatchBytes({*dir_ + "/data"}, o);
      ASSERT_TRUE(local.ok()) << local.status();
      auto remote = testing::ReadBatchBytes(ShardUrls(server_->endpoint), o);
      ASSERT_TRUE(remote.ok()) << remote.status();
      ASSERT_EQ(local->size(), remote->size());
      EXPECT_TRUE(*local == *remote);
    }
  }

  static std::string* dir_;
  static std::string* error_;
  static testing::S3Server* server_;
};

std::string* RemoteTlsTest::dir_ = nullptr;
std::string* RemoteTlsTest::error_ = nullptr;
testing::S3Server* RemoteTlsTest::server_ = nullptr;

TEST_F(RemoteTlsTest, AnUnknownCaIsRefusedByDefault) {
  const std::string url = ShardUrls(server_->endpoint)[0];
  auto ds = Dataset::Open({url});
  ASSERT_FALSE(ds.ok()) << "a certificate no CA of the system vouches for was accepted";
  EXPECT_TRUE(absl::IsFailedPrecondition(ds.status())) << ds.status();
  const std::string message(ds.status().message());
  EXPECT_NE(message.find(url), std::string::npos) << message;
  EXPECT_NE(message.find("certificate"), std::string::npos) << message;
  EXPECT_NE(message.find("AWS_CA_BUNDLE"), std::string::npos) << message;
}

TEST_F(RemoteTlsTest, TheCaGivenByEachVariableIsTrusted) {
  for (const char* name : kCaVariables) {
    SCOPED_TRACE(name);
    UseEnvironment({{name, *dir_ + "/ca.pem"}});
    ExpectLocalBatches();
  }
}

TEST_F(RemoteTlsTest, AnotherCaOrAnotherHostNameIsStillRefused) {
  UseEnvironment({{"AWS_CA_BUNDLE", *dir_ + "/other-ca.pem"}});
  auto other = Dataset::Open({ShardUrls(server_->endpoint)[0]});
  ASSERT_FALSE(other.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(other.status())) << other.status();
  EXPECT_NE(other.status().message().find("other-ca.pem"), std::string::npos) << other.status();
  // The certificate names 127.0.0.1, not "localhost".
  UseEnvironment({{"AWS_CA_BUNDLE", *dir_ + "/ca.pem"}});
  std::string localhost = server_->endpoint;
  localhost.replace(localhost.find("127.0.0.1"), 9, "localhost");
  auto renamed = Dataset::Open({ShardUrls(localhost)[0]});
  ASSERT_FALSE(renamed.ok()) << "a certificate for another host name was accepted";
  EXPECT_TRUE(absl::IsFailedPrecondition(renamed.status())) << renamed.status();
  // A bundle that cannot be read is named.
  UseEnvironment({{"CURL_CA_BUNDLE", *dir_ + "/absent.pem"}});
  auto absent = Dataset::Open({ShardUrls(server_->endpoint)[0]});
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.status().message().find("absent.pem"), std::string::npos) << absent.status();
  EXPECT_NE(absent.status().message().find("CURL_CA_BUNDLE"), std::string::npos)
      << absent.status();
}

TEST_F(RemoteTlsTest, InsecureModeReadsAndWarnsLoudly) {
  ::testing::internal::CaptureStderr();
  UseEnvironment({{"SHARDFEED_TLS_INSECURE", "1"}});
  const std::string warning = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warning.find("WARNING: TLS certificate verification is OFF"), std::string::npos)
      << warning;
  ExpectLocalBatches();
}

}  // namespace
}  // namespace shardfeed
