#include "commands.h"

#include "infoformat.h"
#include "ir/summary.h"
#include "onnx/modelio.h"
#include "passes/pipeline.h"
#include "passes/registry.h"
#include "runtime/conformance.h"
#include "runtime/npy.h"
#include "util/status.h"

#include <filesystem>
#include <iostream>

namespace opscope::cli {

namespace {

bool samePath(const std::filesystem::path &a, const std::filesystem::path &b)
{
    std::error_code ec;
    return std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec) &&
           std::filesystem::equivalent(a, b, ec);
}

} // namespace

void printWarnings(const std::vector<std::string> &warnings)
{
    for (const std::string &w : warnings)
        std::cerr << "opscope-cli: warning: " << w << '\n';
}

Expected<double> optimizeForRun(Model &model, const std::string &level)
{
    if (level == "none")
        return 0.0;
    passes::PipelineSpec spec;
    spec.level = level;
    spec.target = "none";
    Expected<std::vector<std::string>> pipeline = passes::resolvePipeline(spec);
    if (!pipeline)
        return pipeline.status();
    Model optimized = model;
    passes::PipelineOptions options;
    options.keepSnapshots = false;
    const passes::PipelineResult r = passes::runPipeline(optimized, *pipeline, options);
    if (r.status)
        model = std::move(optimized);
    else
        std::cerr << "opscope-cli: warning: running the model unoptimized: " << r.status.message() << '\n';
    return r.totalMs;
}

Status checkOutputPaths(const std::filesystem::path &in, const std::filesystem::path &out, const Model &model,
                        const SaveOptions &save, bool force)
{
    namespace fs = std::filesystem;
    if (fs::is_directory(out))
        return Status::invalid("output '" + out.string() + "' is a folder; give a file name");
    if (force)
        return Status::ok();
    if (samePath(in, out))
        return Status::invalid("output '" + out.string() +
                               "' is the input model; pass --force to overwrite it");
    const fs::path data = externalDataPathFor(out, save);
    if (samePath(in, data))
        return Status::invalid("the external data file '" + data.string() +
                               "' would replace the input model; pass --force to overwrite it");
    const fs::path inDir = fs::absolute(in).parent_path();
    for (ValueId v : model.graph.initializers()) {
        const auto &src = model.graph.value(v).initializer->external;
        if (src && samePath(inDir / src->location, data))
            return Status::invalid("the external data file '" + data.string() +
                                   "' holds the input model's weights; pass --force to overwrite it");
    }
    return Status::ok();
}

int reportError(const Status &status)
{
    std::cerr << "opscope-cli: error: " << status.message() << '\n';
    return status.kind() == ErrorKind::Internal ? ExitInternalError : ExitUserError;
}

int runInfo(const InfoArgs &args)
{
    LoadOptions options;
    options.runChecker = !args.noCheck;
    Expected<ImportResult> loaded = loadModel(args.model, options);
    if (!loaded)
        return reportError(loaded.status());
    const ModelSummary summary =
        summarizeModel(loaded->model, static_cast<std::size_t>(std::max(0, args.top)));
    if (args.json)
        std::cout << infoJson(args.model, summary, loaded->warnings).dump(2) << '\n';
    else
        std::cout << infoText(args.model, summary, loaded->warnings);
    return ExitOk;
}

int runConvert(const ConvertArgs &args)
{
    namespace fs = std::filesystem;
    if (args.embed && args.externalThreshold)
        return reportError(Status::invalid("--embed and --external-data exclude each other"));
    SaveOptions save;
    if (args.embed)
        save.mode = ExternalDataMode::Embed;
    if (args.externalThreshold) {
        save.mode = ExternalDataMode::External;
        save.threshold = *args.externalThreshold;
    }
    const fs::path in(args.input);
    const fs::path out(args.output);
    if (fs::is_directory(out))
        return reportError(Status::invalid("output '" + args.output + "' is a folder; give a file name"));

    Expected<ImportResult> loaded = loadModel(in);
    if (!loaded)
        return reportError(loaded.status());
    // Never replace the input model or the weights it is mapped from unless told to.
    if (Status ok = checkOutputPaths(in, out, loaded->model, save, args.force); !ok)
        return reportError(ok);
    printWarnings(loaded->warnings);

    Expected<SaveResult> saved = saveModel(loaded->model, out, save);
    if (!saved)
        return reportError(saved.status().withContext("writing '" + args.output + "'"));
    if (!args.quiet) {
        std::cout << "wrote " << saved->modelPath.string() << " (" << humanBytes(saved->modelBytes) << ")";
        if (saved->dataPath)
            std::cout << " and " << saved->dataPath->string() << " (" << humanBytes(saved->externalBytes)
                      << " of external data)";
        std::cout << '\n';
    }
    return ExitOk;
}

namespace {

Expected<std::pair<std::string, std::string>> splitAssignment(const std::string &text, const char *what)
{
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
        return Status::invalid(std::string(what) + " '" + text + "' must look like NAME=VALUE");
    return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

} // namespace

Expected<GivenInputs> parseInputs(const std::vector<std::string> &inputs,
                                  const std::vector<std::string> &dims)
{
    GivenInputs out;
    for (const std::string &spec : inputs) {
        const auto kv = splitAssignment(spec, "--input");
        if (!kv)
            return kv.status();
        const std::filesystem::path file(kv->second);
        Expected<RuntimeTensor> t = file.extension() == ".pb" ? readTensorFile(file) : readNpy(file);
        if (!t)
            return t.status().withContext("input '" + kv->first + "'");
        out.tensors.emplace_back(kv->first, std::move(*t));
    }
    for (const std::string &spec : dims) {
        const auto kv = splitAssignment(spec, "--dim");
        if (!kv)
            return kv.status();
        try {
            const long long v = std::stoll(kv->second);
            if (v < 0)
                throw std::out_of_range("negative");
            out.dims[kv->first] = v;
        } catch (const std::exception &) {
            return Status::invalid("--dim '" + spec + "': the value must be a non-negative integer");
        }
    }
    return out;
}

} // namespace opscope::cli
