#pragma once
// Weights embedded in a model file (raw_data), mapped from the file instead of held on the heap:
// bytes are read from disk only where a node reads them, and a process that runs part of a model
// (an MPI rank) holds only that part's weights. Opt-in (LoadOptions::mapEmbeddedWeights): a file
// truncated while mapped (an exporter writing over the model in place) faults on the next read, so
// the app and the one-process commands keep their own copy.

#include "ir/graph.h"
#include "util/status.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace opscope {

class MappedFile;

// Where the raw_data of one top-level initializer lies in a serialized ModelProto.
struct RawDataSpan
{
    std::string name;
    std::uint64_t offset = 0, length = 0;
};

// Every top-level initializer that holds raw_data, in file order, read from the Protobuf wire
// format as Protobuf itself merges it (repeated graph fields append initializers; a repeated
// name or raw_data keeps the last). Initializers stored as external data are left out.
// `initializerNames`, where given, counts every top-level initializer's name, with raw_data or not.
Expected<std::vector<RawDataSpan>> findInitializerRawData(std::span<const std::byte> bytes,
                                                          std::map<std::string, int> *initializerNames = nullptr);

// Points the main graph's embedded initializers of at least `minBytes` into `file` (the file the
// graph was imported from), freeing their heap copies. Only where the name is unique and the
// bytes at the found place start and end as the loaded tensor does. Returns the bytes now mapped.
std::uint64_t mapEmbeddedWeights(Graph &graph, const std::shared_ptr<const MappedFile> &file,
                                 std::uint64_t minBytes = 64 * 1024);

// Weights on the heap that no file holds (those the passes made: BatchNorm folded into a Conv,
// fused or transposed weights, Constant nodes turned initializers) of at least `minBytes`, written
// to an unlinked scratch file in `folder` and mapped from there, freeing their heap copies: a rank
// that runs part of the model then holds only the part its nodes read, as it does for weights
// mapped from the model file. Main graph only. Mapped weights at an offset not aligned for their
// element type (Protobuf's raw_data lies anywhere) are written there too, aligned: read where they
// lie, each would be copied to the heap of every process that reads it, for good.
struct SpilledWeights
{
    std::size_t tensors = 0;
    std::uint64_t bytes = 0;
    std::uint64_t realigned = 0; // of `bytes`, those that were mapped misaligned
};
Expected<SpilledWeights> spillHeapWeights(Graph &graph, const std::filesystem::path &folder,
                                          std::uint64_t minBytes = 64 * 1024);

// Takes the pages of every mapped weight out of this process's resident set: after a run that
// read them all (rank 0's serial run, the run that sizes a plan), a rank holds again only what its
// own nodes read. Mappings are read-only, so nothing is lost.
void dropResidentWeights(const Graph &graph);

// Where scratch files go: $TMPDIR, else /var/tmp (on disk where /tmp may be tmpfs).
std::filesystem::path scratchFolder();

} // namespace opscope
