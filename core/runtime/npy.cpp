#include "runtime/npy.h"

#include "util/atomicfile.h"
#include "ir/types.h"
#include "util/mappedfile.h"

#include <charconv>
#include <regex>

namespace opscope {
namespace {

struct NpyType
{
    const char *descr;
    DataType dtype;
};

constexpr NpyType npyTypes[] = {
    {"<f4", DataType::Float},  {"<f8", DataType::Double}, {"<f2", DataType::Float16},
    {"|i1", DataType::Int8},   {"<i2", DataType::Int16},  {"<i4", DataType::Int32},
    {"<i8", DataType::Int64},  {"|u1", DataType::UInt8},  {"<u2", DataType::UInt16},
    {"<u4", DataType::UInt32}, {"<u8", DataType::UInt64}, {"|b1", DataType::Bool},
};

// The shape tuple of a .npy header, "(3, 224, 224)" or "(5,)" or "()": every entry a size.
Expected<std::vector<std::int64_t>> parseNpyShape(const std::string &dims, const std::string &what)
{
    std::vector<std::int64_t> shape;
    std::size_t i = 0;
    auto skipSpace = [&] {
        while (i < dims.size() && (dims[i] == ' ' || dims[i] == '\t'))
            ++i;
    };
    for (skipSpace(); i < dims.size(); skipSpace()) {
        std::int64_t v = 0;
        const char *begin = dims.data() + i;
        const auto [end, ec] = std::from_chars(begin, dims.data() + dims.size(), v);
        if (ec == std::errc::result_out_of_range)
            return Status::invalid(what + ": shape entry '" + std::string(begin, end) +
                                   "' is larger than any tensor can be");
        if (ec != std::errc() || v < 0)
            return Status::invalid(what + ": the header's shape (" + dims +
                                   ") must list non-negative whole numbers");
        shape.push_back(v);
        i = static_cast<std::size_t>(end - dims.data());
        skipSpace();
        if (i < dims.size() && dims[i] == ',')
            ++i;
        else if (i < dims.size())
            return Status::invalid(what + ": the header's shape (" + dims + ") is malformed");
    }
    return shape;
}

} // namespace

Expected<RuntimeTensor> readNpy(const std::filesystem::path &path)
{
    Expected<std::shared_ptr<const MappedFile>> file = MappedFile::open(path);
    if (!file)
        return file.status();
    const std::span<const std::byte> raw = (*file)->bytes();
    const std::string_view bytes(reinterpret_cast<const char *>(raw.data()), raw.size());
    const std::string what = "'" + path.string() + "'";
    if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
        return Status::invalid(what + " is not a .npy file");
    const int major = static_cast<unsigned char>(bytes[6]);
    std::size_t headerLen = 0, offset = 0;
    if (major == 1) {
        headerLen = std::size_t(static_cast<unsigned char>(bytes[8])) |
                    std::size_t(static_cast<unsigned char>(bytes[9])) << 8;
        offset = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12)
            return Status::invalid(what + " is truncated");
        for (int i = 0; i < 4; ++i)
            headerLen |= std::size_t(static_cast<unsigned char>(bytes[std::size_t(8 + i)])) << (8 * i);
        offset = 12;
    } else {
        return Status::unsupported(what + " uses .npy format version " + std::to_string(major));
    }
    if (offset + headerLen > bytes.size())
        return Status::invalid(what + " is truncated");
    const std::string header(bytes.substr(offset, headerLen));
    std::smatch m;
    if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']+)'")))
        return Status::invalid(what + ": no 'descr' in the header");
    const std::string descr = m[1];
    if (!std::regex_search(header, m, std::regex("'fortran_order'\\s*:\\s*(\\w+)")))
        return Status::invalid(what + ": no 'fortran_order' in the header");
    if (m[1] != "False")
        return Status::unsupported(what + " is in Fortran (column-major) order; save it with "
                                          "numpy.save(path, numpy.ascontiguousarray(a))");
    if (!std::regex_search(header, m, std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)")))
        return Status::invalid(what + ": no 'shape' in the header");
    Expected<std::vector<std::int64_t>> parsed = parseNpyShape(m[1], what);
    if (!parsed)
        return parsed.status();
    const std::vector<std::int64_t> shape = std::move(*parsed);
    DataType dtype = DataType::Undefined;
    for (const NpyType &t : npyTypes)
        if (descr == t.descr ||
            (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string(t.descr).substr(1)))
            dtype = t.dtype;
    if (dtype == DataType::Undefined)
        return Status::unsupported(what + " has element type '" + descr + "', which opscope does not read");
    // Compare sizes before allocating: a short file that claims a huge shape is a bad file,
    // not an out-of-memory condition.
    const Expected<std::int64_t> count = checkedElementCount(shape, what + "'s shape");
    if (!count)
        return count.status();
    const std::size_t dataStart = offset + headerLen;
    const std::size_t have = bytes.size() - dataStart;
    const long double need = static_cast<long double>(*count) * static_cast<long double>(dataTypeSize(dtype));
    if (static_cast<long double>(have) != need)
        return Status::invalid(what + " holds " + std::to_string(have) + " bytes of data, but its shape (" +
                               std::string(m[1]) + ") of " + std::string(dataTypeName(dtype)) + " needs " +
                               std::to_string(*count) + " × " + std::to_string(dataTypeSize(dtype)) + " bytes");
    Expected<RuntimeTensor> t = RuntimeTensor::allocate(dtype, shape);
    if (!t)
        return t.status().withContext(what);
    std::memcpy(t->mutableBytes(), bytes.data() + dataStart, t->byteSize());
    if (dtype == DataType::Bool) // any nonzero byte is true; kernels read bool, which is 0 or 1
        for (std::size_t i = 0; i < t->byteSize(); ++i)
            t->mutableBytes()[i] = std::byte(t->mutableBytes()[i] != std::byte(0));
    return t;
}

Status writeNpy(const std::filesystem::path &path, const RuntimeTensor &tensor)
{
    const char *descr = nullptr;
    for (const NpyType &t : npyTypes)
        if (t.dtype == tensor.dtype())
            descr = t.descr;
    if (!descr)
        return Status::unsupported("cannot write a " + std::string(dataTypeName(tensor.dtype())) +
                                   " tensor as .npy");
    std::string shape;
    for (std::size_t i = 0; i < tensor.rank(); ++i)
        shape += std::to_string(tensor.dim(i)) + (tensor.rank() == 1 || i + 1 < tensor.rank() ? "," : "");
    std::string header =
        "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" + shape + "), }";
    const std::size_t total = 10 + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    std::string prefix = "\x93NUMPY";
    prefix += '\x01';
    prefix += '\x00';
    prefix += static_cast<char>(header.size() & 0xff);
    prefix += static_cast<char>((header.size() >> 8) & 0xff);
    AtomicFile file(path);
    OPSCOPE_TRY(file.open());
    OPSCOPE_TRY(file.write(prefix + header));
    OPSCOPE_TRY(file.write(std::span<const std::byte>(tensor.bytes(), tensor.byteSize())));
    return file.commit();
}

} // namespace opscope
