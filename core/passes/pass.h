#pragma once
// The pass interface. A pass rewrites a model in place and says whether it changed anything; what
// it did (snapshots, timings, the change record) is recorded around it by the pipeline's
// instrumentation (pipeline.h), never by the pass itself.
//
// Rewrites that match patterns derive from RewritePass, which separates finding from changing:
// select() only reads the graph and returns matches; apply() performs one of them. The base class
// records every applied match (the nodes it consumed and the nodes that replaced them).

#include "ir/model.h"
#include "util/status.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace opscope::passes {

struct PassOptions
{
    // Constant folding does not create constants bigger than this (bytes): folding an Expand or a
    // ConstantOfShape into a huge initializer would bloat the model instead of shrinking it.
    std::uint64_t foldSizeLimit = 16ull << 20;
    // partition-for-devices: how many CPU devices to place the graph on.
    int devices = 2;
    // layout-nhwc: the channel block of NCHWc regions (8: AVX2, 16: AVX-512); 0 picks this CPU's.
    int layoutBlock = 0;
};

// One applied pattern instance: the nodes it matched (ids in the graph before the rewrite) and
// the nodes that replaced them (ids in the graph after it).
struct PatternMatch
{
    std::string rule;      // "conv-bn", "x*1", ...
    std::string graphPath; // "" for the main graph, else "If_0/then_branch"
    std::vector<NodeId> matched;
    std::vector<std::string> matchedNames;
    std::vector<NodeId> replacement;
    std::vector<std::string> replacementNames;
};

class PassContext
{
public:
    explicit PassContext(const PassOptions &options, const std::atomic<bool> *cancel = nullptr)
        : m_options(options), m_cancel(cancel)
    {
    }
    const PassOptions &options() const { return m_options; }
    bool cancelled() const { return m_cancel && m_cancel->load(std::memory_order_relaxed); }

    // Instrumentation: RewritePass records every match; a pass that rewrites regions itself
    // (layout-nhwc) records each region the same way.
    void recordMatch(PatternMatch match) { m_matches.push_back(std::move(match)); }
    std::vector<PatternMatch> takeMatches() { return std::move(m_matches); }
    // A decision a pass reports to the user (layout-nhwc: per region, what it chose and why).
    void note(std::string text) { m_notes.push_back(std::move(text)); }
    std::vector<std::string> takeNotes() { return std::move(m_notes); }

private:
    const PassOptions &m_options;
    const std::atomic<bool> *m_cancel;
    std::vector<PatternMatch> m_matches;
    std::vector<std::string> m_notes;
};

class Pass
{
public:
    virtual ~Pass() = default;
    virtual std::string name() const = 0;
    // Runs once more while it keeps changing the graph (bounded by the pipeline).
    virtual bool repeatsToFixedPoint() const { return false; }
    // true when the model changed.
    virtual Expected<bool> run(Model &model, PassContext &context) = 0;
};

// What a selector found; the fields an action needs beyond the nodes are pass-specific.
struct Match
{
    std::string rule;
    std::vector<NodeId> nodes;   // matched nodes, the anchor first
    std::vector<ValueId> values; // values the action needs (operands, constants)
    std::vector<std::int64_t> ints;
};

class RewritePass : public Pass
{
public:
    Expected<bool> run(Model &model, PassContext &context) override;

protected:
    // Finds candidate matches in one graph. Matches may overlap; apply() sees them in order and a
    // match whose nodes an earlier action removed is skipped.
    virtual void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const = 0;
    // Performs one match. false: the match no longer holds (nothing changed).
    virtual Expected<bool> apply(Model &model, Graph &graph, const Match &match) const = 0;
    // Also rewrite If/Loop/Scan bodies.
    virtual bool visitsSubgraphs() const { return true; }

private:
    Expected<bool> runOnGraph(Model &model, Graph &graph, const std::string &path, PassContext &context);
};

} // namespace opscope::passes
