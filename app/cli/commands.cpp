#include "commands.h"

#include "util/atomicfile.h"

#include "infoformat.h"
#include "ir/summary.h"
#include "ir/tensorwalk.h"
#include "onnx/modelio.h"
#include "passes/pipeline.h"
#include "passes/registry.h"
#include "runtime/conformance.h"
#include "runtime/npy.h"
#include "runtime/randominputs.h"
#include "util/numbers.h"
#include "util/status.h"

#include <algorithm>
#include <set>
#include <cerrno>
#include <cstring>
#include <unistd.h>
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

std::vector<std::filesystem::path> modelFiles(const std::filesystem::path &in, const Model &model)
{
    std::vector<std::filesystem::path> files{in};
    const std::filesystem::path dir = std::filesystem::absolute(in).parent_path();
    const auto add = [&](const Tensor &t) {
        if (t.external)
            files.push_back(dir / t.external->location);
    };
    forEachTensor(model.graph, add);
    for (const Function &f : model.functions)
        forEachTensor(f.body, add);
    return files;
}

std::vector<std::filesystem::path> feedFiles(const std::vector<std::string> &inputs)
{
    std::vector<std::filesystem::path> files;
    for (const std::string &spec : inputs)
        if (const auto eq = spec.find('='); eq != std::string::npos && eq + 1 < spec.size())
            files.emplace_back(spec.substr(eq + 1));
    return files;
}

Status checkWritePath(const std::filesystem::path &out, const char *what,
                      const std::vector<std::filesystem::path> &inputFiles, bool force,
                      const std::vector<std::filesystem::path> &feedFiles)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(out, ec))
        return Status::invalid(std::string(what) + " '" + out.string() + "' is a folder; give a file name");
    // Before any work: optimize ran every pass and printed its report, then failed on the path.
    const fs::path folder = out.has_parent_path() ? out.parent_path() : fs::path(".");
    if (!fs::is_directory(folder, ec))
        return Status::invalid(std::string(what) + " '" + out.string() + "': the folder '" + folder.string() +
                               "' does not exist");
    // A folder that takes no new file (read-only, /proc, full): said now, not after all the work
    // (optimize ran every pass and printed its tables, then failed on -o /proc/x.onnx). The probe
    // is the file AtomicFile would make there first, removed at once.
    {
        std::string probe = (folder / ".opscope-probe-XXXXXX").string();
        const int fd = ::mkstemp(probe.data());
        if (fd < 0)
            return Status::io(std::string(what) + " '" + out.string() + "': cannot create a file in '" +
                              folder.string() + "': " + std::strerror(errno));
        ::close(fd);
        ::unlink(probe.c_str());
    }
    if (force)
        return Status::ok();
    for (std::size_t i = 0; i < inputFiles.size(); ++i)
        if (samePath(inputFiles[i], out))
            return Status::invalid(std::string(what) + " '" + out.string() + "' is " +
                                   (i == 0 ? "the input model" : "a file the input model's weights are read from") +
                                   "; pass --force to overwrite it");
    // A trace or saved output written over an --input tensor destroyed it without a word.
    for (const std::filesystem::path &f : feedFiles)
        if (samePath(f, out))
            return Status::invalid(std::string(what) + " '" + out.string() + "' is the --input file '" + f.string() +
                                   "'; pass --force to overwrite it");
    return Status::ok();
}

Status bindDimsFromInputs(const Graph &graph, const Feeds &given, std::map<std::string, std::int64_t> &dims)
{
    const std::map<std::string, std::int64_t> explicitDims = dims;
    for (const auto &[name, tensor] : given) {
        const ValueId v = graph.findValue(name);
        if (!v.valid() || !graph.value(v).type.shape || graph.value(v).type.shape->dims.size() != tensor.rank())
            continue; // a rank mismatch is the session's error to report
        const auto &declared = graph.value(v).type.shape->dims;
        for (std::size_t k = 0; k < declared.size(); ++k) {
            if (!declared[k].isSymbolic())
                continue;
            const std::string &symbol = declared[k].symbol;
            if (const auto it = explicitDims.find(symbol); it != explicitDims.end() && it->second != tensor.dim(k))
                return Status::invalid("--dim " + symbol + "=" + std::to_string(it->second) + " contradicts input '" +
                                       name + "', whose dimension " + std::to_string(k) + " (" + symbol + ") is " +
                                       std::to_string(tensor.dim(k)));
            dims.emplace(symbol, tensor.dim(k));
        }
    }
    return Status::ok();
}

