#pragma once
// What the machine profile tests share (test_machine*.cpp): a profile that gives every fact.

namespace wheelfit::test {

inline constexpr const char* kFullToml = R"(# a fleet machine
os = "linux"
cpu_arch = "amd64"
glibc = "2.35"
python = "3.12"
torch = "2.8.0+cu128"
backend = "cuda"
driver_version = "580.65.06"
driver_line = "13.0"
gpus = ["9.0", "sm_86"]
)";

}  // namespace wheelfit::test
