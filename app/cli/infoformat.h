#pragma once
// Renders a ModelSummary for a terminal, or as stable JSON for scripts.

#include "ir/summary.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace opscope::cli {

std::string humanBytes(std::uint64_t bytes);    // "1.5 GiB"
std::string groupedNumber(std::uint64_t value); // "12,345,678"
std::string infoText(const std::string &path, const ModelSummary &s,
                     const std::vector<std::string> &warnings);
nlohmann::ordered_json infoJson(const std::string &path, const ModelSummary &s,
                                const std::vector<std::string> &warnings);

} // namespace opscope::cli
