#include "support/cli_support.hpp"

#include <sys/wait.h>

#include <cstdlib>

#include "support/test_support.hpp"

namespace wheelfit::test {

std::string shell_quote(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::filesystem::path built_wheelfit() { return binary_dir() / "apps" / "wheelfit" / "wheelfit"; }

std::string clean_network_env() {
  return "env -u COMFY_ENV_CUDA_WHEELS_INDEX -u WHEELFIT_POLICY -u CONDA_OVERRIDE_CUDA -u CONDA_OVERRIDE_GLIBC "
         "-u WHEELFIT_PLUGIN_PATH -u http_proxy -u HTTPS_PROXY -u https_proxy -u ALL_PROXY -u all_proxy -u GITHUB_TOKEN "
         "-u WHEELFIT_GITHUB_API -u WHEELFIT_RELEASES_REPO -u PIP_CERT -u REQUESTS_CA_BUNDLE -u CURL_CA_BUNDLE "
         "-u SSL_CERT_FILE -u SSL_CERT_DIR -u SSL_CLIENT_CERT WHEELFIT_RETRY_BACKOFF_MS=5";
}

CliRun run_program(const std::string& env_prefix, const std::filesystem::path& exe, const std::vector<std::string>& args) {
  TempDir io;
  std::string cmd = env_prefix + " " + shell_quote(exe.string());
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " >" + shell_quote((io / "out").string()) + " 2>" + shell_quote((io / "err").string());
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(io / "out"), read_file(io / "err")};
}

void write_one_wheel_index(const std::filesystem::path& index) {
  const std::string file = "pkg-1.0+cu128torch2.8-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";
  const std::string href = "https://example.test/dl/pkg-1.0%2Bcu128torch2.8-cp312-cp312-manylinux_2_24_x86_64."
                           "manylinux_2_28_x86_64.whl#sha256=" + std::string(64, 'a');
  write_file(index / "pkg" / "index.html", "<html><body><a href=\"" + href + "\">" + file + "</a></body></html>");
}

}  // namespace wheelfit::test
