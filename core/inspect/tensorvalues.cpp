#include "inspect/tensorvalues.h"

#include "runtime/runtimetensor.h"

#include <cinttypes>
#include <cstdio>

namespace opscope {

namespace {

std::string floatText(double v)
{
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

template<class T>
std::string integerText(const Tensor &t, std::int64_t i)
{
    const auto values = t.as<T>();
    if (i < 0 || std::size_t(i) >= values.size())
        return {};
    if constexpr (std::is_signed_v<T>)
        return std::to_string(static_cast<long long>(values[std::size_t(i)]));
    else
        return std::to_string(static_cast<unsigned long long>(values[std::size_t(i)]));
}

} // namespace

std::optional<Tensor> constantValue(const Graph &graph, ValueId v)
{
    if (!v.valid())
        return std::nullopt;
    const Value &value = graph.value(v);
    std::optional<Tensor> out;
    if (value.initializer)
        out = *value.initializer;
    else if (value.producer.valid() && graph.node(value.producer).opType == "Constant")
        if (const Attribute *a = graph.node(value.producer).attribute("value"); a && a->type == AttributeType::Tensor)
            out = a->t;
    if (out)
        out->name = value.name;
    return out;
}

std::vector<Tensor> constantInputs(const Graph &graph, NodeId node)
{
    std::vector<Tensor> out;
    const Node &n = graph.node(node);
    for (ValueId v : n.inputs)
        if (std::optional<Tensor> t = constantValue(graph, v))
            out.push_back(std::move(*t));
    if (n.opType == "Constant" && !n.outputs.empty())
        if (std::optional<Tensor> t = constantValue(graph, n.outputs[0]))
            out.push_back(std::move(*t));
    return out;
}

std::string elementText(const Tensor &t, std::int64_t i)
{
    if (i < 0 || i >= t.elementCount())
        return {};
    switch (t.dtype) {
    case DataType::String: {
        if (!t.strings || std::size_t(i) >= t.strings->size())
            return {};
        return "\"" + (*t.strings)[std::size_t(i)] + "\"";
    }
    case DataType::Bool: return t.as<std::uint8_t>()[std::size_t(i)] ? "true" : "false";
    case DataType::Int64: return integerText<std::int64_t>(t, i);
    case DataType::UInt64: return integerText<std::uint64_t>(t, i);
    case DataType::Int32: return integerText<std::int32_t>(t, i);
    case DataType::UInt32: return integerText<std::uint32_t>(t, i);
    case DataType::Int16: return integerText<std::int16_t>(t, i);
    case DataType::UInt16: return integerText<std::uint16_t>(t, i);
    case DataType::Int8: return integerText<std::int8_t>(t, i);
    case DataType::UInt8: return integerText<std::uint8_t>(t, i);
    case DataType::Float:
    case DataType::Double:
    case DataType::Float16:
    case DataType::BFloat16:
        if (!t.data || std::uint64_t(i + 1) * dataTypeSize(t.dtype) > t.bytes().size())
            return {};
        return floatText(RuntimeTensor::fromConstant(t).valueAsDouble(i));
    default: return "?";
    }
}

std::optional<std::string> allValuesText(const Tensor &t, std::int64_t limit)
{
    const std::int64_t n = t.elementCount();
    if (n > limit || (t.dtype == DataType::String ? !t.strings : !t.data))
        return std::nullopt;
    if (t.dims.empty())
        return elementText(t, 0);
    // Row-major: an opening bracket wherever an index rolls over to 0, closing ones before.
    std::string out;
    std::vector<std::int64_t> index(t.dims.size(), 0);
    if (n == 0)
        return std::string(t.dims.size(), '[') + std::string(t.dims.size(), ']');
    for (std::int64_t flat = 0; flat < n; ++flat) {
        std::size_t opened = 0;
        for (std::size_t k = t.dims.size(); k-- > 0 && index[k] == 0;)
            ++opened;
        if (flat)
            out += ", ";
        out += std::string(opened, '[');
        out += elementText(t, flat);
        // Advance the index; count how many axes close.
        std::size_t closed = 0;
        for (std::size_t k = t.dims.size(); k-- > 0;) {
            if (++index[k] < t.dims[k])
                break;
            index[k] = 0;
            ++closed;
        }
        out += std::string(closed, ']');
    }
    return out;
}

Expected<TensorSlice> TensorSlice::make(const Tensor &tensor, int rowAxis, int colAxis, std::vector<std::int64_t> fixed)
{
    const int rank = int(tensor.dims.size());
    if (rank == 0) {
        TensorSlice s;
        s.m_tensor = tensor;
        return s;
    }
    if (rowAxis < 0 || rowAxis >= rank || colAxis >= rank || colAxis == rowAxis || colAxis < -1)
        return Status::invalid("choose two different axes of the tensor's " + std::to_string(rank));
    fixed.resize(std::size_t(rank), 0);
    std::vector<std::int64_t> strides(std::size_t(rank), 1);
    for (int k = rank - 1; k > 0; --k)
        strides[std::size_t(k - 1)] = strides[std::size_t(k)] * tensor.dims[std::size_t(k)];
    TensorSlice s;
    s.m_tensor = tensor;
    for (int k = 0; k < rank; ++k) {
        if (k == rowAxis || k == colAxis)
            continue;
        if (fixed[std::size_t(k)] < 0 || fixed[std::size_t(k)] >= tensor.dims[std::size_t(k)])
            return Status::invalid("index " + std::to_string(fixed[std::size_t(k)]) + " is outside axis " +
                                   std::to_string(k) + " (size " + std::to_string(tensor.dims[std::size_t(k)]) + ")");
        s.m_base += fixed[std::size_t(k)] * strides[std::size_t(k)];
    }
    s.m_rows = tensor.dims[std::size_t(rowAxis)];
    s.m_rowStride = strides[std::size_t(rowAxis)];
    if (colAxis >= 0) {
        s.m_cols = tensor.dims[std::size_t(colAxis)];
        s.m_colStride = strides[std::size_t(colAxis)];
    }
    return s;
}

std::int64_t TensorSlice::flatIndex(std::int64_t row, std::int64_t col) const
{
    return m_base + row * m_rowStride + col * m_colStride;
}

} // namespace opscope