std::vector<std::string> noteUnboundDims(const Graph &graph, const Feeds &given,
                                         const std::map<std::string, std::int64_t> &dims, bool print)
{
    std::set<std::string> unbound;
    for (ValueId v : graph.inputs()) {
        const Value &value = graph.value(v);
        const bool isGiven =
            std::any_of(given.begin(), given.end(), [&](const auto &f) { return f.first == value.name; });
        if (isGiven || value.initializer || !value.type.shape)
            continue;
        for (const Dim &d : value.type.shape->dims)
            if (!d.isKnown() && !boundDim(d, dims))
                unbound.insert(d.symbol.empty() || d.isInvented() ? kUnnamedDim : d.symbol); // as info prints it
    }
    std::vector<std::string> notes;
    for (const std::string &name : unbound) {
        notes.push_back("dimension '" + oneLine(name) + "' is not bound; using 1 (--dim " + oneLine(name) + "=VALUE)");
        if (print)
            std::cerr << "opscope-cli: note: " << notes.back() << '\n';
    }
    return notes;
}

std::vector<std::string> uniqueFileNames(const std::vector<std::string> &names)
{
    std::vector<std::string> out;
    std::set<std::string> taken;
    for (const std::string &name : names) {
        std::string base = name;
        for (char &c : base)
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
                c = '_';
        if (base.empty() || base == "." || base == "..")
            base = "_" + base;
        if (base.size() > 100) { // NAME_MAX is 255 bytes; leave room for a suffix and extension
            char hash[17];
            std::snprintf(hash, sizeof hash, "%016llx",
                          static_cast<unsigned long long>(std::hash<std::string>{}(name)));
            base = base.substr(0, 80) + "-" + hash;
        }
        std::string candidate = base;
        for (int k = 2; !taken.insert(candidate).second; ++k)
            candidate = base + "-" + std::to_string(k);
        out.push_back(candidate);
    }
    return out;
}

Status writeTextFile(const std::filesystem::path &path, const std::string &text)
{
    AtomicFile file(path);
    OPSCOPE_TRY(file.open());
    OPSCOPE_TRY(file.write(text));
    return file.commit();
}

Status aboutWriting(const Status &status, const std::filesystem::path &path)
{
    if (status.message().find("'" + path.string() + "'") != std::string::npos)
        return status;
    return status.withContext("writing '" + path.string() + "'");
}

std::string oneLine(const std::string &message)
{
    // Names come from the model file and may hold any byte: the message stays one line.
    std::string out;
    for (char c : message) {
        if (c == '\n')
            out += "\\n";
        else if (c == '\r' || c == '\t' || (static_cast<unsigned char>(c) < 0x20))
            out += ' ';
        else
            out += c;
    }
    return out;
}

void printWarnings(const std::vector<std::string> &warnings)
{
    for (const std::string &w : warnings)
        std::cerr << "opscope-cli: warning: " << oneLine(w) << '\n';
}

Expected<double> optimizeForRun(Model &model, const std::string &level)
{
    if (level == "none")
        return 0.0;
    passes::PipelineSpec spec;
    spec.level = level;
    spec.target = "none";
    if (Expected<std::vector<std::string>> pipeline = passes::resolvePipeline(spec); !pipeline)
        return pipeline.status();
    Model optimized = model;
    passes::PipelineOptions options;
    options.keepSnapshots = false;
    // Verified after every pass, like optimize; a pass that breaks the graph is rolled back and named.
    const passes::PipelineResult r = passes::optimizeForExecution(optimized, level, options);
    printWarnings(r.warnings);
    if (r.status)
        model = std::move(optimized);
    else
        printWarnings({"running the model unoptimized: " + r.status.message()});
    return r.totalMs;
}

Status checkOutputPaths(const std::filesystem::path &in, const std::filesystem::path &out, const Model &model,
                        const SaveOptions &save, bool force)
{
    const std::vector<std::filesystem::path> inputs = modelFiles(in, model);
    OPSCOPE_TRY(checkWritePath(out, "output", inputs, force));
    return checkWritePath(externalDataPathFor(out, save), "the external data file", inputs, force);
}

int reportError(const Status &status)
{
    std::cerr << "opscope-cli: error: " << oneLine(status.message()) << '\n';
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
        return reportError(aboutWriting(saved.status(), args.output));
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

Expected<GivenInputs> givenInputsFor(const Graph &graph, const std::vector<std::string> &inputs,
                                     const std::vector<std::string> &dims)
{
    Expected<GivenInputs> given = parseInputs(inputs, dims);
    if (!given)
        return given.status();
    OPSCOPE_TRY(checkDimNames(given->dims, graph));
    OPSCOPE_TRY(bindDimsFromInputs(graph, given->tensors, given->dims));
    return given;
}

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
        // Decimal digits only, all of them: stoll would take "0x10" as 0 and "12abc" as 12.
        const std::optional<std::int64_t> parsed = parseWholeNumber(kv->second, 0, std::int64_t(1) << 40);
        if (!parsed)
            return Status::invalid("--dim '" + spec + "': the value must be a whole number from 0 to 2^40");
        const std::int64_t v = *parsed;
        if (const auto it = out.dims.find(kv->first); it != out.dims.end() && it->second != v)
            return Status::invalid("--dim " + kv->first + " is given twice, as " + std::to_string(it->second) +
                                   " and " + std::to_string(v));
        out.dims[kv->first] = v;
    }
    return out;
}

} // namespace opscope::cli
