#include "ir/model.h"

namespace opscope {

std::int64_t Model::opsetVersion(std::string_view wanted) const
{
    const auto canonical = [](std::string_view d) { return d == "ai.onnx" ? std::string_view() : d; };
    for (const OpsetImport &o : opsets)
        if (canonical(o.domain) == canonical(wanted))
            return o.version;
    return -1;
}

} // namespace opscope
