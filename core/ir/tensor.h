#pragma once
// Constant tensors (initializers, attribute values). The bytes live in an immutable, shared
// Buffer: copying a Tensor or a whole Graph never copies weight data, which is what makes a
// snapshot after every pass cheap. A Buffer can point into a memory-mapped external-data file.

#include "ir/datatype.h"
#include "util/status.h"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace opscope {

class MappedFile;

// Immutable bytes plus whatever keeps them alive (a heap block, a mapping).
class Buffer
{
public:
    static std::shared_ptr<const Buffer> fromBytes(std::vector<std::byte> bytes);
    static std::shared_ptr<const Buffer> fromString(std::string bytes); // takes Protobuf's raw_data as is
    // A window into a mapped file; bytes are read from disk only when touched. Files place
    // tensors at any offset (Protobuf's raw_data, external data after an odd-sized tensor), and
    // kernels and passes read a tensor as its element type: where the window is not aligned to
    // `alignment`, bytes() gives an aligned copy, made once on first use, so only the weights a
    // process reads are copied (a rank reading its share of a mapped model).
    static std::shared_ptr<const Buffer> fromMapping(std::shared_ptr<const MappedFile> file,
                                                     std::uint64_t offset, std::uint64_t length,
                                                     std::size_t alignment);

    // The bytes, aligned for the element type the buffer was made for.
    std::span<const std::byte> bytes() const { return m_misaligned ? alignedCopy() : m_bytes; }
    // The bytes where they lie, for readers that go byte by byte (writers, digests): no copy.
    std::span<const std::byte> storedBytes() const { return m_bytes; }
    std::size_t size() const { return m_bytes.size(); }
    // Whether bytes() copied (or will copy) a misaligned window to the heap.
    bool isMisaligned() const { return m_misaligned; }
    // Unique per buffer for the process lifetime: fingerprints use it instead of hashing weights.
    std::uint64_t id() const { return m_id; }
    bool isMapped() const { return m_mapped; }

private:
    Buffer(std::span<const std::byte> bytes, std::shared_ptr<const void> owner, bool mapped);
    std::span<const std::byte> alignedCopy() const;
    std::span<const std::byte> m_bytes;
    std::shared_ptr<const void> m_owner;
    std::uint64_t m_id;
    bool m_mapped;
    bool m_misaligned = false;
    mutable std::once_flag m_copyOnce;
    mutable std::shared_ptr<std::byte> m_copy; // aligned heap copy of a misaligned window
};

// Where a tensor's bytes were found on disk, kept for reports ("weights.bin @ 4096, 1.0 GiB").
struct ExternalSource
{
    std::string location; // as written in the model, relative to its folder
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

struct Tensor
{
    DataType dtype = DataType::Undefined;
    std::vector<std::int64_t> dims;
    std::shared_ptr<const Buffer> data;                      // every non-string type, little endian
    std::shared_ptr<const std::vector<std::string>> strings; // DataType::String only
    std::string name;                                        // as in the file (may be empty in attributes)
    std::string docString;
    std::optional<ExternalSource> external;
    // Bytes read from a mapped file where touched (external data, or embedded weights mapped from
    // the model file), not held on the heap: what a process holds of them depends on what it reads.
    bool isMapped() const { return data && data->isMapped(); }

    // Element count; dims are validated on import so this cannot overflow for imported tensors.
    std::int64_t elementCount() const;
    std::uint64_t byteSize() const; // storage bytes (strings: sum of lengths)
    std::span<const std::byte> bytes() const;
    template<class T>
    std::span<const T> as() const
    {
        const auto b = bytes();
        return {reinterpret_cast<const T *>(b.data()), b.size() / sizeof(T)};
    }
    bool sameContent(const Tensor &other) const; // dtype, dims and bytes (not names)

    static Tensor fromBytes(DataType dtype, std::vector<std::int64_t> dims, std::vector<std::byte> bytes);
    template<class T>
    static Tensor fromValues(DataType dtype, std::vector<std::int64_t> dims, const std::vector<T> &values)
    {
        std::vector<std::byte> b(values.size() * sizeof(T));
        if (!b.empty())
            std::memcpy(b.data(), values.data(), b.size());
        return fromBytes(dtype, std::move(dims), std::move(b));
    }
};

struct SparseTensor
{
    Tensor values;  // 1-D, nnz values
    Tensor indices; // [nnz] linearized or [nnz, rank]
    std::vector<std::int64_t> dims;
    bool operator==(const SparseTensor &other) const;
};

// The dense tensor a sparse one stands for (zeros elsewhere). Indices are checked against the
// dims; a dense form over 1 GiB is refused (a user-facing error, not an allocation failure).
Expected<Tensor> denseFromSparse(const SparseTensor &sparse, const std::string &what);

// Checks that a tensor's byte count agrees with its dtype and dims.
Status validateTensorData(const Tensor &tensor, const std::string &what);
// A bool tensor whose bytes are not all 0 or 1 (ONNX stores one byte per value; any nonzero byte
// is true) gets a copy holding 0/1: kernels read the bytes as C++ bool, for which any other value
// is undefined behaviour (found by the run fuzzer). Other tensors are left as they are.
void canonicalizeBools(Tensor &tensor);
// `have` bytes are exactly dims × the element size of a fixed-size dtype (the check behind
// validateTensorData, also run on raw protobuf tensors before libonnx reads them).
Status checkTensorByteCount(DataType dtype, const std::vector<std::int64_t> &dims, std::uint64_t have,
                            const std::string &what);

} // namespace opscope
