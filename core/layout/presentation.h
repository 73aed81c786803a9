#pragma once
// What a graph view draws, as plain data: items (nodes, graph inputs/outputs, collapsed groups)
// and the edges between them, for one graph or the union of two (the pass stepper's BEFORE and
// AFTER share one layout, so unchanged nodes keep their place).
//
// Big models stay interactive by hierarchy: nodes are grouped by their name scopes
// ("/encoder/layer.3/attention/MatMul" is in /encoder/layer.3/attention), or in topological blocks
// when names have no scopes; collapsed groups are single items, laid out when opened.

#include "ir/graph.h"
#include "ir/opcategory.h"
#include "layout/graphlayout.h"

#include <array>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace opscope::layout {

// What an item shows for one of the graphs (BEFORE and AFTER may differ: a slot a pass rewrote).
struct VisualContent
{
    std::string name; // the node's name in that graph
    std::string title, subtitle;
    OpCategory category = OpCategory::Other;
    std::vector<std::string> constants;
    bool hasSubgraphs = false;
};

struct VisualItem
{
    enum class Kind
    {
        Node,
        Input,
        Output,
        Group,
    };
    Kind kind = Kind::Node;
    std::string key;      // node name, "in:<tensor>", "out:<tensor>", "group:<path>"
    std::string title;    // op type, tensor name, or the group's last scope
    std::string subtitle; // node name, tensor type, or "N nodes"
    OpCategory category = OpCategory::Other;
    std::vector<std::string> constants; // initializers a node reads, one line each (shown inside it)
    std::size_t members = 0;            // groups: nodes inside, at any depth
    std::string groupPath;              // groups: their path; nodes: the innermost group they are in
    unsigned presentIn = 1;             // bit i: exists in graph i
    bool hasSubgraphs = false;
    bool outerScope = false;      // inputs: a value a body reads from its enclosing graph
    std::array<NodeId, 2> node{}; // the node in graph 0 / 1 (invalid when absent)
    std::string name;             // node name (for this side after forSide)
    std::array<VisualContent, 2> content;

    // A copy whose name/title/subtitle/category/constants are those of graph `side` (when the item
    // exists there).
    VisualItem forSide(int side) const;
};

struct VisualEdge
{
    std::size_t from = 0, to = 0;
    std::string tensor;
    std::string label; // "float32[1,64,56,56]"
    unsigned presentIn = 1;
};

struct Presentation
{
    std::vector<VisualItem> items;
    std::vector<VisualEdge> edges;
    std::unordered_map<std::string, std::size_t> index; // key → item
    std::unordered_map<std::string, std::string> alias; // graph-1 node name → the item key it shares
    // Constant nodes drawn inside a reader (isInlinedConstant) → the item of their first reader.
    std::unordered_map<std::string, std::string> inlined;
};

// A Constant node whose value only ops read (not a graph output), directly or inside the bodies of
// an If/Loop/Scan: a weight written as a node. It is drawn inside its readers like an initializer,
// not as an item (Paddle exports have hundreds, which otherwise fill the first view with rows of
// Constant boxes; spox exports capture them from two levels up).
bool isInlinedConstant(const Graph &g, const Node &n);

class Grouping
{
public:
    // Groups of the union of `graphs` (one or two). Scopes with fewer than `minGroup` nodes are
    // not groups; unscoped levels with more than `blockSize` nodes are cut into topological blocks.
    static Grouping build(const std::vector<const Graph *> &graphs, std::size_t blockSize = 120,
                          std::size_t minGroup = 3);

    // Innermost group of a node (by name); "" is the root.
    const std::string &groupOf(const std::string &nodeName) const;
    std::string parentOf(const std::string &group) const;
    std::size_t size(const std::string &group) const;
    const std::vector<std::string> &childGroups(const std::string &group) const;
    std::size_t directNodes(const std::string &group) const;
    bool isGroup(const std::string &group) const { return group.empty() || m_size.count(group); }
    // The item a node is drawn as with `expanded` open: its outermost closed group
    // ("group:<path>"), or the node itself.
    std::string visibleKey(const std::string &nodeName, const std::set<std::string> &expanded) const;
    // The groups to open so that about `budget` items are visible, outermost first.
    std::set<std::string> initialExpansion(std::size_t budget) const;

private:
    std::unordered_map<std::string, std::string> m_nodeGroup;
    std::map<std::string, std::string> m_parent;
    std::map<std::string, std::size_t> m_size, m_direct;
    std::map<std::string, std::vector<std::string>> m_children;
};

// Items and edges of `graphs` (one or two) with the groups in `expanded` open (the root always is).
// `alias` (two graphs): a graph-1 node drawn in the slot of a graph-0 node — what a pass replaced
// it with (FusedConv where the Conv was) — so AFTER shows the rewrite in place.
Presentation present(const std::vector<const Graph *> &graphs, const Grouping &grouping,
                     const std::set<std::string> &expanded,
                     const std::unordered_map<std::string, std::string> &alias = {});

// The layout request for a presentation; `size` gives each item's box in points.
LayoutRequest layoutRequest(const Presentation &p, const std::function<Point(const VisualItem &)> &size);

} // namespace opscope::layout
