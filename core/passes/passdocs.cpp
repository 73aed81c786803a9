#include "passes/passdocs.h"

#include <string>

namespace opscope::passes {

std::string passSummary(std::string_view name)
{
    std::string_view doc = passDocumentation(name);
    // A header shared by several passes: the summary is the line that names this one.
    if (!doc.starts_with(name))
        if (const std::size_t at = doc.find("\n" + std::string(name) + " "); at != std::string_view::npos)
            doc = doc.substr(at + 1);
    std::string out;
    for (std::size_t i = 0; i < doc.size(); ++i) {
        const char c = doc[i];
        if (c == '\n' && (i + 1 == doc.size() || doc[i + 1] == '\n'))
            break; // a blank line ends the first paragraph
        if (c == '.' && (i + 1 == doc.size() || doc[i + 1] == ' ' || doc[i + 1] == '\n')) {
            out += '.';
            break;
        }
        out += c == '\n' ? ' ' : c;
    }
    return out;
}

} // namespace opscope::passes
