// The Kerberos rig of the Negotiate proxy tests: see kerberos_rig.hpp and
// ../shared/docs/KERBEROS-RIG.md (the configuration below follows it, pitfalls included).
#include "support/net/kerberos_rig.hpp"

#include "support/net/test_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace wheelfit::testing {

namespace fs = std::filesystem;

namespace {

constexpr const char* kSquidHelper = "/usr/lib/squid/negotiate_kerberos_auth";

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void put(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("kerberos rig: cannot write " + p.string());
}

bool on_path(const std::string& tool) {
  for (const char* dir : {"/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/sbin", "/usr/local/bin"}) {
    if (::access((std::string(dir) + "/" + tool).c_str(), X_OK) == 0) return true;
  }
  return false;
}

bool alive(int pid) {
  int status = 0;
  return pid > 0 && ::waitpid(pid, &status, WNOHANG) == 0;
}

// Ends a child of ours: SIGTERM, then SIGKILL after `grace`; reaped either way.
void end_child(int pid, std::chrono::milliseconds grace) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  const auto until = std::chrono::steady_clock::now() + grace;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

std::optional<std::string> KerberosRig::missing_tool() {
  const std::pair<const char*, const char*> tools[] = {{"krb5kdc", "krb5-kdc"},      {"kdb5_util", "krb5-kdc"},
                                                       {"kadmin.local", "krb5-admin-server"}, {"kinit", "krb5-user"},
                                                       {"kdestroy", "krb5-user"},    {"squid", "squid"}};
  for (const auto& [tool, package] : tools) {
    if (!on_path(tool)) return std::string(tool) + " (Debian package " + package + ")";
  }
  if (::access(kSquidHelper, X_OK) != 0) return std::string(kSquidHelper) + " (Debian package squid)";
  return std::nullopt;
}

KerberosRig::KerberosRig() {
  std::string tmpl = (fs::temp_directory_path() / "wheelfit-krb-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("kerberos rig: mkdtemp failed");
  dir_ = tmpl;
  // squid started as root runs as `proxy`: it must reach its folder and read the service keytab.
  ::chmod(dir_.c_str(), 0711);
  fs::create_directories(dir_ / "kdc");
  fs::create_directories(dir_ / "squid");
  kdc_port_ = free_loopback_port();
  proxy_port_ = free_loopback_port();
  const std::string kp = "127.0.0.1:" + std::to_string(kdc_port_);
  // The one-line form "TEST.LOCAL = { kdc = ... }" is not read by MIT's profile parser: one
  // relation a line.
  put(dir_ / "krb5.conf", "[libdefaults]\n    default_realm = TEST.LOCAL\n    dns_lookup_realm = false\n"
                          "    dns_lookup_kdc = false\n    dns_canonicalize_hostname = false\n    rdns = false\n"
                          "    udp_preference_limit = 1\n[realms]\n    TEST.LOCAL = {\n        kdc = " + kp +
                          "\n    }\n[domain_realm]\n    localhost = TEST.LOCAL\n");
  const fs::path kdc = dir_ / "kdc";
  put(dir_ / "kdc.conf", "[kdcdefaults]\n    kdc_listen = " + kp + "\n    kdc_tcp_listen = " + kp +
                         "\n[realms]\n    TEST.LOCAL = {\n        kdc_listen = " + kp + "\n        kdc_tcp_listen = " + kp +
                         "\n        database_name = " + (kdc / "principal").string() + "\n        key_stash_file = " +
                         (kdc / "stash").string() + "\n        acl_file = " + (kdc / "kadm5.acl").string() +
                         "\n    }\n[logging]\n    kdc = FILE:" + (kdc / "kdc.log").string() + "\n");
  try {
    run("kdb5_util create", "kdb5_util create -s -r TEST.LOCAL -P wheelfit-test-master");
    run("addprinc HTTP/localhost", "kadmin.local -r TEST.LOCAL -q 'addprinc -randkey HTTP/localhost'");
    run("ktadd HTTP/localhost", "kadmin.local -r TEST.LOCAL -q 'ktadd -k " + (dir_ / "http.keytab").string() + " HTTP/localhost'");
    run("addprinc alice", "kadmin.local -r TEST.LOCAL -q 'addprinc -randkey alice'");
    run("ktadd alice", "kadmin.local -r TEST.LOCAL -q 'ktadd -k " + (dir_ / "alice.keytab").string() + " alice'");
    if (::geteuid() == 0) {
      if (const passwd* p = ::getpwnam("proxy")) {
        for (const fs::path& f : {dir_ / "squid", dir_ / "http.keytab"}) {
          if (::chown(f.c_str(), p->pw_uid, p->pw_gid) != 0) throw std::runtime_error("kerberos rig: chown " + f.string());
        }
      }
    }
    const fs::path sq = dir_ / "squid";
    put(dir_ / "squid.conf",
        "http_port 127.0.0.1:" + std::to_string(proxy_port_) + "\npid_filename " + (sq / "squid.pid").string() +
            "\ncache_log " + (sq / "cache.log").string() +
            "\nlogformat wf %ts.%03tu %>a %Ss/%03>Hs %rm %ru %un \"%{User-Agent}>h\"\naccess_log stdio:" +
            (sq / "access.log").string() + " wf\ncoredump_dir " + sq.string() +
            "\nnetdb_filename none\npinger_enable off\nudp_incoming_address 127.0.0.1\nudp_outgoing_address 127.0.0.1\n"
            "dns_nameservers 127.0.0.1\nshutdown_lifetime 0 seconds\nauth_param negotiate program " + kSquidHelper + " -k " +
            (dir_ / "http.keytab").string() + " -s HTTP/localhost@TEST.LOCAL -c " + sq.string() +
            "\nauth_param negotiate children 4 startup=1 idle=1\nauth_param negotiate keep_alive on\n"
            "acl auth proxy_auth REQUIRED\nhttp_access allow auth\nhttp_access deny all\n");
    kdc_pid_ = spawn({"krb5kdc", "-n", "-r", "TEST.LOCAL", "-P", (kdc / "kdc.pid").string()}, kdc / "stdout.log");
    squid_pid_ = spawn({"squid", "-N", "-f", (dir_ / "squid.conf").string()}, sq / "stdout.log");
    // Up to 30 s for both to listen (a loaded machine); each check ends early when its process died.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (const auto& [pid, port, name] : {std::tuple(kdc_pid_, kdc_port_, "krb5kdc"), std::tuple(squid_pid_, proxy_port_, "squid")}) {
      while (!loopback_accepts(port)) {
        if (!alive(pid) || std::chrono::steady_clock::now() > until) {
          throw std::runtime_error(std::string("kerberos rig: ") + name + " did not start listening\n" + logs());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  } catch (...) {
    end_child(squid_pid_, std::chrono::seconds(5));
    end_child(kdc_pid_, std::chrono::seconds(5));
    std::error_code ec;
    fs::remove_all(dir_, ec);
    throw;
  }
}

KerberosRig::~KerberosRig() {
  end_child(squid_pid_, std::chrono::seconds(5));
  end_child(kdc_pid_, std::chrono::seconds(5));
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string KerberosRig::proxy_url(const std::string& host) const {
  return "http://" + host + ":" + std::to_string(proxy_port_);
}

std::vector<std::pair<std::string, std::string>> KerberosRig::client_env() const {
  return {{"KRB5_CONFIG", (dir_ / "krb5.conf").string()},
          {"KRB5_KDC_PROFILE", (dir_ / "kdc.conf").string()},
          {"KRB5CCNAME", "FILE:" + (dir_ / "alice.cc").string()},
          {"KRB5_CLIENT_KTNAME", (dir_ / "no-client.keytab").string()}};
}

std::string KerberosRig::client_env_words() const {
  std::string out;
  for (const auto& [k, v] : client_env()) out += (out.empty() ? "" : " ") + k + "=" + quoted(v);
  return out;
}

void KerberosRig::run(const std::string& what, const std::string& command) const {
  const fs::path log = dir_ / "setup.log";
  const std::string line = "env " + client_env_words() + " " + command + " >>" + quoted(log.string()) + " 2>&1";
  const int status = std::system(line.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("kerberos rig: " + what + " failed:\n" + slurp(log));
  }
}

int KerberosRig::spawn(const std::vector<std::string>& argv, const fs::path& log) const {
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) env_text.emplace_back(*e);
  for (const auto& [k, v] : client_env()) env_text.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (auto& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argp[0], &actions, nullptr, argp.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("kerberos rig: cannot start " + argv[0]);
  return pid;
}

void KerberosRig::kinit(const std::string& lifetime) {
  run("kinit", "kinit" + (lifetime.empty() ? std::string() : " -l " + lifetime) + " -k -t " +
                   quoted((dir_ / "alice.keytab").string()) + " " + kUser);
}

void KerberosRig::kdestroy() {
  std::error_code ec;
  fs::remove(dir_ / "alice.cc", ec);
}

void KerberosRig::stop_kdc() {
  end_child(kdc_pid_, std::chrono::seconds(5));
  kdc_pid_ = -1;
}

std::string KerberosRig::access_log() const { return slurp(dir_ / "squid" / "access.log"); }

std::string KerberosRig::logs() const {
  return "--- setup\n" + slurp(dir_ / "setup.log") + "--- kdc\n" + slurp(dir_ / "kdc" / "kdc.log") +
         slurp(dir_ / "kdc" / "stdout.log") + "--- squid\n" + slurp(dir_ / "squid" / "cache.log") +
         slurp(dir_ / "squid" / "stdout.log");
}

}  // namespace wheelfit::testing
