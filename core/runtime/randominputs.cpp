#include "runtime/randominputs.h"

#include "runtime/kernels/kernelutil.h"
#include "util/systemmemory.h"

#include <algorithm>
#include <random>
#include <set>

namespace opscope {

namespace {

// The exclusive upper bound for random integers of input `v`: the options' bound, lowered to the
// size a Gather / GatherElements reading them as indices gathers from (an embedding's vocabulary:
// indices past it are an error of the input, not of the model, and ended the run).
std::int64_t integerBound(const Graph &graph, ValueId v, std::int64_t bound)
{
    for (const Use &u : graph.uses(v)) {
        const Node &n = graph.node(u.node);
        if (u.inputIndex != 1 || (n.opType != "Gather" && n.opType != "GatherElements") || !n.domain.empty() ||
            n.inputs.empty() || !n.inputs[0].valid())
            continue;
        const TypeInfo &data = graph.value(n.inputs[0]).type;
        if (!data.shape)
            continue;
        const auto rank = std::int64_t(data.shape->dims.size());
        std::int64_t axis = 0;
        if (const Attribute *a = n.attribute("axis"))
            axis = a->i;
        if (axis < 0)
            axis += rank;
        if (axis < 0 || axis >= rank || !data.shape->dims[std::size_t(axis)].isKnown())
            continue;
        bound = std::min(bound, std::max<std::int64_t>(1, data.shape->dims[std::size_t(axis)].value));
    }
    return bound;
}

} // namespace

Expected<Feeds> randomFeeds(const InferenceSession &session, const Feeds &given,
                            const RandomInputOptions &options)
{
    Feeds feeds = given;
    std::mt19937_64 rng(options.seed);
    // Every shape first: inputs that would not fit are refused before any is made. A model that
    // declares [3, 2^31 - 1] (fuzzing found it) had its 25 GiB of random floats written for a
    // minute, then died of memory, instead of being told at once.
    std::vector<std::pair<const IoInfo *, std::vector<std::int64_t>>> wanted;
    long double total = 0;
    for (const IoInfo &io : session.inputs()) {
        const bool isGiven =
            std::any_of(given.begin(), given.end(), [&](const auto &f) { return f.first == io.name; });
        if (isGiven || io.hasDefault)
            continue;
        if (io.type.kind != TypeInfo::Kind::Tensor)
            return Status::unsupported("input '" + io.name + "' is a " + io.type.toString() +
                                       "; give it explicitly");
        if (!io.type.shape)
            return Status::invalid("input '" + io.name + "' has no declared shape; give it explicitly");
        std::vector<std::int64_t> shape;
        long double elements = 1;
        for (const Dim &d : io.type.shape->dims) {
            if (d.isKnown()) {
                shape.push_back(d.value);
            } else {
                shape.push_back(boundDim(d, options.dims).value_or(1));
            }
            elements *= static_cast<long double>(std::max<std::int64_t>(shape.back(), 0));
        }
        total += elements * static_cast<long double>(std::max<std::size_t>(dataTypeSize(io.type.elemType), 1));
        wanted.emplace_back(&io, std::move(shape));
    }
    if (const std::uint64_t have = recentAvailableMemoryBytes(); have && total > static_cast<long double>(have)) {
        std::string sizes;
        for (const auto &[io, shape] : wanted)
            sizes += (sizes.empty() ? "" : ", ") + io->name + " " + shapeText(shape);
        return Status::unsupported("random inputs of the declared sizes (" + sizes + ") need " +
                                   bytesText(total > 1.8e19L ? UINT64_MAX : std::uint64_t(total)) + ", but " +
                                   bytesText(have) +
                                   " is available: give smaller sizes with --dim or the inputs with --input");
    }
    for (const auto &[ioPtr, shape] : wanted) {
        const IoInfo &io = *ioPtr;
        Expected<RuntimeTensor> t = RuntimeTensor::allocate(io.type.elemType, shape);
        if (!t)
            return t.status().withContext("input '" + io.name + "'");
        std::uniform_real_distribution<double> real(options.low, options.high);
        const ValueId value = session.model().graph.findValue(io.name);
        const std::int64_t high =
            value.valid() ? integerBound(session.model().graph, value, options.intHigh) : options.intHigh;
        std::uniform_int_distribution<std::int64_t> integer(0, std::max<std::int64_t>(high - 1, 0));
        const Status st = kernels::dispatchNumeric(io.type.elemType, [&](auto tag) -> Status {
            using T = decltype(tag);
            T *p = t->template mutableData<T>();
            for (std::int64_t i = 0; i < t->elementCount(); ++i) {
                if constexpr (std::is_same_v<T, bool>)
                    p[i] = (rng() & 1) != 0;
                else if constexpr (kernels::isFloatLike<T>)
                    p[i] = static_cast<T>(static_cast<kernels::ComputeType<T>>(real(rng)));
                else
                    p[i] = static_cast<T>(integer(rng));
            }
            return Status::ok();
        });
        if (!st)
            return st.withContext("input '" + io.name + "'");
        feeds.emplace_back(io.name, std::move(*t));
    }
    return feeds;
}

std::optional<std::int64_t> boundDim(const Dim &d, const std::map<std::string, std::int64_t> &dims)
{
    if (!d.symbol.empty())
        if (const auto it = dims.find(d.symbol); it != dims.end())
            return it->second;
    if (d.symbol.empty() || d.isInvented())
        if (const auto it = dims.find(kUnnamedDim); it != dims.end())
            return it->second;
    return std::nullopt;
}

Status checkDimNames(const std::map<std::string, std::int64_t> &dims, const Graph &graph)
{
    std::set<std::string> known;
    for (ValueId v : graph.inputs()) {
        const auto &shape = graph.value(v).type.shape;
        if (!shape)
            continue;
        for (const Dim &d : shape->dims) {
            if (!d.symbol.empty())
                known.insert(d.symbol);
            if (!d.isKnown() && (d.symbol.empty() || d.isInvented()))
                known.insert(kUnnamedDim); // "unk__314" prints as "?": both names bind it
        }
    }
    for (const auto &[name, value] : dims) {
        if (known.count(name))
            continue;
        std::string list;
        for (const std::string &k : known)
            list += (list.empty() ? "" : ", ") + k;
        return Status::invalid("--dim " + name + ": the model's inputs have no dimension named '" + name + "' (" +
                               (known.empty() ? std::string("they have no symbolic dimensions") : "they have: " + list) + ")");
    }
    return Status::ok();
}

} // namespace opscope
