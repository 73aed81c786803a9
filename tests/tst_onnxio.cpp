// ONNX import/export: round trips, external data (mapped, written, refused when it escapes),
// typed tensor fields, shape inference, op schemas, atomic saves, and the bad-input errors.

#include "ir/compare.h"
#include "ir/summary.h"
#include "ir/verifier.h"
#include "onnx/embeddedweights.h"
#include "onnx/strippedweights.h"
#include "onnx/modelio.h"
#include "onnx/opschema.h"
#include "runtime/session.h"
#include "testsupport.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>
#include <fstream>

using namespace opscope;
namespace fs = std::filesystem;

namespace {

fs::path dirOf(const QTemporaryDir &d)
{
    return d.path().toStdString();
}

std::string loadError(const fs::path &path)
{
    const auto r = loadModel(path);
    return r ? std::string() : r.status().message();
}

bool contains(const std::string &haystack, const char *needle)
{
    return haystack.find(needle) != std::string::npos;
}

// A model whose initializer `w` (512 floats) lives in an external file at `location`.
onnx::ModelProto externalModel(const std::string &location, std::uint64_t offset = 0)
{
    onnx::ModelProto m = test::smallModel();
    auto *g = m.mutable_graph();
    auto *w = g->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(512);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto *kv = w->add_external_data();
    kv->set_key("location");
    kv->set_value(location);
    kv = w->add_external_data();
    kv->set_key("offset");
    kv->set_value(std::to_string(offset));
    *g->add_node() = test::node("ReduceSum", {"w"}, {"wsum"}, "wsum");
    *g->add_output() = test::tensorInfo("wsum", onnx::TensorProto::FLOAT, {1});
    return m;
}

void writeWeights(const fs::path &path, std::size_t floats, std::size_t padBytes = 0)
{
    std::ofstream out(path, std::ios::binary);
    const std::string pad(padBytes, '\0');
    out.write(pad.data(), static_cast<std::streamsize>(pad.size()));
    for (std::size_t i = 0; i < floats; ++i) {
        const float v = static_cast<float>(i);
        out.write(reinterpret_cast<const char *>(&v), sizeof v);
    }
}

fs::path regression(const char *name)
{
    return test::sourceDir() / "tests" / "fuzz-regressions" / name;
}

std::string fileBytes(const fs::path &path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

class TestOnnxIo : public QObject
{
    Q_OBJECT
private slots:
    void sampleModelsRoundTrip_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("inception") << "inception_block.onnx";
        QTest::newRow("transformer") << "transformer_block.onnx";
    }

    void sampleModelsRoundTrip()
    {
        QFETCH(QString, file);
        QTemporaryDir tmp;
        const ImportResult a = test::loadOrFail(test::samplePath(file.toStdString()));
        QVERIFY(a.warnings.empty());
        for (const ExternalDataMode mode : {ExternalDataMode::Embed, ExternalDataMode::External}) {
            SaveOptions options;
            options.mode = mode;
            const fs::path out = dirOf(tmp) / ("out" + std::to_string(int(mode)) + ".onnx");
            const auto saved = saveModel(a.model, out, options);
            QVERIFY2(saved, saved.status().message().c_str());
            QCOMPARE(saved->dataPath.has_value(), mode == ExternalDataMode::External);
            const ImportResult b = test::loadOrFail(out);
            const Status same = compareModels(a.model, b.model);
            QVERIFY2(same.isOk(), same.message().c_str());
        }
        // No temporary files are left behind.
        QCOMPARE(QDir(tmp.path()).entryList(QDir::Files | QDir::Hidden).filter(".tmp-").size(), 0);
    }

    void shapeInferenceResultsAreKept()
    {
        const ImportResult r = test::loadOrFail(test::samplePath("inception_block.onnx"));
        const Graph &g = r.model.graph;
        const Value &concat = g.value(g.findValue("/inception/concat_out"));
        QCOMPARE(concat.type.toString(), std::string("float32[1,64,16,16]"));
        const ModelSummary s = summarizeModel(r.model);
        QVERIFY(s.allShapesKnown());
        QCOMPARE(s.nodeCount, 25u);
        QCOMPARE(s.opHistogram.at("Conv"), 8u);
    }

    void embeddedWeightsCanBeMappedFromTheModelFile()
    {
        // A rank of `profile --ranks` maps embedded weights from the file so that it holds only
        // what its nodes read. The wire-format walk must find what Protobuf parsed: a big raw
        // weight (mapped), a small one and a float_data one (heap), and a graph split over two
        // `graph` fields (Protobuf merges them), the second one holding a weight too.
        onnx::ModelProto m = test::emptyModel();
        auto *g = m.mutable_graph();
        *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {1, 128});
        std::vector<float> big(128 * 256);
        for (std::size_t i = 0; i < big.size(); ++i)
            big[i] = float(i % 97) * 0.25f;
        onnx::TensorProto w = test::floatTensor("w", {128, 256}, big);
        w.set_raw_data(std::string(reinterpret_cast<const char *>(big.data()), big.size() * sizeof(float)));
        w.clear_float_data();
        *g->add_initializer() = w;
        onnx::TensorProto small = test::floatTensor("small", {256}, std::vector<float>(256, 1.0f));
        small.set_raw_data(std::string(256 * sizeof(float), '\0'));
        small.clear_float_data();
        *g->add_initializer() = small;
        *g->add_node() = test::node("MatMul", {"x", "w"}, {"h"}, "mm");
        *g->add_node() = test::node("Add", {"h", "small"}, {"h2"}, "add");
        *g->add_node() = test::node("MatMul", {"h2", "w2"}, {"y"}, "mm2");
        *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {1, 256});
        onnx::ModelProto second;
        onnx::TensorProto w2 = test::floatTensor("w2", {256, 256}, {});
        w2.clear_raw_data();
        for (int i = 0; i < 256 * 256; ++i)
            w2.add_float_data(0.5f); // float_data: not raw, stays on the heap
        *second.mutable_graph()->add_initializer() = w2;
        QTemporaryDir tmp;
        const fs::path path = dirOf(tmp) / "split.onnx";
        test::writeBytes(path, m.SerializeAsString() + second.SerializeAsString()); // two graph fields

