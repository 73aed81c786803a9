#include "runtime/npy.h"

#include "util/atomicfile.h"

#include <fstream>
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

} // namespace

Expected<RuntimeTensor> readNpy(const std::filesystem::path &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Status::notFound("cannot read '" + path.string() + "'");
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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
    const std::string header = bytes.substr(offset, headerLen);
    std::smatch m;
    if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']+)'")))
        return Status::invalid(what + ": no 'descr' in the header");
    const std::string descr = m[1];
    if (std::regex_search(header, std::regex("'fortran_order':\\s*True")))
        return Status::unsupported(what + " is in Fortran order; save it with numpy.ascontiguousarray");
    if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)")))
        return Status::invalid(what + ": no 'shape' in the header");
    std::vector<std::int64_t> shape;
    const std::string dims = m[1];
    const std::regex number("[0-9]+");
    for (std::sregex_iterator it(dims.begin(), dims.end(), number), end; it != end; ++it)
        shape.push_back(std::stoll(it->str()));
    DataType dtype = DataType::Undefined;
    for (const NpyType &t : npyTypes)
        if (descr == t.descr ||
            (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string(t.descr).substr(1)))
            dtype = t.dtype;
    if (dtype == DataType::Undefined)
        return Status::unsupported(what + " has element type '" + descr + "', which opscope does not read");
    Expected<RuntimeTensor> t = RuntimeTensor::allocate(dtype, shape);
    if (!t)
        return t.status().withContext(what);
    const std::size_t dataStart = offset + headerLen;
    if (bytes.size() - dataStart != t->byteSize())
        return Status::invalid(what + " holds " + std::to_string(bytes.size() - dataStart) +
                               " bytes of data, its shape " + t->shapeText() + " needs " +
                               std::to_string(t->byteSize()));
    std::memcpy(t->mutableBytes(), bytes.data() + dataStart, t->byteSize());
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
