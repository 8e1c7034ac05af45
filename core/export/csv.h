#pragma once
// CSV fields (RFC 4180), shared by every CSV the project writes.

#include <string>

namespace sa {

// One field: quoted (with doubled quotes) when it holds ',', '"', '\r' or
// '\n', or when `always` is set.
std::string csvField(const std::string& text, bool always = false);

} // namespace sa