        const std::string bytes = m.SerializeAsString() + second.SerializeAsString();
        const Expected<std::vector<RawDataSpan>> spans = findInitializerRawData(
            std::span(reinterpret_cast<const std::byte *>(bytes.data()), bytes.size()));
        QVERIFY(spans);
        QCOMPARE(spans->size(), 2u); // w and small; w2 has no raw_data
        QCOMPARE((*spans)[0].name, std::string("w"));
        QCOMPARE((*spans)[0].length, std::uint64_t(big.size() * sizeof(float)));
        QVERIFY(std::memcmp(bytes.data() + (*spans)[0].offset, big.data(), 64) == 0);

        LoadOptions options;
        options.mapEmbeddedWeights = true;
        const Expected<ImportResult> mapped = loadModel(path, options);
        QVERIFY2(mapped, mapped ? "" : mapped.status().message().c_str());
        const Expected<ImportResult> held = loadModel(path);
        QVERIFY(held);
        const Graph &mg = mapped->model.graph, &hg = held->model.graph;
        QVERIFY(mg.value(mg.findValue("w")).initializer->isMapped());
        QVERIFY(!hg.value(hg.findValue("w")).initializer->isMapped());
        QVERIFY(!mg.value(mg.findValue("small")).initializer->isMapped()); // 1 KiB: not worth a mapping
        QVERIFY(!mg.value(mg.findValue("w2")).initializer->isMapped());
        QVERIFY(compareModels(mapped->model, held->model).isOk()); // the same bytes, wherever they live
        // Parsed without w's bytes (onnx/strippedweights.h): the checker and shape inference saw
        // one placeholder element and said nothing of it (an empty raw_data was "no value field").
        QCOMPARE(mapped->warnings, held->warnings);
        const Expected<StrippedModel> stripped = stripEmbeddedWeights(
            std::span(reinterpret_cast<const std::byte *>(bytes.data()), bytes.size()));
        QVERIFY(stripped);
        QCOMPARE(stripped->spans.size(), 1u); // w; small is under 64 KiB, w2 has no raw_data
        QCOMPARE(stripped->spans.at("w").offset, (*spans)[0].offset);
        // Without w's bytes but one float (a few length prefixes shorter too).
        QVERIFY(stripped->bytes.size() <= bytes.size() - big.size() * sizeof(float) + 4);
        QVERIFY(stripped->bytes.size() + 16 > bytes.size() - big.size() * sizeof(float));
        onnx::ModelProto reparsed;
        QVERIFY(reparsed.ParseFromString(stripped->bytes));
        QCOMPARE(reparsed.graph().initializer_size(), 3);
        QCOMPARE(reparsed.graph().initializer(0).raw_data(), std::string(4, '\0')); // one float
        QCOMPARE(reparsed.graph().node_size(), 3);
        // Saved again — over the very file it maps, as `optimize IN -o IN --force` does — it
        // still reads the old bytes (the save writes a new file and renames it over).
        QVERIFY(saveModel(mapped->model, path));
        const ImportResult again = test::loadOrFail(path);
        QVERIFY(compareModels(again.model, held->model).isOk());
    }

    // A graph field whose length runs past the end of the file: Protobuf refuses the file, but the
    // wire walk took the stream's clean end at the buffer for the end of the graph, so a rank's
    // rewrite (onnx/strippedweights.h) parsed and loaded what the app refused (fuzz_loader, with
    // the rewrite check, on its first corpus replay).
    void aTruncatedModelIsRefusedByRanksToo()
    {
        const fs::path path = regression("loader-truncated-graph-parsed-whole-by-the-ranks-rewrite.onnx");
        const std::string bytes = fileBytes(path);
        QCOMPARE(bytes.size(), 34u);
        const auto span = std::as_bytes(std::span(bytes.data(), bytes.size()));
        QVERIFY(!stripEmbeddedWeights(span));
        QVERIFY(!findInitializerRawData(span));
        LoadOptions ranks;
        ranks.mapEmbeddedWeights = true;
        const Expected<ImportResult> whole = loadModel(path), mapped = loadModel(path, ranks);
        QVERIFY(!whole && !mapped);
        QCOMPARE(mapped.status().message(), whole.status().message());
    }

    // Two initializers named "1", one with raw_data and one with uint64_data: only raw_data
    // names were counted, so the rewrite stripped the first as if its name were unique, and a
    // span looked up by that name belonged to either tensor (fuzz_loader, round 17). The importer
    // refuses the name twice either way; the rewrite must not strip what it cannot name.
    void aNameTwoInitializersShareIsNotStripped()
    {
        const fs::path path = regression("loader-initializer-name-shared-with-a-tensor-without-raw-data-stripped.onnx");
        const std::string bytes = fileBytes(path);
        QCOMPARE(bytes.size(), 434u);
        const auto span = std::as_bytes(std::span(bytes.data(), bytes.size()));
        std::map<std::string, int> names;
        QVERIFY(findInitializerRawData(span, &names));
        QCOMPARE(names["1"], 2);
        const Expected<StrippedModel> stripped = stripEmbeddedWeights(span, 16);
        QVERIFY(stripped);
        QVERIFY(!stripped->spans.contains("1"));
        LoadOptions ranks;
        ranks.mapEmbeddedWeights = true;
        const Expected<ImportResult> whole = loadModel(path), mapped = loadModel(path, ranks);
        QCOMPARE(bool(mapped), bool(whole));
        if (!whole)
            QCOMPARE(mapped.status().message(), whole.status().message());
    }

    void weightsThePassesMadeCanBeSpilledToAScratchFile()
    {
        // A rank of `profile --ranks` spills the heap weights the passes made (a Conv with its
        // BatchNorm folded in…) to a scratch file it maps, so it holds only those its nodes read;
        // before, every rank held all of them. Held weights of 64 KiB and more are spilled, small
        // ones stay; the model reads the same bytes; a folder in memory is refused.
        onnx::ModelProto m = test::emptyModel();
        auto *g = m.mutable_graph();
        *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {1, 128});
        std::vector<float> big(128 * 256);
        for (std::size_t i = 0; i < big.size(); ++i)
            big[i] = float(i % 89) * 0.5f;
        *g->add_initializer() = test::floatTensor("w", {128, 256}, big);
        *g->add_initializer() = test::floatTensor("small", {256}, std::vector<float>(256, 1.0f));
        *g->add_node() = test::node("MatMul", {"x", "w"}, {"h"}, "mm");
        *g->add_node() = test::node("Add", {"h", "small"}, {"y"}, "add");
        *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {1, 256});
        const Model held = test::modelOrFail(m);
        Model model = held;

        if (fs::exists("/dev/shm")) {
            const Expected<SpilledWeights> inMemory = spillHeapWeights(model.graph, "/dev/shm");
            QVERIFY(!inMemory);
            QVERIFY2(inMemory.status().message().find("TMPDIR") != std::string::npos,
                     inMemory.status().message().c_str());
            QVERIFY(!model.graph.value(model.graph.findValue("w")).initializer->isMapped());
        }

        QTemporaryDir tmp(QDir::currentPath() + "/spill-XXXXXX"); // the build folder: on disk
        const Expected<SpilledWeights> spilled = spillHeapWeights(model.graph, dirOf(tmp));
        QVERIFY2(spilled, spilled ? "" : spilled.status().message().c_str());
        QCOMPARE(spilled->tensors, 1u);
        QCOMPARE(spilled->bytes, std::uint64_t(big.size() * sizeof(float)));
        QVERIFY(model.graph.value(model.graph.findValue("w")).initializer->isMapped());
        QVERIFY(!model.graph.value(model.graph.findValue("small")).initializer->isMapped());
        QVERIFY(fs::is_empty(dirOf(tmp))); // unlinked: nothing left behind, even if killed
        QVERIFY(compareModels(model, held).isOk());
        dropResidentWeights(model.graph); // read again from the file where touched
        QVERIFY(compareModels(model, held).isOk());
        // Spilled once: a second spill finds nothing left on the heap above the threshold.
        QCOMPARE(spillHeapWeights(model.graph, dirOf(tmp))->tensors, 0u);
    }

    void weightsInConstantNodesAreCountedAndListed()
    {
        // Paddle2ONNX keeps every weight in a Constant node: a summary of "0 initializers" and
        // no largest weights read as a model without parameters.
        onnx::ModelProto m = test::emptyModel();
        auto *g = m.mutable_graph();
        *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {1, 4});
        *g->add_initializer() = test::floatTensor("b", {4}, {1, 2, 3, 4});
        onnx::NodeProto c = test::node("Constant", {}, {"conv.w_0"}, "c");
        auto *value = c.add_attribute();
        value->set_name("value");
        value->set_type(onnx::AttributeProto::TENSOR);
        *value->mutable_t() = test::floatTensor("", {4, 4}, std::vector<float>(16, 0.5f));
        *g->add_node() = c;
        *g->add_node() = test::node("MatMul", {"x", "conv.w_0"}, {"y0"}, "mm");
        *g->add_node() = test::node("Add", {"y0", "b"}, {"y"}, "add");
        *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {1, 4});
        const ModelSummary s = summarizeModel(test::modelOrFail(m));
        QCOMPARE(s.initializerCount, 1u);
        QCOMPARE(s.constantTensorCount, 1u);
        QCOMPARE(s.parameterCount, 20u);
        QCOMPARE(s.largestInitializers.size(), 2u);
        QCOMPARE(s.largestInitializers[0].name, std::string("conv.w_0")); // the larger, by its value's name
        QVERIFY(s.largestInitializers[0].constantNode);
        QVERIFY(!s.largestInitializers[1].constantNode);
    }

    void einsumShapesAreInferred_data()
    {
        // libonnx 1.12 infers Einsum's rank only ("unk__0" dims); the equation fixes the dims.
        QTest::addColumn<QString>("equation");
        QTest::addColumn<QList<qint64>>("a");
        QTest::addColumn<QList<qint64>>("b");
        QTest::addColumn<QString>("expected");
        using L = QList<qint64>;
        QTest::newRow("batched matmul") << "bij,bjk->bik" << L{2, 3, 4} << L{2, 4, 5} << "float32[2,3,5]";
        QTest::newRow("implicit output sorted") << "kj,ji" << L{7, 4} << L{4, 3} << "float32[3,7]";
        QTest::newRow("spaces, capitals") << "b I j , b j K -> b K I" << L{2, 3, 4} << L{2, 4, 6} << "float32[2,6,3]";
        QTest::newRow("ellipsis broadcast") << "...ij,...jk->...ik" << L{1, 2, 3, 4} << L{5, 1, 4, 6}
                                            << "float32[5,2,3,6]";
        QTest::newRow("implicit ellipsis first") << "...ij,jk" << L{8, 3, 4} << L{4, 2} << "float32[8,3,2]";
        QTest::newRow("attention scores") << "bhqd,bhkd->bhqk" << L{1, 12, 128, 64} << L{1, 12, 128, 64}
                                          << "float32[1,12,128,128]";
        QTest::newRow("trace to a scalar") << "ii->" << L{5, 5} << L{} << "float32[]";
    }

    void einsumShapesAreInferred()
    {
        QFETCH(QString, equation);
        QFETCH(QList<qint64>, a);
        QFETCH(QList<qint64>, b);
        QFETCH(QString, expected);
        onnx::ModelProto m = test::smallModel();
        auto *g = m.mutable_graph();
        g->clear_node();
        g->clear_input();
        g->clear_output();
        g->clear_initializer();
        std::vector<std::string> inputs{"a"};
        *g->add_input() = test::tensorInfo("a", onnx::TensorProto::FLOAT, {a.begin(), a.end()});
        if (!b.isEmpty() || !equation.startsWith(QStringLiteral("ii"))) {
            *g->add_input() = test::tensorInfo("b", onnx::TensorProto::FLOAT, {b.begin(), b.end()});
            inputs.push_back("b");
        }
        onnx::NodeProto n = test::node("Einsum", inputs, {"t"}, "einsum");
        auto *eq = n.add_attribute();
        eq->set_name("equation");
        eq->set_type(onnx::AttributeProto::STRING);
        eq->set_s(equation.toStdString());
        *g->add_node() = n;
        *g->add_node() = test::node("Relu", {"t"}, {"y"}, "relu");
        onnx::ValueInfoProto y;
        y.set_name("y");
        *g->add_output() = y;
        QTemporaryDir dir;
        test::writeProto(dirOf(dir) / "einsum.onnx", m);
        const ImportResult r = test::loadOrFail(dirOf(dir) / "einsum.onnx");
        const Value &t = r.model.graph.value(r.model.graph.findValue("t"));
        QCOMPARE(QString::fromStdString(t.type.toString()), expected);
        // And Relu carries it on.
        QCOMPARE(QString::fromStdString(r.model.graph.value(r.model.graph.findValue("y")).type.toString()), expected);
    }

    void inventedDimsReadAsUnknown()
    {
        // Names inference makes up for dims it cannot compute are unknown, not user symbols.
        Shape s;
        s.dims = {Dim::known(2), Dim::symbolic("batch"), Dim::symbolic("unk__17"), Dim::symbolic("unk__x")};
        QVERIFY(s.dims[2].isInvented());
        QVERIFY(!s.dims[1].isInvented() && !s.dims[3].isInvented());
        QCOMPARE(s.toString(), std::string("[2,batch,?,unk__x]"));
    }

    void externalDataIsMappedNotRead()
    {
        QTemporaryDir tmp;
        writeWeights(dirOf(tmp) / "weights.bin", 512, 128);
        test::writeProto(dirOf(tmp) / "m.onnx", externalModel("weights.bin", 128));
        const ImportResult r = test::loadOrFail(dirOf(tmp) / "m.onnx");
        const Tensor &w = *r.model.graph.value(r.model.graph.findValue("w")).initializer;
        QVERIFY(w.data->isMapped());
        QVERIFY(w.external);
        QCOMPARE(w.external->offset, 128u);
        QCOMPARE(w.as<float>()[511], 511.0f);
        const ModelSummary s = summarizeModel(r.model);
        QCOMPARE(s.externalBytes, 2048u);

        // Auto mode keeps a model with external data external, with its own data file.
        const auto saved = saveModel(r.model, dirOf(tmp) / "copy.onnx");
        QVERIFY2(saved, saved.status().message().c_str());
        QVERIFY(saved->dataPath);
        QCOMPARE(saved->dataPath->filename().string(), std::string("copy.onnx.data"));
        const ImportResult back = test::loadOrFail(dirOf(tmp) / "copy.onnx");
        QVERIFY(compareModels(r.model, back.model).isOk());
    }

    // Files place weights at any offset: Protobuf's raw_data after a name of any length, external
    // data after a tensor of odd size. Kernels and passes read weights as their element type, so a
    // mapping that is not aligned for it must read through an aligned copy (UBSan in CI caught a
    // rank's Add loading floats from an odd address of its mapped model).
    void weightsAtAnyOffsetAreReadAligned_data()
    {
        QTest::addColumn<bool>("external");
        QTest::addColumn<int>("shift");
        for (int shift = 0; shift < 4; ++shift) {
            QTest::addRow("external data, offset 64+%d", shift) << true << shift;
            QTest::addRow("embedded raw_data, name %d chars longer", shift) << false << shift;
        }
    }
    void weightsAtAnyOffsetAreReadAligned()
    {
        QFETCH(bool, external);
        QFETCH(int, shift);
        constexpr int n = 16384; // 64 KiB: what a rank maps from the model file
        std::vector<float> values(n);
        for (int i = 0; i < n; ++i)
            values[std::size_t(i)] = float(i % 251) - 100.0f;
        onnx::ModelProto m = test::emptyModel();
        auto *g = m.mutable_graph();
        const std::string name = "w" + std::string(std::size_t(shift), 'x');
        *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {n});
        onnx::TensorProto w = test::floatTensor(name, {n}, {});
        w.clear_float_data();
        QTemporaryDir tmp;
        const std::string blob(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(float));
        if (external) {
            test::writeBytes(dirOf(tmp) / "w.bin", std::string(std::size_t(64 + shift), '\0') + blob);
            w.set_data_location(onnx::TensorProto::EXTERNAL);
            auto *kv = w.add_external_data();
            kv->set_key("location");
            kv->set_value("w.bin");
            kv = w.add_external_data();
            kv->set_key("offset");
            kv->set_value(std::to_string(64 + shift));
        } else {
            w.set_raw_data(blob);
        }
        *g->add_initializer() = w;
        *g->add_node() = test::node("Add", {"x", name}, {"y"}, "add");
        *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {n});
        const fs::path path = dirOf(tmp) / "m.onnx";
        test::writeProto(path, m);

        LoadOptions options;
        options.mapEmbeddedWeights = true; // as a rank loads
        const Expected<ImportResult> r = loadModel(path, options);
        QVERIFY2(r, r ? "" : r.status().message().c_str());
        const Tensor &t = *r->model.graph.value(r->model.graph.findValue(name)).initializer;
        QVERIFY(t.isMapped());
        const auto address = [](const void *p) { return reinterpret_cast<std::uintptr_t>(p); };
        const bool misaligned = address(t.data->storedBytes().data()) % alignof(float) != 0;
        QCOMPARE(t.data->isMisaligned(), misaligned);
        QCOMPARE(address(t.bytes().data()) % alignof(float), 0u);
        QCOMPARE(t.as<float>()[n - 1], values.back());
        if (external)
            QCOMPARE(misaligned, shift % 4 != 0);

        // The runtime reads it as floats; writing it out goes byte by byte from the mapping.
        auto session = test::sessionOrFail(r->model);
        QVERIFY(session);
        std::vector<float> x(n, 0.5f);
        Feeds feeds{{"x", RuntimeTensor::fromValues(DataType::Float, {n}, x)}};
        const Expected<std::vector<RuntimeTensor>> out = session->run(feeds);
        QVERIFY2(out, out ? "" : out.status().message().c_str());
        const float *y = (*out)[0].data<float>();
        for (int i = 0; i < n; i += 997)
            QCOMPARE(y[i], values[std::size_t(i)] + 0.5f);
        QVERIFY(saveModel(r->model, dirOf(tmp) / "copy.onnx"));
        QVERIFY(compareModels(test::loadOrFail(dirOf(tmp) / "copy.onnx").model, r->model).isOk());

        // A rank writes a misaligned one to its scratch file, aligned, rather than let every
        // reader keep a heap copy; an aligned one stays where it is.
        Model model = r->model;
        QTemporaryDir scratch(QDir::currentPath() + "/spill-XXXXXX"); // on disk, not tmpfs
        const Expected<SpilledWeights> spilled = spillHeapWeights(model.graph, dirOf(scratch));
        QVERIFY2(spilled, spilled ? "" : spilled.status().message().c_str());
        QCOMPARE(spilled->tensors, misaligned ? 1u : 0u);
        QCOMPARE(spilled->realigned, misaligned ? std::uint64_t(n) * sizeof(float) : 0u);
        const Tensor &moved = *model.graph.value(model.graph.findValue(name)).initializer;
        QVERIFY(moved.isMapped());
        QVERIFY(!moved.data->isMisaligned());
        QVERIFY(compareModels(model, r->model).isOk());
    }

    void externalDataThreshold()
    {
        QTemporaryDir tmp;
        const ImportResult r = test::loadOrFail(test::samplePath("inception_block.onnx"));
        SaveOptions options;
        options.mode = ExternalDataMode::External;
        options.threshold = 4096; // only the 13.5 KiB and 6.2 KiB conv weights go out
        const auto saved = saveModel(r.model, dirOf(tmp) / "t.onnx", options);
        QVERIFY(saved);
        const ImportResult back = test::loadOrFail(dirOf(tmp) / "t.onnx");
        int external = 0;
        for (ValueId v : back.model.graph.initializers())
            external += back.model.graph.value(v).initializer->external ? 1 : 0;
        QCOMPARE(external, 2);
        QCOMPARE(saved->externalBytes, std::uint64_t(24 * 16 * 9 * 4 + 8 * 8 * 25 * 4));
    }

    void externalDataEscapesAreRefused_data()
    {
        QTest::addColumn<QString>("location");
        QTest::addColumn<QString>("expected");
        QTest::newRow("absolute") << "/etc/passwd"
                                  << "is an absolute path";
        QTest::newRow("dotdot") << "../outside.bin"
                                << "contains '..'";
        QTest::newRow("nested dotdot") << "sub/../../outside.bin"
                                       << "contains '..'";
        QTest::newRow("symlink out") << "link.bin"
                                     << "outside the model's folder";
        QTest::newRow("missing") << "nope.bin"
                                 << "does not exist";
        QTest::newRow("too short") << "short.bin"
                                   << "too short for offset";
    }

    void externalDataEscapesAreRefused()
    {
        QFETCH(QString, location);
        QFETCH(QString, expected);
        QTemporaryDir tmp;
        const fs::path modelDir = dirOf(tmp) / "model";
        fs::create_directories(modelDir / "sub");
        writeWeights(dirOf(tmp) / "outside.bin", 512);
        writeWeights(modelDir / "short.bin", 10);
        fs::create_symlink(dirOf(tmp) / "outside.bin", modelDir / "link.bin");
        test::writeProto(modelDir / "m.onnx", externalModel(location.toStdString()));
        const std::string err = loadError(modelDir / "m.onnx");
        QVERIFY2(contains(err, expected.toUtf8().constData()), err.c_str());
        QVERIFY2(contains(err, "'w'"), err.c_str()); // names the tensor
    }

    void typedFieldsAndStrings()
    {
        QTemporaryDir tmp;
        onnx::ModelProto m = test::smallModel();
        auto *g = m.mutable_graph();
        auto *h = g->add_initializer(); // float16 in int32_data, as the ONNX spec stores it
        h->set_name("half");
        h->set_data_type(onnx::TensorProto::FLOAT16);
        h->add_dims(2);
        h->add_int32_data(0x3c00); // 1.0
        h->add_int32_data(0xc000); // -2.0
        auto *f = g->add_initializer();
        f->set_name("floats");
        f->set_data_type(onnx::TensorProto::FLOAT);
        f->add_dims(3);
        for (float v : {1.5f, 2.5f, -3.0f})
            f->add_float_data(v);
        auto *s = g->add_initializer();
        s->set_name("labels");
        s->set_data_type(onnx::TensorProto::STRING);
        s->add_dims(2);
        s->add_string_data("cat");
        s->add_string_data("dog");
        test::writeProto(dirOf(tmp) / "typed.onnx", m);
        const ImportResult r = test::loadOrFail(dirOf(tmp) / "typed.onnx");
        const Graph &graph = r.model.graph;
        QCOMPARE(graph.value(graph.findValue("half")).initializer->as<std::uint16_t>()[1],
                 std::uint16_t(0xc000));
        QCOMPARE(graph.value(graph.findValue("floats")).initializer->as<float>()[2], -3.0f);
        QCOMPARE(graph.value(graph.findValue("labels")).initializer->strings->at(1), std::string("dog"));
        QVERIFY(saveModel(r.model, dirOf(tmp) / "typed2.onnx"));
        QVERIFY(compareModels(r.model, test::loadOrFail(dirOf(tmp) / "typed2.onnx").model).isOk());
    }

    void badModelsAreRefused_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("expected");
        QTest::newRow("size mismatch") << 0 << "holds 8 bytes but its shape [3] of float32 needs 12";
        QTest::newRow("dims overflow") << 1 << "overflows 64 bits";
        QTest::newRow("negative dim") << 2 << "negative dimension";
        QTest::newRow("dangling input")
            << 3 << "reads tensor 'ghost', which no node, initializer or graph input produces";
        QTest::newRow("two producers") << 4 << "'sum' is produced by two nodes";
        QTest::newRow("cycle") << 5 << "has a cycle";
        QTest::newRow("no graph") << 6 << "it has no graph";
        QTest::newRow("no opset") << 7 << "imports no operator set";
        QTest::newRow("absurd value shape") << 8 << "overflows 64 bits";
        QTest::newRow("unknown dtype") << 9 << "unknown data type";
    }

    void badModelsAreRefused()
    {
        QFETCH(int, kind);
        QFETCH(QString, expected);
        QTemporaryDir tmp;
        onnx::ModelProto m = test::smallModel();
        auto *g = m.mutable_graph();
        switch (kind) {
        case 0: g->mutable_initializer(0)->set_raw_data(std::string(8, '\0')); break;
        case 1:
            g->mutable_initializer(0)->add_dims(1LL << 40), g->mutable_initializer(0)->add_dims(1LL << 40);
            break;
        case 2: g->mutable_initializer(0)->set_dims(0, -3); break;
        case 3: g->mutable_node(1)->set_input(0, "ghost"); break;
        case 4: *g->add_node() = test::node("Neg", {"x"}, {"sum"}, "neg"); break;
        case 5: g->mutable_node(0)->set_input(0, "y"); break;
        case 6: m.clear_graph(); break;
        case 7: m.clear_opset_import(); break;
        case 8: {
            auto *shape = g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
            shape->mutable_dim(0)->set_dim_value(1LL << 40);
            shape->mutable_dim(1)->set_dim_value(1LL << 40);
            break;
        }
        case 9: g->mutable_initializer(0)->set_data_type(99); break;
        }
        test::writeProto(dirOf(tmp) / "bad.onnx", m);
        const std::string err = loadError(dirOf(tmp) / "bad.onnx");
        QVERIFY2(contains(err, expected.toUtf8().constData()), err.c_str());
    }

    void mutatedFilesNeverCrash()
    {
        // Every truncation point and every single-byte corruption of a small model: the loader
        // returns a model or an error — no crash, no hang, no exception escaping.
        onnx::ModelProto m = test::smallModel();
        *m.mutable_graph()->add_node() = test::node("Softmax", {"y"}, {"p"}, "softmax");
        *m.mutable_graph()->add_output() = test::tensorInfo("p", onnx::TensorProto::FLOAT, {2, 3});
        const std::string bytes = m.SerializeAsString();
        int loaded = 0, refused = 0;
        const auto tryLoad = [&](const std::string &b) {
            const auto r = loadModelFromBytes(std::as_bytes(std::span(b.data(), b.size())), ".");
            (r ? loaded : refused)++;
            if (r)
                QVERIFY(verifyGraph(r->model.graph).isOk()); // whatever loads is a valid graph
        };
        for (std::size_t cut = 0; cut < bytes.size(); ++cut)
            tryLoad(bytes.substr(0, cut));
        for (std::size_t i = 0; i < bytes.size(); ++i)
            for (unsigned char flip : {0x01u, 0x80u, 0xffu}) {
                std::string b = bytes;
                b[i] = static_cast<char>(static_cast<unsigned char>(b[i]) ^ flip);
                tryLoad(b);
            }
        QVERIFY(refused > 0);
        QVERIFY(loaded > 0);
    }

    void unknownDomainLoadsWithWarning()
    {
        QTemporaryDir tmp;
        onnx::ModelProto m = test::smallModel();
        auto *op = m.add_opset_import();
        op->set_domain("com.example");
        op->set_version(1);
        auto *n = m.mutable_graph()->add_node();
        *n = test::node("FancyOp", {"y"}, {"z"}, "fancy");
        n->set_domain("com.example");
        *m.mutable_graph()->add_output() = test::tensorInfo("z", onnx::TensorProto::FLOAT, {2, 3});
        test::writeProto(dirOf(tmp) / "custom.onnx", m);
        const ImportResult r = test::loadOrFail(dirOf(tmp) / "custom.onnx");
        QCOMPARE(r.model.graph.nodeCount(), 3u);
        bool warned = false;
        for (const std::string &w : r.warnings)
            warned |= contains(w, "'com.example::FancyOp'") && contains(w, "viewed but not run");
        QVERIFY(warned);
    }

    // Above this libonnx's newest opset (17): an op it has no schema for but the runtime runs
    // (Gelu-20) is not "viewed but not run", and the checker's complaint about an attribute newer
    // schemas added (Split-18's num_outputs) says which opset it checked against (a new-user trial).
    void newerOpsetsAreNotCalledWrong()
    {
        QTemporaryDir tmp;
        for (const bool gelu : {true, false}) {
            onnx::ModelProto m;
            m.set_ir_version(8);
            m.add_opset_import()->set_version(gelu ? 20 : 18);
            auto *g = m.mutable_graph();
            g->set_name("g");
            *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {2, 4});
            if (gelu) {
                *g->add_node() = test::node("Gelu", {"x"}, {"y"}, "gelu");
                *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {2, 4});
            } else {
                auto split = test::node("Split", {"x"}, {"a", "b"}, "split");
                auto *num = split.add_attribute();
                num->set_name("num_outputs");
                num->set_type(onnx::AttributeProto::INT);
                num->set_i(2);
                *g->add_node() = split;
                *g->add_output() = test::tensorInfo("a", onnx::TensorProto::FLOAT, {2, 2});
                *g->add_output() = test::tensorInfo("b", onnx::TensorProto::FLOAT, {2, 2});
            }
            const fs::path path = dirOf(tmp) / (gelu ? "gelu20.onnx" : "split18.onnx");
            test::writeProto(path, m);
            const ImportResult r = test::loadOrFail(path);
            bool explained = false;
            for (const std::string &w : r.warnings) {
                QVERIFY2(!contains(w, "viewed but not run"), w.c_str());
                explained |= contains(w, "Unrecognized attribute") && contains(w, "checked against opset 17");
            }
            if (!gelu)
                QVERIFY(explained);
        }
    }

    void saveIsAtomic()
    {
        QTemporaryDir tmp;
        const ImportResult r = test::loadOrFail(test::samplePath("inception_block.onnx"));
        // Into a folder that does not exist: an error, and nothing created.
        const auto bad = saveModel(r.model, dirOf(tmp) / "missing" / "out.onnx");
        QVERIFY(!bad);
        QVERIFY(!fs::exists(dirOf(tmp) / "missing"));
        // A cyclic graph cannot be exported: the existing file is left untouched.
        const fs::path out = dirOf(tmp) / "keep.onnx";
        test::writeBytes(out, "previous contents");
        Model broken = r.model;
        Graph &g = broken.graph;
        g.setNodeInput(g.findNode("/stem/conv1/Conv"), 0, g.findValue("probabilities"));
        QVERIFY(!saveModel(broken, out));
        std::ifstream in(out);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        QCOMPARE(text, std::string("previous contents"));
        QCOMPARE(QDir(tmp.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);
    }

    void opSchemas()
    {
        const auto conv = findOpSchema("Conv", "", 13);
        QVERIFY(conv);
        QCOMPARE(conv->sinceVersion, 11);
        const OpAttributeInfo *autoPad = conv->attribute("auto_pad");
        QVERIFY(autoPad && autoPad->defaultValue);
        QCOMPARE(autoPad->defaultValue->s, std::string("NOTSET"));
        QVERIFY(!conv->doc.empty());
        QCOMPARE(conv->inputs.size(), 3u);
        QVERIFY(conv->inputs[2].optional);
        const auto lrelu = findOpSchema("LeakyRelu", "ai.onnx", 13);
        QVERIFY(lrelu && lrelu->attribute("alpha")->defaultValue);
        QCOMPARE(lrelu->attribute("alpha")->defaultValue->f, 0.01f);
        QVERIFY(!findOpSchema("NoSuchOp", "", 13));
        QVERIFY(isKnownDomain("ai.onnx.ml"));
        QVERIFY(!isKnownDomain("com.example"));
    }
};

QTEST_GUILESS_MAIN(TestOnnxIo)
#include "tst_onnxio.moc"
