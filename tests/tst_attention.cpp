// attention-fusion on the attention forms exporters write (plain 4-D, scale before or after the
// product, masks, Kᵀ given directly, cross attention, shared K/V heads, BERT/GPT head split and
// merge, the SVTR output transpose), its negatives, both export targets, and the FlashAttention
// kernel against the unfused graph where the key tiles and query blocks have ragged edges and
// masks hide whole tiles.

#include "passtest.h"

#include <QTest>
#include <cmath>
#include <limits>

using namespace opscope;
using namespace opscope::test;

namespace {

// Q·Kᵀ·scale (+mask) → Softmax → ·V on 4-D q/k/v named "q", "k" (or "kt"), "v"; output "ctx".
void core(ModelBuilder &b, const QString &scale, bool mask, bool kGivenTransposed)
{
    b.constant("s", {}, {0.5f}).constant("d", {}, {2.0f});
    std::string q = "q", kt = "kt";
    if (scale == "q") {
        b.op("Mul", {"q", "s"}, {"qs"});
        q = "qs";
    }
    if (!kGivenTransposed)
        b.op("Transpose", {"k"}, {"kt"}, {intsAttr("perm", {0, 1, 3, 2})});
    b.op("MatMul", {q, kt}, {"scores"});
    std::string s = "scores";
    if (scale == "mul") {
        b.op("Mul", {"scores", "s"}, {"scaled"});
        s = "scaled";
    } else if (scale == "div") {
        b.op("Div", {"scores", "d"}, {"scaled"});
        s = "scaled";
    }
    if (mask) {
        b.op("Add", {s, "mask"}, {"masked"});
        s = "masked";
    }
    b.op("Softmax", {s}, {"probs"}, {intAttr("axis", -1)}).op("MatMul", {"probs", "v"}, {"ctx"});
}

// x[N,S,8] → per-head q/k/v (2 heads of 4) the way BERT and GPT-2 exports write it.
void headSplit(ModelBuilder &b, const std::string &name, const std::vector<std::int64_t> &perm)
{
    b.randomConstant("W" + name, {8, 8}, -0.5f, 0.5f).randomConstant("b" + name, {8}, -0.1f, 0.1f);
    b.op("MatMul", {"x", "W" + name}, {name + "_mm"})
        .op("Add", {name + "_mm", "b" + name}, {name + "_lin"})
        .op("Reshape", {name + "_lin", "split"}, {name + "_split"})
        .op("Transpose", {name + "_split"}, {name}, {intsAttr("perm", perm)});
}

} // namespace

