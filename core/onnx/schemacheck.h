#pragma once
// Checks of a model's nodes against their libonnx schemas, made before any libonnx code (checker,
// shape inference) sees the model. libonnx's inference functions trust their input: they divide by
// strides and block sizes, index attribute lists by ranks, and expand model-local functions
// recursively, so a structurally valid but semantically bad model crashes them (SIGFPE, SIGSEGV,
// stack overflow). Everything those functions rely on is checked here first and reported as a
// value a user can act on.
//
//   checkModelStructure   arity, attribute types, required attributes, value ranges of the
//                         attributes inference divides or indexes by, Einsum equations,
//                         If branches, Constant values, recursive local functions
//   ShapeInferenceGuard   wraps the inference functions of ops that index by *inferred* ranks
//                         (Conv, pooling): the rank is only known during inference

#include "onnx/externaldata.h"
#include "util/status.h"

#include <cstdint>
#include <map>
#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

namespace opscope {

// `mapped`: main-graph initializers whose raw_data a stripped parse replaced by one element
// (onnx/strippedweights.h), by name, with the length of their bytes in the file: that length is
// what is checked against the shape.
Status checkModelStructure(const onnx::ModelProto &model,
                           const EmbeddedSpans *mapped = nullptr);

// Parses an Einsum equation ("ij,jk->ik", "...ii->...i") against the number of inputs. The runtime
// kernel shares it, so the importer and the kernel accept exactly the same equations.
Status checkEinsumEquation(const std::string &equation, std::size_t inputCount);

// Runs libonnx shape inference with the rank guards installed. Guard findings (a Conv on a rank-2
// tensor, a weight whose rank differs from its input's) are returned as an error naming the
// node; other inference failures stay warnings, as before.
Status runGuardedShapeInference(onnx::ModelProto &proto, std::vector<std::string> &warnings);

// Installs the rank guards (once, thread-safe) for callers of libonnx inference that do not go
// through runGuardedShapeInference; a guard that trips then only skips that node's inference.
void ensureShapeInferenceGuards();

} // namespace opscope
