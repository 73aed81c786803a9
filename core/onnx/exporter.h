#pragma once
// IR → ONNX. Nodes are written in (stable) topological order; generated node names are written
// back as empty, as they were read; tensor bytes go through a TensorSink (embedded or external).

#include "ir/model.h"
#include "onnx/protoconvert.h"
#include "util/status.h"

#include <onnx/onnx_pb.h>

namespace opscope {

Status exportModel(const Model &model, TensorSink &sink, onnx::ModelProto *proto);

} // namespace opscope
