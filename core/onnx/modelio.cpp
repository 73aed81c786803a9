#include "onnx/modelio.h"

#include "ir/tensorwalk.h"
#include "onnx/embeddedweights.h"
#include "onnx/exporter.h"
#include "onnx/strippedweights.h"
#include "util/atomicfile.h"
#include "util/mappedfile.h"

#include <climits>
#include <google/protobuf/io/coded_stream.h>

namespace opscope {
namespace {

Expected<ImportResult> parseAndImport(std::span<const std::byte> bytes, const std::filesystem::path &baseDir,
                                      const std::filesystem::path &modelPath, const LoadOptions &options,
                                      const std::string &shownName, ImportOptions io = {})
{
    if (bytes.empty())
        return Status::invalid(shownName + " is empty");
    if (bytes.size() > static_cast<std::size_t>(INT_MAX))
        return Status::unsupported(shownName +
                                   " is over 2 GiB, more than Protobuf can parse; store the weights as "
                                   "external data (opscope-cli convert --external-data)");
    onnx::ModelProto proto;
    google::protobuf::io::CodedInputStream stream(reinterpret_cast<const std::uint8_t *>(bytes.data()),
                                                  static_cast<int>(bytes.size()));
    stream.SetTotalBytesLimit(INT_MAX);
    if (!proto.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
        return Status::invalid(shownName +
                               " is not a valid ONNX model: the Protobuf data is corrupt or truncated");
    io.inferShapes = options.inferShapes;
    io.runChecker = options.runChecker;
    io.modelDir = baseDir;
    io.modelPath = modelPath;
    Expected<ImportResult> result = importModel(proto, io);
    if (!result)
        return result.status().withContext(shownName);
    result->model.sourcePath = modelPath;
    return result;
}

// What a save has to place: total tensor bytes, and whether any came from external data.
struct TensorTally
{
    std::uint64_t bytes = 0;
    bool anyExternal = false;

    void add(const Tensor &t)
    {
        bytes += t.byteSize();
        anyExternal |= t.external.has_value();
    }
    void add(const Graph &g)
    {
        forEachTensor(g, [this](const Tensor &t) { add(t); });
    }
};

} // namespace

Expected<ImportResult> loadModel(const std::filesystem::path &path, const LoadOptions &options)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return Status::notFound("'" + path.string() + "' does not exist");
    if (std::filesystem::is_directory(path, ec))
        return Status::invalid("'" + path.string() + "' is a folder, not an ONNX model file");
    Expected<std::shared_ptr<const MappedFile>> file = MappedFile::open(path);
    if (!file)
        return file.status();
    const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
    const std::string shown = "'" + path.string() + "'";
    // Ranks: parsed without the big weights' bytes (a copy of the whole file on the heap at once),
    // which are mapped from the file instead. Any failure parses the file whole, whose message is
    // the one to report.
    if (options.mapEmbeddedWeights)
        if (Expected<StrippedModel> stripped = stripEmbeddedWeights((*file)->bytes());
            stripped && !stripped->spans.empty()) {
            ImportOptions io;
            io.embeddedFile = *file;
            for (const auto &[name, span] : stripped->spans)
                io.embeddedSpans.emplace(name, std::make_pair(span.offset, span.length));
            Expected<ImportResult> light = parseAndImport(
                std::as_bytes(std::span(stripped->bytes.data(), stripped->bytes.size())), absolute.parent_path(),
                absolute, options, shown, std::move(io));
            if (light) {
                mapEmbeddedWeights(light->model.graph, *file); // those not stripped (integer tensors)
                (*file)->dropResidentPages();
                return light;
            }
        }
    Expected<ImportResult> result = parseAndImport((*file)->bytes(), absolute.parent_path(), absolute, options, shown);
    if (result && options.mapEmbeddedWeights && mapEmbeddedWeights(result->model.graph, *file) > 0)
        (*file)->dropResidentPages(); // parsing read it all; from here a page counts where a node reads it
    return result;
}

Expected<ImportResult> loadModelFromBytes(std::span<const std::byte> bytes,
                                          const std::filesystem::path &baseDir, const LoadOptions &options)
{
    return parseAndImport(bytes, baseDir, {}, options, "the model");
}

std::filesystem::path externalDataPathFor(const std::filesystem::path &modelPath, const SaveOptions &options)
{
    const std::string name =
        options.dataFileName.empty() ? modelPath.filename().string() + ".data" : options.dataFileName;
    return modelPath.parent_path() / name;
}

Expected<SaveResult> saveModel(const Model &model, const std::filesystem::path &path,
                               const SaveOptions &options)
{
    SaveResult result;
    result.modelPath = path;
    const std::filesystem::path dataPath = externalDataPathFor(path, options);
    if (!options.dataFileName.empty() && std::filesystem::path(options.dataFileName).has_parent_path())
        return Status::invalid("the external data file name '" + options.dataFileName +
                               "' must not contain a folder");

    // Decide before building anything: materializing an embedded proto of several GiB only to
    // find it too large would cost that much memory for nothing.
    TensorTally tally;
    tally.add(model.graph);
    for (const Function &f : model.functions)
        tally.add(f.body);
    if (options.mode == ExternalDataMode::Embed && tally.bytes > protobufLimitBytes)
        return Status::unsupported("the model holds " + std::to_string(tally.bytes >> 20) +
                                   " MiB of tensors, over Protobuf's 2 GiB limit for one file: save it "
                                   "with external data instead");
    bool external =
        options.mode == ExternalDataMode::External ||
        (options.mode == ExternalDataMode::Auto && (tally.anyExternal || tally.bytes > protobufLimitBytes));
    onnx::ModelProto proto;
    if (!external) {
        TensorSink sink(nullptr, {}, 0);
        OPSCOPE_TRY(exportModel(model, sink, &proto));
        if (proto.ByteSizeLong() > protobufLimitBytes) { // tensors fit, but not with the structure
            if (options.mode == ExternalDataMode::Embed)
                return Status::unsupported("the model is " + std::to_string(proto.ByteSizeLong() >> 20) +
                                           " MiB with its weights embedded, over Protobuf's 2 GiB limit: "
                                           "save it with external data instead");
            external = true;
            proto.Clear();
        }
    }

    AtomicFile dataFile(dataPath);
    if (external) {
        OPSCOPE_TRY(dataFile.open());
        TensorSink sink(&dataFile, dataPath.filename().string(), options.threshold);
        OPSCOPE_TRY(exportModel(model, sink, &proto));
        result.externalBytes = sink.externalBytes();
        if (proto.ByteSizeLong() > protobufLimitBytes)
            return Status::unsupported(
                "the model's structure alone is over Protobuf's 2 GiB limit; lower the external "
                "data threshold");
    }

    std::string serialized;
    if (!proto.SerializeToString(&serialized))
        return Status::internal("Protobuf could not serialize the model");
    AtomicFile modelFile(path);
    OPSCOPE_TRY(modelFile.open());
    OPSCOPE_TRY(modelFile.write(serialized));
    // The data file lands first: a model file never points at weights that are not there yet.
    if (external && result.externalBytes > 0) {
        OPSCOPE_TRY(dataFile.commit());
        result.dataPath = dataPath;
    } else {
        dataFile.discard();
    }
    OPSCOPE_TRY(modelFile.commit());
    result.modelBytes = serialized.size();
    return result;
}

} // namespace opscope
