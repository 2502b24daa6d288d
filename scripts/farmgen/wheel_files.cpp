#include "wheel_files.hpp"

#include <openssl/evp.h>

#include <array>
#include <stdexcept>
#include <vector>

#include "zip_writer.hpp"

namespace wheelfit::farmgen {
namespace {

// RECORD's hash: "sha256=" and the digest in urlsafe base64 without padding (PEP 376 / 427).
std::string record_hash(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_sha256(), nullptr) != 1 || len != 32) {
    throw std::runtime_error("OpenSSL EVP_Digest(SHA-256) failed");
  }
  std::array<unsigned char, 64> b64{};
  const int n = EVP_EncodeBlock(b64.data(), md.data(), static_cast<int>(len));
  std::string out(reinterpret_cast<const char*>(b64.data()), static_cast<std::size_t>(n));
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!out.empty() && out.back() == '=') out.pop_back();
  return "sha256=" + out;
}

std::vector<std::string> tags_of(const WheelSpec& spec) {
  std::vector<std::string> out;
  std::string_view rest = spec.platform_tags;
  while (!rest.empty()) {
    const auto dot = rest.find('.');
    out.push_back(spec.python + "-" + spec.python + "-" + std::string(rest.substr(0, dot)));
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  return out;
}

void put(std::string& s, std::size_t at, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// An ELF64 little-endian shared object header (no sections) for `machine` (EM_X86_64 62,
// EM_AARCH64 183): what `explain` reads as the module's OS and CPU.
std::string elf_so(unsigned machine) {
  std::string e(64, '\0');
  e.replace(0, 4, "\x7f" "ELF");
  e[4] = 2;  // ELFCLASS64
  e[5] = 1;  // ELFDATA2LSB
  e[6] = 1;  // EV_CURRENT
  put(e, 16, 3, 2);   // e_type ET_DYN
  put(e, 18, machine, 2);
  put(e, 20, 1, 4);   // e_version
  put(e, 52, 64, 2);  // e_ehsize
  put(e, 54, 56, 2);  // e_phentsize
  put(e, 58, 64, 2);  // e_shentsize
  return e;
}

// A PE32+ x86_64 DLL header with no sections.
std::string pe_dll() {
  std::string p(64 + 24 + 2, '\0');
  p.replace(0, 2, "MZ");
  put(p, 0x3c, 64, 4);  // e_lfanew
  p.replace(64, 4, std::string("PE\0\0", 4));
  put(p, 68, 0x8664, 2);       // Machine
  put(p, 84, 2, 2);            // SizeOfOptionalHeader: the magic only
  put(p, 86, 0x2022, 2);       // Characteristics: executable, large address aware, DLL
  put(p, 88, 0x20b, 2);        // PE32+
  return p;
}

std::string native_module(const WheelSpec& spec) {
  const std::string py = spec.python.substr(2);  // "312"
  const std::string& tags = spec.platform_tags;
  if (tags.find("win") != std::string::npos) return spec.name + "/_C.cp" + py + "-win_amd64.pyd";
  const bool arm = tags.find("aarch64") != std::string::npos;
  return spec.name + "/_C.cpython-" + py + "-" + (arm ? "aarch64" : "x86_64") + "-linux-gnu.so";
}

}  // namespace

std::string wheel_metadata(const WheelSpec& spec) {
  const std::string py = spec.python.substr(2);
  return "Metadata-Version: 2.1\nName: " + spec.project + "\nVersion: " + spec.version +
         "\nSummary: a synthetic wheel written by wheelfit-farmgen --with-files\nRequires-Python: ==" +
         py.substr(0, 1) + "." + py.substr(1) + ".*\n";
}

std::string wheel_bytes(const WheelSpec& spec) {
  const std::string dist_info = spec.name + "-" + spec.version + ".dist-info/";
  const std::string module = native_module(spec);
  const bool windows = module.ends_with(".pyd");
  const bool arm = module.find("aarch64") != std::string::npos;
  std::string wheel = "Wheel-Version: 1.0\nGenerator: wheelfit-farmgen\nRoot-Is-Purelib: false\n";
  for (const auto& tag : tags_of(spec)) wheel += "Tag: " + tag + "\n";

  std::vector<ZipMember> members{
      {spec.name + "/__init__.py", "# " + spec.project + " " + spec.version + " (synthetic)\n", true},
      {module, windows ? pe_dll() : elf_so(arm ? 183 : 62), true},
      {dist_info + "METADATA", wheel_metadata(spec), true},
      {dist_info + "WHEEL", wheel, true},
  };
  std::string record;
  for (const auto& m : members) record += m.name + "," + record_hash(m.data) + "," + std::to_string(m.data.size()) + "\n";
  record += dist_info + "RECORD,,\n";
  members.push_back({dist_info + "RECORD", record, true});
  return build_zip(members);
}

}  // namespace wheelfit::farmgen
