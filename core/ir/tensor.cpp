#include "ir/tensor.h"

#include "ir/datatype.h"
#include "ir/types.h"
#include "util/mappedfile.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <limits>
#include <utility>

namespace opscope {
namespace {
std::atomic<std::uint64_t> nextBufferId{1};
}

Buffer::Buffer(std::span<const std::byte> bytes, std::shared_ptr<const void> owner, bool mapped)
    : m_bytes(bytes), m_owner(std::move(owner)), m_id(nextBufferId.fetch_add(1)), m_mapped(mapped)
{
}

std::shared_ptr<const Buffer> Buffer::fromBytes(std::vector<std::byte> bytes)
{
    auto owner = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
    const std::span<const std::byte> view(owner->data(), owner->size());
    return std::shared_ptr<const Buffer>(new Buffer(view, std::move(owner), false));
}

std::shared_ptr<const Buffer> Buffer::fromString(std::string bytes)
{
    auto owner = std::make_shared<const std::string>(std::move(bytes));
    const std::span<const std::byte> view(reinterpret_cast<const std::byte *>(owner->data()), owner->size());
    return std::shared_ptr<const Buffer>(new Buffer(view, std::move(owner), false));
}

std::shared_ptr<const Buffer> Buffer::fromMapping(std::shared_ptr<const MappedFile> file,
                                                  std::uint64_t offset, std::uint64_t length,
                                                  std::size_t alignment)
{
    const std::span<const std::byte> view = file->bytes().subspan(offset, length);
    auto *buffer = new Buffer(view, std::move(file), true);
    buffer->m_misaligned = alignment > 1 && reinterpret_cast<std::uintptr_t>(view.data()) % alignment != 0;
    return std::shared_ptr<const Buffer>(buffer);
}

std::span<const std::byte> Buffer::alignedCopy() const
{
    std::call_once(m_copyOnce, [this] {
        // 64 bytes, like every tensor the runtime allocates: SIMD loads see one alignment.
        const std::size_t rounded = (m_bytes.size() + 63) / 64 * 64;
        m_copy.reset(static_cast<std::byte *>(std::aligned_alloc(64, std::max<std::size_t>(rounded, 64))),
                     [](std::byte *p) { std::free(p); });
        if (m_copy && !m_bytes.empty())
            std::memcpy(m_copy.get(), m_bytes.data(), m_bytes.size());
    });
    if (!m_copy)
        throw std::bad_alloc();
    return {m_copy.get(), m_bytes.size()};
}

std::int64_t Tensor::elementCount() const
{
    std::int64_t n = 1;
    for (std::int64_t d : dims)
        n *= d;
    return n;
}

std::uint64_t Tensor::byteSize() const
{
    if (dtype == DataType::String) {
        std::uint64_t total = 0;
        if (strings)
            for (const std::string &s : *strings)
                total += s.size();
        return total;
    }
    return data ? data->size() : 0;
}

std::span<const std::byte> Tensor::bytes() const
{
    return data ? data->bytes() : std::span<const std::byte>();
}

bool Tensor::sameContent(const Tensor &other) const
{
    if (dtype != other.dtype || dims != other.dims)
        return false;
    if (dtype == DataType::String) {
        static const std::vector<std::string> none;
        return (strings ? *strings : none) == (other.strings ? *other.strings : none);
    }
    const auto a = data ? data->storedBytes() : std::span<const std::byte>();
    const auto b = other.data ? other.data->storedBytes() : std::span<const std::byte>();
    // memcmp of zero bytes still must not see null pointers (empty tensors have no buffer).
    return a.size() == b.size() && (a.empty() || a.data() == b.data() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

Tensor Tensor::fromBytes(DataType dtype, std::vector<std::int64_t> dims, std::vector<std::byte> bytes)
{
    Tensor t;
    t.dtype = dtype;
    t.dims = std::move(dims);
    t.data = Buffer::fromBytes(std::move(bytes));
    return t;
}

bool SparseTensor::operator==(const SparseTensor &other) const
{
    return dims == other.dims && values.sameContent(other.values) && indices.sameContent(other.indices);
}

Expected<Tensor> denseFromSparse(const SparseTensor &sparse, const std::string &what)
{
    const Tensor &values = sparse.values;
    const Tensor &indices = sparse.indices;
    if (values.dtype == DataType::String || values.dtype == DataType::Undefined)
        return Status::unsupported(what + ": sparse tensors of " + std::string(dataTypeName(values.dtype)) +
                                   " are not supported");
    const Expected<std::int64_t> total = checkedElementCount(sparse.dims, what);
    if (!total)
        return total.status();
    const std::size_t elem = dataTypeSize(values.dtype);
    if (static_cast<double>(*total) * static_cast<double>(elem) > double(1ull << 30))
        return Status::unsupported(what + ": its dense form would take over 1 GiB");
    const std::int64_t nnz = values.elementCount();
    const std::size_t rank = sparse.dims.size();
    if (values.dims.size() != 1 || indices.dtype != DataType::Int64)
        return Status::invalid(what + ": values must be 1-D and indices int64");
    const bool linear = indices.dims.size() == 1 && indices.dims[0] == nnz;
    const bool coordinates = indices.dims.size() == 2 && indices.dims[0] == nnz &&
                             indices.dims[1] == static_cast<std::int64_t>(rank);
    if (!linear && !coordinates)
        return Status::invalid(what + ": indices must be [" + std::to_string(nnz) + "] or [" +
                               std::to_string(nnz) + ", " + std::to_string(rank) + "]");
    std::vector<std::byte> dense(static_cast<std::size_t>(*total) * elem);
    const std::span<const std::int64_t> idx = indices.as<std::int64_t>();
    const std::span<const std::byte> src = values.bytes();
    for (std::int64_t k = 0; k < nnz; ++k) {
        std::int64_t flat = 0;
        if (linear) {
            flat = idx[std::size_t(k)];
        } else {
            for (std::size_t d = 0; d < rank; ++d) {
                const std::int64_t i = idx[std::size_t(k) * rank + d];
                if (i < 0 || i >= sparse.dims[d])
                    return Status::invalid(what + ": index " + std::to_string(i) + " is outside dimension " +
                                           std::to_string(d) + " of size " + std::to_string(sparse.dims[d]));
                flat = flat * sparse.dims[d] + i;
            }
        }
        if (flat < 0 || flat >= *total)
            return Status::invalid(what + ": index " + std::to_string(flat) + " is outside its " +
                                   std::to_string(*total) + " elements");
        std::memcpy(dense.data() + std::size_t(flat) * elem, src.data() + std::size_t(k) * elem, elem);
    }
    Tensor t = Tensor::fromBytes(values.dtype, sparse.dims, std::move(dense));
    t.name = values.name;
    return t;
}

Status validateTensorData(const Tensor &tensor, const std::string &what)
{
    const Expected<std::int64_t> count = checkedElementCount(tensor.dims, what);
    if (!count)
        return count.status();
    if (tensor.dtype == DataType::String) {
        const std::size_t have = tensor.strings ? tensor.strings->size() : 0;
        if (std::cmp_not_equal(have, *count))
            return Status::invalid(what + " holds " + std::to_string(have) + " strings but its shape needs " +
                                   std::to_string(*count));
        return Status::ok();
    }
    return checkTensorByteCount(tensor.dtype, tensor.dims, tensor.data ? tensor.data->size() : 0, what);
}

void canonicalizeBools(Tensor &tensor)
{
    if (tensor.dtype != DataType::Bool || !tensor.data)
        return;
    const std::span<const std::byte> bytes = tensor.data->bytes();
    if (std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte(0) || b == std::byte(1); }))
        return;
    std::vector<std::byte> fixed(bytes.size());
    for (std::size_t i = 0; i < bytes.size(); ++i)
        fixed[i] = std::byte(bytes[i] != std::byte(0));
    tensor.data = Buffer::fromBytes(std::move(fixed));
}

Status checkTensorByteCount(DataType dtype, const std::vector<std::int64_t> &dims, std::uint64_t have,
                            const std::string &what)
{
    const Expected<std::int64_t> count = checkedElementCount(dims, what);
    if (!count)
        return count.status();
    const std::size_t elem = dataTypeSize(dtype);
    if (elem == 0)
        return Status::invalid(what + " has an unsupported data type (" + std::to_string(int(dtype)) + ")");
    if (*count > std::numeric_limits<std::int64_t>::max() / static_cast<std::int64_t>(elem))
        return Status::invalid(what + " is larger than 2^63 bytes");
    const std::uint64_t need = static_cast<std::uint64_t>(*count) * elem;
    if (have != need)
        return Status::invalid(what + " holds " + std::to_string(have) + " bytes but its shape " +
                               Shape::fromSizes(dims).toString() + " of " + std::string(dataTypeName(dtype)) +
                               " needs " + std::to_string(need));
    return Status::ok();
}

} // namespace opscope
