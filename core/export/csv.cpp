#include "export/csv.h"

namespace sa {

std::string csvField(const std::string& text, bool always) {
    if (!always && text.find_first_of(",\"\r\n") == std::string::npos)
        return text;
    std::string out = "\"";
    for (char c : text) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + "\"";
}

} // namespace sa
