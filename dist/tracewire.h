#pragma once
// Traces between ranks: each rank's recorded run as bytes (MessagePack, doubles exact) and, on
// rank 0, every rank's run merged into one trace on rank 0's clock — a process per rank and
// device, and a transfer (flow arrow) for every cross-rank edge, from its Send to its Recv.

#include "mpitransfers.h"
#include "trace/trace.h"

#include <cstddef>
#include <span>
#include <vector>

namespace opscope::dist {

std::vector<std::byte> traceToBytes(const trace::Trace &trace);
Expected<trace::Trace> traceFromBytes(std::span<const std::byte> bytes);

// `traces[r]`: rank r's run, on its own clock from its zero; `shift[r]`: seconds to add to put it
// on the merged clock. Host lanes become one per rank (queue = rank).
// `labels`: the Recorder labels of the runs in each trace (the micro-batches of a pipeline; {""}
// for one run): each edge is a transfer per label.
trace::Trace mergeRankTraces(const std::vector<trace::Trace> &traces, const std::vector<double> &shift,
                             const std::vector<CrossRankEdge> &edges, const std::string &name,
                             const std::vector<std::string> &labels = {""});

} // namespace opscope::dist
