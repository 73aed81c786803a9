#pragma once
// Conversions between ONNX's protobuf messages and the IR for the leaf types: value types,
// tensors, sparse tensors. Graph-level import/export builds on these (importer.cpp, exporter.cpp).

#include "ir/tensor.h"
#include "ir/types.h"
#include "onnx/externaldata.h"
#include "util/atomicfile.h"
#include "util/status.h"

#include <onnx/onnx_pb.h>

namespace opscope {

TypeInfo typeFromProto(const onnx::TypeProto &proto);
void typeToProto(const TypeInfo &type, onnx::TypeProto *proto);

// Takes the bytes out of `proto` (raw_data is moved, not copied). External data is mapped
// through `files`, never read. `what` names the tensor in messages.
Expected<Tensor> tensorFromProto(onnx::TensorProto &proto, ExternalFiles &files, const std::string &what);
Expected<SparseTensor> sparseTensorFromProto(onnx::SparseTensorProto &proto, ExternalFiles &files,
                                             const std::string &what);

// Where tensor bytes go on export: embedded in the proto, or appended to an external data file.
class TensorSink
{
public:
    // externalFile == nullptr: embed everything.
    TensorSink(AtomicFile *externalFile, std::string location, std::uint64_t threshold)
        : m_file(externalFile), m_location(std::move(location)), m_threshold(threshold)
    {
    }
    Status write(const Tensor &tensor, onnx::TensorProto *proto);
    std::uint64_t externalBytes() const { return m_externalBytes; }

private:
    AtomicFile *m_file;
    std::string m_location;
    std::uint64_t m_threshold;
    std::uint64_t m_externalBytes = 0;
};

Status sparseTensorToProto(const SparseTensor &tensor, TensorSink &sink, onnx::SparseTensorProto *proto);

} // namespace opscope
