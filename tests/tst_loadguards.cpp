// Loads and runs that must end: an axis left out of an op given a scalar (libonnx's inference
// indexed dims by its default), and a Loop that never ends, which cancelling must stop (a body
// without nodes has no steps, where the executor's per-step check never ran). Split from
// tst_robustness, whose cases are CLI runs of malformed models.

#include "onnx/modelio.h"
#include "runtime/session.h"
#include "testsupport.h"

#include <QTest>
#include <atomic>
#include <memory>
#include <thread>

using namespace opscope;

namespace {

using Tp = onnx::TensorProto;

} // namespace

class TestLoadGuards : public QObject
{
    Q_OBJECT

private slots:
    // An axis left out takes its schema's default, which a scalar's rank 0 puts out of range as
    // surely as a written one: a LayerNormalization of a scalar (its rank known only once a
    // Constant's output is inferred) with its Mean output crashed libonnx 1.12's inference in
    // `info` (found by fuzzing). Every op whose inference indexes dims by `axis`, given a scalar
    // and no axis: refused at load with the reason, never a crash.
    void defaultAxisOfAScalarIsRefusedAtLoad_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<int>("opset");
        for (const char *op : {"LayerNormalization", "Softmax", "LogSoftmax", "Hardmax", "Flatten", "ArgMax",
                               "ArgMin", "Split", "Gather", "GatherElements", "ScatterElements"})
            for (int opset : {11, 17})
                if (std::string(op) != "LayerNormalization" || opset >= 17)
                    QTest::newRow((std::string(op) + " opset " + std::to_string(opset)).c_str()) << QString(op) << opset;
    }

    void defaultAxisOfAScalarIsRefusedAtLoad()
    {
        QFETCH(QString, op);
        QFETCH(int, opset);
        const std::string name = op.toStdString();
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(opset);
        auto *g = m.mutable_graph();
        g->set_name("scalar");
        const auto constant = [&](const std::string &out, const onnx::TensorProto &value) {
            onnx::NodeProto c = test::node("Constant", {}, {out}, out);
            auto *a = c.add_attribute();
            a->set_name("value");
            a->set_type(onnx::AttributeProto::TENSOR);
            *a->mutable_t() = value;
            *g->add_node() = c;
        };
        constant("x", test::floatTensor("", {}, {2.0f}));
        constant("i", test::int64Tensor("", {}, {0}));
        std::vector<std::string> inputs{"x"}, outputs{"y"};
        if (name == "LayerNormalization")
            inputs.push_back("x"), outputs.push_back("mean");
        else if (name == "Gather" || name == "GatherElements")
            inputs.push_back("i");
        else if (name == "ScatterElements")
            inputs.insert(inputs.end(), {"i", "x"});
        *g->add_node() = test::node(name, inputs, outputs, "n");
        for (const std::string &o : outputs)
            g->add_output()->set_name(o);
        const std::string bytes = m.SerializeAsString();
        Expected<ImportResult> r = loadModelFromBytes(std::as_bytes(std::span(bytes.data(), bytes.size())), ".");
        QVERIFY(!r);
        QVERIFY2(QString::fromStdString(r.status().message()).contains("out of range for an input of rank 0"),
                 r.status().message().c_str());
    }

    // A Loop whose condition never turns false is a valid model that never ends: cancelling the
    // run must stop it. The executor checks its flag before every step, a body's steps
    // included — but a body without nodes (its condition output is its condition input) has no
    // steps, and such a Loop could not be stopped at all.
    void endlessLoopIsCancelled_data()
    {
        QTest::addColumn<bool>("bodyHasNodes");
        QTest::addColumn<bool>("nested");
        QTest::newRow("body with a node") << true << false;
        QTest::newRow("body without nodes") << false << false;
        QTest::newRow("inside another Loop, body without nodes") << false << true;
    }

    void endlessLoopIsCancelled()
    {
        QFETCH(bool, bodyHasNodes);
        QFETCH(bool, nested);
        // Loop(M absent, cond, v) -> v: the body hands v and its condition on unchanged. Names
        // are unique across scopes (p: the scope's prefix).
        const auto loopOf = [](const onnx::GraphProto &body, const std::string &p, const std::string &name) {
            onnx::NodeProto loop = test::node("Loop", {"", p + "c", p + "v"}, {p + "v" + name}, name);
            auto *a = loop.add_attribute();
            a->set_name("body");
            a->set_type(onnx::AttributeProto::GRAPH);
            *a->mutable_g() = body;
            return loop;
        };
        const auto body = [&](const std::string &p, const onnx::GraphProto *inner) {
            onnx::GraphProto b;
            b.set_name(p + "body");
            *b.add_input() = test::tensorInfo(p + "i", Tp::INT64, {});
            *b.add_input() = test::tensorInfo(p + "c", Tp::BOOL, {});
            *b.add_input() = test::tensorInfo(p + "v", Tp::FLOAT, {2});
            std::string v = p + "v";
            if (inner) {
                *b.add_node() = loopOf(*inner, p, "inner");
                v = p + "vinner";
            }
            if (bodyHasNodes) {
                *b.add_node() = test::node("Identity", {p + "c"}, {p + "c2"}, p + "keep");
                *b.add_output() = test::tensorInfo(p + "c2", Tp::BOOL, {});
            } else {
                *b.add_output() = test::tensorInfo(p + "c", Tp::BOOL, {});
            }
            *b.add_output() = test::tensorInfo(v, Tp::FLOAT, {2});
            return b;
        };
        const onnx::GraphProto innerBody = body(nested ? "in_" : "b_", nullptr);
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(13);
        auto *g = m.mutable_graph();
        g->set_name("endless");
        *g->add_input() = test::tensorInfo("c", Tp::BOOL, {});
        *g->add_input() = test::tensorInfo("v", Tp::FLOAT, {2});
        *g->add_node() = loopOf(nested ? body("out_", &innerBody) : innerBody, "", "loop");
        *g->add_output() = test::tensorInfo("vloop", Tp::FLOAT, {2});
        Expected<std::unique_ptr<InferenceSession>> created = InferenceSession::create(test::modelOrFail(m));
        QVERIFY2(created, created ? "" : created.status().message().c_str());
        std::unique_ptr<InferenceSession> s = std::move(*created);
        struct State
        {
            std::atomic<bool> cancel{false}, done{false};
            std::string message;
        };
        auto state = std::make_shared<State>();
        const Feeds feeds = {{"c", RuntimeTensor::fromValues(DataType::Bool, {}, std::vector<std::uint8_t>{1})},
                             {"v", RuntimeTensor::fromValues(DataType::Float, {2}, std::vector<float>{1, 2})}};
        std::thread([state, feeds, sess = s.get()] {
            ExecOptions exec;
            exec.cancel = &state->cancel;
            Expected<std::vector<RuntimeTensor>> r = sess->run(feeds, nullptr, &exec);
            state->message = r ? std::string("finished") : r.status().message();
            state->done.store(true);
        }).detach();
        QTest::qWait(300);
        QVERIFY2(!state->done.load(), state->message.c_str()); // still looping
        state->cancel.store(true);
        for (int waited = 0; waited < 10000 && !state->done.load(); waited += 50)
            QTest::qWait(50);
        if (!state->done.load()) {
            (void)s.release(); // the run still uses it
            QFAIL("the Loop did not stop within 10 s of the run being cancelled");
        }
        QVERIFY2(state->message.find("cancelled") != std::string::npos, state->message.c_str());
    }

};

QTEST_GUILESS_MAIN(TestLoadGuards)
#include "tst_loadguards.moc"
