#pragma once
// What a call of the façade (wheelfit/api.hpp), and the CLI, exits with: defined once, here.

namespace wheelfit::api {

/// What a call (and the CLI) exits with.
enum ExitCode : int {
  kExitResolved = 0,    ///< every package resolved (explain: the wheel fits)
  kExitUnresolved = 1,  ///< no combo covers every package
  kExitBadInput = 2,    ///< bad input or usage; the message names the input
  kExitNoIndex = 3,     ///< the backend publishes no wheel index and none was given
  kExitUnreadable = 4,  ///< the index could not be read at all
  kExitDownload = 5,    ///< download / mirror: a wheel could not be fetched or its sha256 did not match
  kExitOutput = 6,      ///< an output could not be written (its folder not made, the disk full, an I/O error)
  kExitInternal = 70,   ///< a bug in wheelfit
};

}  // namespace wheelfit::api
