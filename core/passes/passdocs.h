#pragma once
// What each pass does, in its own words: the comment block its header opens with (one line of
// purpose, the rewrite as an ASCII diagram, when it applies), generated at build time by
// cmake/PassDocs.cmake. The app shows the first sentence as a tooltip and the whole text in its
// "What does this pass do" panel; the CLI's `passes` listing can use it too.

#include <string_view>

namespace opscope::passes {

// Empty for a name that is not a pass.
std::string_view passDocumentation(std::string_view name);

// The first sentence (up to the first ". " or blank line), on one line.
std::string passSummary(std::string_view name);

} // namespace opscope::passes
