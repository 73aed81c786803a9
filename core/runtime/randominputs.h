#pragma once
// Seeded random feeds for a session's inputs: what `opscope-cli run` uses for inputs not given,
// and what pass tests run graphs on before and after a rewrite.

#include "runtime/session.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace opscope {

// The --dim name of the input dims a model declares unknown without a name (no dim_param, or a
// negative size), or with a name an exporter made up for "unknown" ("unk__314", tf2onnx): "--dim
// ?=8". They print as "?" too.
inline constexpr const char *kUnnamedDim = "?";

// The size `dims` gives an unknown input dim: by its own name, else (unnamed or made up) by "?".
std::optional<std::int64_t> boundDim(const Dim &d, const std::map<std::string, std::int64_t> &dims);

struct RandomInputOptions
{
    std::uint64_t seed = 0;
    std::map<std::string, std::int64_t> dims; // symbolic dim → value; unbound symbols get 1; the key
                                              // kUnnamedDim sizes every dim the model leaves unnamed
    double low = -1.0, high = 1.0;            // floats: uniform in [low, high)
    std::int64_t intHigh = 10;                // integers: uniform in [0, intHigh), or below the size a
                                              // Gather reading them as indices gathers from
};

// `given`, then a random feed for every input that has no default and is not in `given`, in
// input order: a whole feed list for run().
Expected<Feeds> randomFeeds(const InferenceSession &session, const Feeds &given,
                            const RandomInputOptions &options);

// Every name in `dims` is a symbolic dim of `graph`'s inputs (or kUnnamedDim where an input has an
// unnamed unknown dim), else an error that lists those there are (a typo would silently leave the
// dim at 1).
Status checkDimNames(const std::map<std::string, std::int64_t> &dims, const Graph &graph);

} // namespace opscope