class TestAttention : public QObject
{
    Q_OBJECT

private slots:
    void fusion_data()
    {
        QTest::addColumn<QString>("form");
        QTest::addColumn<QString>("scale"); // mul | div | q | none
        QTest::addColumn<bool>("mask");
        QTest::addColumn<int>("heads"); // expected num_heads attribute (0: 4-D form)
        for (const char *scale : {"mul", "div", "q", "none"})
            for (bool mask : {false, true})
                QTest::addRow("4-D scale=%s%s", scale, mask ? " masked" : "")
                    << "4d" << QString(scale) << mask << 0;
        QTest::newRow("Kᵀ given directly") << "kt"
                                           << "div" << true << 0;
        QTest::newRow("cross attention Sq≠Sk") << "cross"
                                               << "mul" << false << 0;
        QTest::newRow("one K/V head shared by all") << "mqa"
                                                    << "mul" << true << 0;
        QTest::newRow("SVTR: output transposed") << "merge"
                                                 << "q" << false << 0;
        QTest::newRow("BERT: Kᵀ by Transpose(0,2,3,1)") << "bert"
                                                        << "div" << true << 2;
        QTest::newRow("GPT-2: K split then Transpose(-1,-2)") << "gpt"
                                                              << "mul" << true << 2;
        // PyTorch's usual export: [batch_size, sequence_length, hidden]. lower-to-ort kept
        // MultiHeadAttention only when the mask's broadcast shape was known statically.
        QTest::newRow("BERT, symbolic sequence length") << "bert-dynamic"
                                                        << "div" << true << 2;
    }
    void fusion()
    {
        QFETCH(QString, form);
        QFETCH(QString, scale);
        QFETCH(bool, mask);
        QFETCH(int, heads);
        ModelBuilder b;
        const bool bert = form.startsWith(QLatin1String("bert")), dynamicSeq = form == "bert-dynamic";
        const bool projected = bert || form == "gpt";
        if (projected) {
            b.input("x", {-1, dynamicSeq ? -1 : 6, 8})
                .intConstant("split", {4}, {0, 0, 2, 4})
                .intConstant("merge", {3}, {0, 0, 8});
            headSplit(b, "q", {0, 2, 1, 3});
            headSplit(b, bert ? "kt" : "k",
                      bert ? std::vector<std::int64_t>{0, 2, 3, 1}
                                     : std::vector<std::int64_t>{0, 2, 1, 3});
            headSplit(b, "v", {0, 2, 1, 3});
        } else {
            const std::int64_t sk = form == "cross" ? 7 : 5, hk = form == "mqa" ? 1 : 2;
            b.input("q", {-1, 2, 5, 4}).input("v", {-1, hk, sk, 3});
            if (form == "kt")
                b.input("kt", {-1, 2, 4, sk});
            else
                b.input("k", {-1, hk, sk, 4});
        }
        if (mask)
            b.input("mask", {-1, 1, 1, dynamicSeq ? -1 : projected ? 6 : 5});
        core(b, scale, mask, form == "kt" || bert);
        if (projected)
            b.op("Transpose", {"ctx"}, {"ctx_t"}, {intsAttr("perm", {0, 2, 1, 3})})
                .op("Reshape", {"ctx_t", "merge"}, {"y"});
        else if (form == "merge")
            b.op("Transpose", {"ctx"}, {"y"}, {intsAttr("perm", {0, 2, 1, 3})});
        else
            b.op("Identity", {"ctx"}, {"y"});
        b.output("y");
        const Model model = b.build();
        const PassOutcome o = runAndCompare(model, {"attention-fusion"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::Attention"), 1);
        QCOMPARE(opCount(o.opsAfter, "Softmax"), 0);
        QCOMPARE(opCount(o.opsAfter, "Transpose"), 0);
        QCOMPARE(opCount(o.opsAfter, "Reshape"), 0);
        QCOMPARE(opCount(o.opsAfter, "MatMul"), projected ? 3 : 0);
        for (NodeId id : o.after.graph.nodeIds()) {
            const Node &n = o.after.graph.node(id);
            if (n.opType != "Attention")
                continue;
            const Attribute *h = n.attribute("num_heads");
            QCOMPARE(h ? int(h->i) : 0, heads);
            const float want = scale == "mul" || scale == "q" ? 0.5f : scale == "div" ? 0.5f : 1.0f;
            QCOMPARE(n.attribute("scale")->f, want);
            QCOMPARE(n.inputs.size(), std::size_t(mask ? 4 : 3));
        }
        const PassOutcome onnx = runAndCompare(o.after, {"lower-to-onnx"}, {2}, {3});
        QCOMPARE(opCount(onnx.opsAfter, "ai.opscope::Attention"), 0);
        QCOMPARE(opCount(onnx.opsAfter, "Softmax"), 1);
        const auto findings = checkerFindings(onnx.after);
        QVERIFY2(findings.empty(), findings.empty() ? "" : findings[0].c_str());
        const PassOutcome ort = runAndCompare(o.after, {"lower-to-ort"}, {2}, {3});
        QCOMPARE(opCount(ort.opsAfter, "com.microsoft::MultiHeadAttention"), heads ? 1 : 0);
        QCOMPARE(opCount(ort.opsAfter, "Softmax"), heads ? 0 : 1);
        // The whole extended pipeline keeps the fusion (matmul-scale-fusion must not take the scale first).
        const PassOutcome all =
            runAndCompare(model, {"attention-fusion", "matmul-scale-fusion", "matmul-add-fusion"});
        QCOMPARE(opCount(all.opsAfter, "ai.opscope::Attention"), 1);
    }

    // GPT-2: Where(causal, scores, finfo.min), then the padding mask added, then Softmax.
    void causalWhere_data()
    {
        QTest::addColumn<bool>("paddingMask");
        QTest::newRow("causal only") << false;
        QTest::newRow("causal and padding") << true;
    }
    void causalWhere()
    {
        QFETCH(bool, paddingMask);
        ModelBuilder b;
        b.input("q", {-1, 2, 6, 4}).input("k", {-1, 2, 6, 4}).input("v", {-1, 2, 6, 4});
        auto *causal = b.proto().mutable_graph()->add_initializer();
        causal->set_name("causal");
        causal->set_data_type(onnx::TensorProto::BOOL);
        for (std::int64_t d : {1, 1, 6, 6})
            causal->add_dims(d);
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j)
                causal->add_int32_data(j <= i);
        b.constant("fill", {}, {std::numeric_limits<float>::lowest()}).constant("d", {}, {2.0f});
        b.op("Transpose", {"k"}, {"kt"}, {intsAttr("perm", {0, 1, 3, 2})})
            .op("MatMul", {"q", "kt"}, {"scores"})
            .op("Div", {"scores", "d"}, {"scaled"})
            .op("Where", {"causal", "scaled", "fill"}, {"selected"});
        std::string s = "selected";
        if (paddingMask) {
            b.input("mask", {-1, 1, 1, 6}).op("Add", {"selected", "mask"}, {"masked"});
            s = "masked";
        }
        b.op("Softmax", {s}, {"probs"}, {intAttr("axis", -1)})
            .op("MatMul", {"probs", "v"}, {"y"})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"attention-fusion"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::Attention"), 1);
        QCOMPARE(opCount(o.opsAfter, "Softmax"), 0);
        QCOMPARE(opCount(o.opsAfter, "Where"), 0); // a constant causal mask becomes a constant additive one
        QCOMPARE(opCount(o.opsAfter, "Add"), paddingMask ? 1 : 0);
        const PassOutcome onnx = runAndCompare(o.after, {"lower-to-onnx"}, {2}, {3});
        QCOMPARE(opCount(onnx.opsAfter, "Softmax"), 1);
    }

    void negative_data()
    {
        QTest::addColumn<QString>("why");
        QTest::newRow("Softmax over the query axis") << "axis";
        QTest::newRow("probabilities read elsewhere") << "shared-probs";
        QTest::newRow("scores read elsewhere") << "shared-scores";
        QTest::newRow("mask grows the scores") << "big-mask";
        QTest::newRow("scale not a constant") << "dynamic-scale";
    }
    void negative()
    {
        QFETCH(QString, why);
        ModelBuilder b;
        b.input("q", {-1, 1, 5, 4}).input("k", {-1, 1, 5, 4}).input("v", {-1, 1, 5, 4}).input("t", {});
        b.input("mask", {-1, 2, 5, 5});
        b.op("Transpose", {"k"}, {"kt"}, {intsAttr("perm", {0, 1, 3, 2})})
            .op("MatMul", {"q", "kt"}, {"scores"});
        std::string s = "scores";
        if (why == "dynamic-scale") {
            b.op("Mul", {"scores", "t"}, {"scaled"});
            s = "scaled";
        }
        if (why == "big-mask") {
            b.op("Add", {s, "mask"}, {"masked"});
            s = "masked";
        }
        b.op("Softmax", {s}, {"probs"}, {intAttr("axis", why == "axis" ? 2 : -1)})
            .op("MatMul", {"probs", "v"}, {"y"})
            .output("y");
        if (why == "shared-probs")
            b.output("probs");
        if (why == "shared-scores")
            b.output("scores");
        const PassOutcome o = runAndCompare(b.build(), {"attention-fusion"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::Attention"), 0);
    }

    // The kernel's tiles: 64 query rows per block, 256 keys per tile. Ragged sizes, a causal mask
    // (−∞ above the diagonal), a mask hiding the whole first key tile, and large scores (the
    // running maximum must rescale, not overflow).
    void flashKernel_data()
    {
        QTest::addColumn<int>("sq");
        QTest::addColumn<int>("sk");
        QTest::addColumn<QString>("mask");
        QTest::addColumn<float>("scale");
        QTest::newRow("one tile") << 10 << 20 << "none" << 0.5f;
        QTest::newRow("ragged 130×600") << 130 << 600 << "none" << 0.5f;
        QTest::newRow("causal 300×300") << 300 << 300 << "causal" << 0.25f;
        QTest::newRow("first key tile hidden") << 70 << 520 << "first-tile" << 0.25f;
        QTest::newRow("large scores") << 65 << 513 << "none" << 40.0f;
    }
    void flashKernel()
    {
        QFETCH(int, sq);
        QFETCH(int, sk);
        QFETCH(QString, mask);
        QFETCH(float, scale);
        ModelBuilder b;
        b.input("q", {-1, 2, sq, 16}).input("k", {-1, 2, sk, 16}).input("v", {-1, 2, sk, 8});
        b.constant("s", {}, {scale});
        b.op("Transpose", {"k"}, {"kt"}, {intsAttr("perm", {0, 1, 3, 2})})
            .op("MatMul", {"q", "kt"}, {"scores"})
            .op("Mul", {"scores", "s"}, {"scaled"});
        std::string s = "scaled";
        if (mask != "none") {
            const float inf = std::numeric_limits<float>::infinity();
            std::vector<float> m(std::size_t(sq) * std::size_t(sk));
            for (int i = 0; i < sq; ++i)
                for (int j = 0; j < sk; ++j)
                    m[std::size_t(i) * std::size_t(sk) + std::size_t(j)] =
                        mask == "causal" ? (j > i ? -inf : 0.0f) : (j < 256 ? -inf : 0.0f);
            b.constant("mask", {1, 1, sq, sk}, m).op("Add", {"scaled", "mask"}, {"masked"});
            s = "masked";
        }
        b.op("Softmax", {s}, {"probs"}, {intAttr("axis", -1)})
            .op("MatMul", {"probs", "v"}, {"y"})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"attention-fusion"}, {1, 2}, {1, 5}, 1e-4, 1e-5);
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::Attention"), 1);
    }
};

QTEST_GUILESS_MAIN(TestAttention)
#include "tst_attention.moc"
