// Windows: whether a plugin folder or file may be trusted to hold code wheelfit loads: it, and
// every folder on the way to it from the drive's root, owned by SYSTEM, Administrators,
// TrustedInstaller or us, changeable by nobody else (the owner and DACL check of Win32-OpenSSH's
// key files), no reparse point on the way. docs/decisions/0035-windows-plugin-trust.md.
#ifdef _WIN32

#include <windows.h>
#include <aclapi.h>
#include <sddl.h>

#include <memory>
#include <vector>

#include "trust_text.hpp"
#include "wheelfit/registry/registry.hpp"
#include "wheelfit/util/win_file.hpp"

namespace wheelfit::registry {

namespace fs = std::filesystem;

std::optional<std::string> untrusted_because(const SecurityFacts& facts, bool folder, bool parent) {
  if (!facts.owner_trusted) return "owned by " + facts.owner + " (neither SYSTEM, Administrators, TrustedInstaller nor you)";
  if (!facts.has_dacl) return std::string("open to everyone (it has no access list)");
  // Rights that change the object, or what lies in it: replace, remove, re-own, re-permit.
  std::uint32_t changes = DELETE | WRITE_DAC | WRITE_OWNER | GENERIC_ALL | GENERIC_WRITE;
  if (folder) changes |= FILE_DELETE_CHILD;
  if (!parent) changes |= FILE_WRITE_DATA | FILE_APPEND_DATA;  // a folder's ADD_FILE / ADD_SUBDIRECTORY
  for (const auto& grant : facts.grants) {
    if (!grant.trusted && (grant.mask & changes) != 0) return "writable by " + grant.who;
  }
  return std::nullopt;
}

namespace {

using Sid = std::vector<BYTE>;

// The current user's SID (the process token's TokenUser).
Expected<Sid> current_user() {
  HANDLE token = nullptr;
  if (!::OpenProcessToken(::GetCurrentProcess(), TOKEN_QUERY, &token)) {
    return unexpected(Errc::io_error, "cannot read this process's user: " + util::win::error_text(::GetLastError()));
  }
  DWORD size = 0;
  ::GetTokenInformation(token, TokenUser, nullptr, 0, &size);
  std::vector<BYTE> buffer(size);
  const bool ok = size > 0 && ::GetTokenInformation(token, TokenUser, buffer.data(), size, &size);
  const DWORD error = ::GetLastError();
  ::CloseHandle(token);
  if (!ok) return unexpected(Errc::io_error, "cannot read this process's user: " + util::win::error_text(error));
  const PSID sid = reinterpret_cast<TOKEN_USER*>(buffer.data())->User.Sid;
  const auto* bytes = static_cast<const BYTE*>(sid);
  return Sid(bytes, bytes + ::GetLengthSid(sid));
}

// The principals trusted besides the user: SYSTEM, Administrators, TrustedInstaller, OWNER RIGHTS
// (which stands for the owner, already judged).
const std::vector<Sid>& trusted_principals() {
  static const std::vector<Sid> sids = [] {
    std::vector<Sid> out;
    for (const auto kind : {WinLocalSystemSid, WinBuiltinAdministratorsSid, WinCreatorOwnerRightsSid}) {
      Sid sid(SECURITY_MAX_SID_SIZE);
      DWORD size = static_cast<DWORD>(sid.size());
      if (::CreateWellKnownSid(kind, nullptr, sid.data(), &size)) out.emplace_back(sid.begin(), sid.begin() + size);
    }
    PSID installer = nullptr;  // NT SERVICE\TrustedInstaller
    if (::ConvertStringSidToSidW(L"S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464", &installer)) {
      const auto* bytes = static_cast<const BYTE*>(installer);
      out.emplace_back(bytes, bytes + ::GetLengthSid(installer));
      ::LocalFree(installer);
    }
    return out;
  }();
  return sids;
}

bool trusted(PSID sid, const Sid& user) {
  if (::EqualSid(sid, const_cast<BYTE*>(user.data()))) return true;
  for (const auto& t : trusted_principals()) {
    if (::EqualSid(sid, const_cast<BYTE*>(t.data()))) return true;
  }
  return false;
}

// "DOMAIN\name" (or "name"), else the SID's text ("S-1-5-21-...").
std::string name_of(PSID sid) {
  wchar_t name[256], domain[256];
  DWORD name_size = 256, domain_size = 256;
  SID_NAME_USE use{};
  if (::LookupAccountSidW(nullptr, sid, name, &name_size, domain, &domain_size, &use)) {
    const std::wstring text = domain_size > 0 ? std::wstring(domain) + L"\\" + name : std::wstring(name);
    return util::win::u8(fs::path(text));
  }
  LPWSTR text = nullptr;
  if (!::ConvertSidToStringSidW(sid, &text)) return "an unknown account";
  std::string out = util::win::u8(fs::path(text));
  ::LocalFree(text);
  return out;
}

// The owner and the DACL's allow entries of `at` (GetNamedSecurityInfoW).
Expected<SecurityFacts> read_security(const fs::path& at, const Sid& user) {
  PSID owner = nullptr;
  PACL dacl = nullptr;
  PSECURITY_DESCRIPTOR sd = nullptr;
  const DWORD error = ::GetNamedSecurityInfoW(at.c_str(), SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
                                              &owner, nullptr, &dacl, nullptr, &sd);
  if (error != ERROR_SUCCESS) return unexpected(Errc::io_error, "cannot read the owner and access list of " + at.string() + ": " + util::win::error_text(error));
  const std::unique_ptr<void, decltype(&::LocalFree)> hold(sd, &::LocalFree);
  SecurityFacts facts;
  facts.owner_trusted = owner != nullptr && trusted(owner, user);
  facts.owner = owner != nullptr ? name_of(owner) : "nobody";
  facts.has_dacl = dacl != nullptr;
  for (DWORD i = 0; dacl != nullptr && i < dacl->AceCount; ++i) {
    void* ace = nullptr;
    if (!::GetAce(dacl, i, &ace)) continue;
    const auto* header = static_cast<const ACE_HEADER*>(ace);
    if (header->AceType != ACCESS_ALLOWED_ACE_TYPE || (header->AceFlags & INHERIT_ONLY_ACE) != 0) continue;
    const auto* allowed = static_cast<const ACCESS_ALLOWED_ACE*>(ace);
    const PSID sid = const_cast<DWORD*>(&allowed->SidStart);
    const bool ok = trusted(sid, user);
    facts.grants.push_back(SecurityFacts::Grant{ok ? std::string() : name_of(sid), ok, allowed->Mask});
  }
  return facts;
}

using detail::untrusted;

}  // namespace

Expected<fs::path> check_trusted_path(const fs::path& path, std::string_view noun) {
  if (auto relative = detail::not_absolute(path)) return unexpected(*relative);
  const auto user = current_user();
  if (!user) return unexpected(Error(user.error().code, path.string() + ": " + user.error().message));
  const fs::path normal = path.lexically_normal();
  std::vector<fs::path> names;
  for (const auto& name : normal.relative_path()) {
    if (!name.empty()) names.push_back(name);
  }
  // One part of the walk: `at`, the plugin folder or file itself when `last`.
  auto judge = [&](const fs::path& at, bool last, bool root) -> std::optional<Error> {
    const DWORD attributes = ::GetFileAttributesW(at.c_str());
    if (attributes == INVALID_FILE_ATTRIBUTES) {
      const DWORD e = ::GetLastError();
      if (e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND) return Error(Errc::not_found, path.string() + ": " + at.string() + " does not exist");
      return Error(Errc::io_error, path.string() + ": cannot examine " + at.string() + ": " + util::win::error_text(e));
    }
    // A volume's root is the volume itself (wine marks its Z:\ = / as a reparse point).
    if (!root && (attributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0) {
      const std::string what = last ? std::string(noun) : "the folder " + at.string() + " on the way to it";
      return Error(Errc::invalid_input, path.string() + ": " + what +
                                            " is a reparse point (a symbolic link, junction or mount point), which "
                                            "plugin loading does not follow: name the folder it leads to");
    }
    const bool folder = (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
    if (!last && !folder) return Error(Errc::io_error, path.string() + ": " + at.string() + " is not a folder");
    auto facts = read_security(at, *user);
    if (!facts) return Error(facts.error().code, path.string() + ": " + facts.error().message);
    if (auto why = untrusted_because(*facts, folder, !last)) return untrusted(path, noun, at, *why, last);
    return std::nullopt;
  };
  fs::path at = normal.root_path();
  if (auto bad = judge(at, names.empty(), true)) return unexpected(*bad);
  for (std::size_t i = 0; i < names.size(); ++i) {
    at /= names[i];
    if (auto bad = judge(at, i + 1 == names.size(), false)) return unexpected(*bad);
  }
  return at;
}

}  // namespace wheelfit::registry

#endif  // _WIN32
