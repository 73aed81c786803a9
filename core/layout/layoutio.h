#pragma once
// Layout requests and results as bytes, for the layout helper process (app/layouthelper): the
// app runs dot in a process it can kill, because gvLayout cannot be interrupted in-process.
// Decoding checks every count against the bytes there are and every number for sanity: the bytes
// come from another process, which may have died half-way through writing them.

#include "layout/graphlayout.h"
#include "util/status.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace opscope::layout {

std::string encodeRequest(const LayoutRequest &request);
Expected<LayoutRequest> decodeRequest(std::string_view bytes);

std::string encodeResult(const LayoutResult &result);
// `request` is the one the result answers: node and edge counts must match it.
Expected<LayoutResult> decodeResult(std::string_view bytes, const LayoutRequest &request);

// A content digest of a request: equal requests lay out equally, whatever graph they came from,
// so a cache keyed by it survives stepping between passes and back.
std::uint64_t requestDigest(const LayoutRequest &request);

} // namespace opscope::layout
