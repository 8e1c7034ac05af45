#pragma once
// Exit codes of the `scaleacross` CLI (README, scaleacross(1)).

namespace sa::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // a run that could not finish (I/O, cancelled)
inline constexpr int kExitBadInput = 2; // bad documents or a bad command line

} // namespace sa::cli
