#include "batches.h"

#include "rankplan.h"


namespace opscope::dist {

using nlohmann::json;

std::vector<std::byte> packOutputs(const std::vector<std::vector<RuntimeTensor>> &perBatch, int rank)
{
    json j = json::array();
    if (rank != 0)
        for (std::size_t m = 0; m < perBatch.size(); ++m)
            for (std::size_t i = 0; i < perBatch[m].size(); ++i)
                if (perBatch[m][i].isValid()) {
                    j.push_back({i, m, tensorToJson(perBatch[m][i])});
                }
    return packJson(j);
}

} // namespace opscope::dist
