#include "ir/tensorwalk.h"

namespace opscope {

void forEachTensor(const Graph &graph, const std::function<void(const Tensor &)> &visit)
{
    for (ValueId v : graph.initializers())
        visit(*graph.value(v).initializer);
    for (NodeId id : graph.nodeIds())
        for (const Attribute &a : graph.node(id).attributes) {
            visit(a.t);
            for (const Tensor &t : a.tensors)
                visit(t);
            if (a.g)
                forEachTensor(*a.g, visit);
            for (const ClonePtr<Graph> &sub : a.graphs)
                if (sub)
                    forEachTensor(*sub, visit);
        }
}

} // namespace opscope
