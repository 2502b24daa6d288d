#pragma once
// Building zips (wheels) in tests and benchmarks: farmgen's zip writer (scripts/farmgen/zip_writer.hpp),
// under the names the tests use.
#include "zip_writer.hpp"

namespace wheelfit::test {
using farmgen::build_zip;
using farmgen::build_zip_layout;
using farmgen::crc32_of;
using farmgen::deflate_raw;
using farmgen::get_le16;
using farmgen::get_le32;
using farmgen::get_le64;
using farmgen::gzip_compress;
using farmgen::put_le16;
using farmgen::put_le32;
using farmgen::put_le64;
using farmgen::random_bytes;
using farmgen::ZipBuildOptions;
using farmgen::ZipLayout;
using farmgen::ZipMember;
using farmgen::ZipWriter;
using namespace farmgen::zip_offsets;
}  // namespace wheelfit::test
