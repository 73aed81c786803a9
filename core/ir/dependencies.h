#pragma once
// Dependencies between nodes, including the implicit ones: an If/Loop/Scan body may read values
// of the enclosing graph by name, so the node must run after their producers (and keep them alive).

#include "ir/graph.h"

#include <string>
#include <vector>

namespace opscope {

// The one place that decides which values subgraphs read. A body reads a name of an enclosing
// graph through a value marked outerScope; the name may be defined one, two or more levels up, and
// an intermediate graph that does not read it itself has no value for it at all. So every question
// below walks the subgraphs at every depth: a value of `graph` is read by a subgraph when some
// graph nested in it, at any depth, reads its name and no graph in between defines that name.

// Values of `graph` read (by name) inside the subgraphs of node `id`, at any depth.
std::vector<ValueId> implicitInputs(const Graph &graph, NodeId id);

// Whether a subgraph of any node of `graph`, at any depth, reads `v` by name. Passes must treat
// such a value as used: removing or renaming it leaves the body reading a name nothing defines.
bool readBySubgraph(const Graph &graph, ValueId v);

// readBySubgraph for every value slot of `graph`, in one walk.
std::vector<bool> subgraphReads(const Graph &graph);

// Makes the subgraphs of node `id` read `to` wherever they read `from` from outside themselves, at
// any depth (a graph that defines `from` itself keeps it, and so does what is nested below it).
// Partitioning uses it when a body's outer value arrives on the body's device through a Recv: the
// body must read the received copy, which lives under another name. `to` must be a name no graph
// of the tree uses. Returns how many outer-scope references were renamed.
std::size_t renameSubgraphReads(Graph &graph, NodeId id, const std::string &from, const std::string &to);

// Whether `name` is the name of a value of `graph` or of any graph nested in it (live nodes only).
bool nameUsedInTree(const Graph &graph, const std::string &name);

// Gives each value a subgraph reads from an enclosing graph (outerScope, at any depth) the type of
// the value it names there, where the body itself declares none: exports rarely repeat the outer
// value_info inside a body, so without this a captured input shows and checks as untyped. Only
// unknown types are filled. Returns how many values got one.
std::size_t typeCapturedValues(Graph &graph);

// For every node slot: the nodes whose outputs it reads, explicitly or implicitly (deduplicated).
std::vector<std::vector<NodeId>> nodePredecessors(const Graph &graph);

// Topological order that honours implicit inputs too (stable, like Graph::topologicalOrder).
Expected<std::vector<NodeId>> dependencyOrder(const Graph &graph);

} // namespace opscope
