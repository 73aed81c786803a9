#pragma once
// Runs ONNX backend test directories (model.onnx + test_data_set_*/input_*.pb, output_*.pb) through
// the CPU runtime and compares with ONNX's tolerances (|got − want| ≤ atol + rtol·|want|).

#include "runtime/runtimetensor.h"
#include "util/status.h"

#include <filesystem>
#include <string>
#include <vector>

namespace opscope {

class Backend;

struct ConformanceOptions
{
    double rtol = 1e-3;
    double atol = 1e-7;
    int threads = 1;
    // Run each data set twice: the first run sizes the memory plan, the second runs from it and
    // must compute the first's outputs bit for bit (and the plan must pass verifyMemoryPlan).
    bool planMemory = true;
    // Run on this device instead of the CPU (a serial plan on it; no memory plan): the CUDA
    // backend's parity check against the suite's expected outputs.
    Backend *backend = nullptr;
};

struct ConformanceResult
{
    enum class Outcome
    {
        Pass,
        Fail,        // wrong result, or an error on a valid test
        Unsupported, // an op, type or feature the runtime does not implement (named in detail)
        InvalidData, // the test's own data contradicts its model (e.g. a feed of another shape)
    };
    std::string name;
    Outcome outcome = Outcome::Fail;
    std::string detail;
    double maxAbsError = 0.0;
};

ConformanceResult runConformanceTest(const std::filesystem::path &testDir,
                                     const ConformanceOptions &options = {});

// Test directories under `root` (itself, if it holds a model.onnx), sorted.
std::vector<std::filesystem::path> findConformanceTests(const std::filesystem::path &root);

// PREFIX_0.pb, PREFIX_1.pb, … in a test_data_set folder, by number (not name: 10 after 9).
std::vector<std::filesystem::path> numberedTensorFiles(const std::filesystem::path &dir,
                                                       const std::string &prefix);

// Reads a serialized TensorProto (input_0.pb ...). Sequence/optional/map protos are Unsupported.
Expected<RuntimeTensor> readTensorFile(const std::filesystem::path &path);

// Same type, shape and bytes (strings: same strings).
bool sameBits(const RuntimeTensor &a, const RuntimeTensor &b);

// Compares one output; the message says where it differs.
Status compareTensors(const RuntimeTensor &got, const RuntimeTensor &want, double rtol, double atol,
                      double &maxAbsError);

} // namespace opscope
