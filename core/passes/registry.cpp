#include "passes/registry.h"

#include "passes/algebraicsimplification.h"
#include "passes/attentionfusion.h"
#include "passes/bnscalefusion.h"
#include "passes/bntoscale.h"
#include "passes/channelshuffle.h"
#include "passes/commonsubexpression.h"
#include "passes/constantfolding.h"
#include "passes/constantpropagation.h"
#include "passes/convactivationfusion.h"
#include "passes/convaddfusion.h"
#include "passes/convaffinefusion.h"
#include "passes/convbnfusion.h"
#include "passes/convmulfusion.h"
#include "passes/deadcodeelimination.h"
#include "passes/elementwiseforward.h"
#include "passes/eltwisefusion.h"
#include "passes/gelufusion.h"
#include "passes/gemmactivationfusion.h"
#include "passes/globalpoolfusion.h"
#include "passes/hardswishfusion.h"
#include "passes/layernormfusion.h"
#include "passes/layoutnhwc.h"
#include "passes/lowering.h"
#include "passes/matmuladdfusion.h"
#include "passes/matmulbnfusion.h"
#include "passes/matmulscalefusion.h"
#include "passes/matmultransposefusion.h"
#include "passes/padfusion.h"
#include "passes/partitionpass.h"
#include "passes/prelufusion.h"
#include "passes/preluleakyrelu.h"
#include "passes/redundantnodes.h"
#include "passes/swishfusion.h"

#include <algorithm>
#include <functional>
#include <map>

namespace opscope::passes {

namespace {

struct Entry
{
    PassInfo info;
    std::function<std::unique_ptr<Pass>()> make;
};

template<class P>
Entry entry(const char *summary, const char *level)
{
    return {{P().name(), summary, level}, [] { return std::make_unique<P>(); }};
}

const std::vector<Entry> &entries()
{
    static const std::vector<Entry> all{
        entry<ConstantFolding>("evaluate nodes whose inputs are all constant; Shape/Size of static shapes",
                               "basic"),
        entry<ConstantPropagation>(
            "inline If on a constant condition; carry constants into subgraphs and fold there", "basic"),
        entry<RedundantNodeElimination>(
            "drop Identity, Dropout, no-op views/Slice/Pad/Tile/Transpose/pooling, cancelling pairs",
            "basic"),
        entry<AlgebraicSimplification>("x·1, x+0, x·x→Pow, Neg(Neg(x)), a·s+b·s→(a+b)·s, merged constants",
                                       "basic"),
        entry<CommonSubexpressionElimination>("merge identical nodes and duplicate small constants", "basic"),
        entry<DeadCodeElimination>("remove nodes, initializers and captures nothing reads", "basic"),
        entry<LayerNormFusion>("ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div(/Mul/Add) → LayerNormalization",
                               "extended"),
        entry<GeluFusion>("the erf GELU written out (Div, Erf, Add, Mul, Mul) → Gelu", "extended"),
        entry<SwishFusion>("x·Sigmoid(x) (and x·Sigmoid(βx)) → Swish", "extended"),
        entry<HardSwishFusion>("x·HardSigmoid(x) and x·Clip(x+3, 0, 6)/6 → HardSwish", "extended"),
        entry<PReluFusion>("Relu(x) − α·Relu(−x), Max/Min and Where(x<0, αx, x) forms → PRelu", "extended"),
        entry<AttentionFusion>("Q·Kᵀ·scale (+mask) → Softmax → ·V, with head split/merge → Attention",
                               "extended"),
        entry<PReluToLeakyRelu>("PRelu with one slope value → LeakyRelu", "extended"),
        entry<ChannelShuffleCanonicalization>("Reshape-Transpose-Reshape channel shuffle → ChannelShuffle",
                                              "extended"),
        entry<ElementwiseForward>("move elementwise ops after the Slice/Gather that reads them", "extended"),
        entry<PadFusion>("an explicit zero Pad before Conv/AveragePool → their own pads", "extended"),
        entry<BnScaleFusion>("fold a per-channel Mul/Add after BatchNormalization into it", "extended"),
        entry<ConvBnFusion>("fold BatchNormalization into the preceding Conv", "extended"),
        entry<MatMulBnFusion>("fold BatchNormalization into the preceding MatMul → Gemm", "extended"),
        entry<BnToScale>("lone BatchNormalization → Mul or Add when that is all it does", "extended"),
        entry<ConvMulFusion>("fold a per-channel constant Mul into the preceding Conv", "extended"),
        entry<ConvAddFusion>("fold a per-channel constant Add into the Conv bias", "extended"),
        entry<MatMulScaleFusion>("fold a scalar Mul/Div around MatMul into weights or alpha", "extended"),
        entry<MatMulTransposeFusion>("Transpose of a MatMul operand or product → transA/transB, pairs cancel",
                                     "extended"),
        entry<GlobalPoolFusion>(
            "ReduceMean/ReduceMax over all spatial axes → GlobalAveragePool/GlobalMaxPool", "extended"),
        entry<MatMulAddFusion>("MatMul + bias Add → Gemm (2-D) or FusedMatMul", "extended"),
        entry<ConvActivationFusion>(
            "Conv + Relu/LeakyRelu/Clip/HardSigmoid/Sigmoid/Tanh/HardSwish → FusedConv", "extended"),
        entry<ConvAffineFusion>("scalar Mul/Add/Sub/Div after a FusedConv's activation → its post-op",
                                "extended"),
        entry<GemmActivationFusion>("Gemm + activation → FusedGemm", "extended"),
        entry<EltwiseFusion>("a·c1 + b·c2 − … with scalar constants → one Eltwise", "extended"),
        entry<LayoutNhwc>("regions of Conv/pool/elementwise ops in NCHWc or NHWC, conversions at borders",
                          "layout"),
        entry<PartitionForDevices>("place nodes on N devices (greedy) and add Send/Recv where tensors cross",
                                   "devices"),
        entry<LowerToOnnx>("export target: opscope ops back to standard ONNX", "target"),
        entry<LowerToOrt>("export target: opscope ops to ONNX Runtime's com.microsoft ops", "target"),
    };
    return all;
}

const std::vector<std::string> kBasic{"constant-folding",
                                      "constant-propagation",
                                      "redundant-node-elimination",
                                      "algebraic-simplification",
                                      "common-subexpression-elimination",
                                      "dead-code-elimination"};

std::vector<std::string> extendedPipeline()
{
    std::vector<std::string> p = kBasic;
    // One pass a line, in pipeline order.
    // clang-format off
    const char *const passes[] = {
        "layernorm-fusion",
        "gelu-fusion",
        "swish-fusion",
        "hardswish-fusion",
        "prelu-fusion",
        "attention-fusion",
        "prelu-to-leakyrelu",
        "channel-shuffle-canonicalization",
        "elementwise-forward",
        "global-pool-fusion",
        "pad-fusion",
        "bn-scale-fusion",
        "conv-bn-fusion",
        "matmul-bn-fusion",
        "bn-to-scale",
        "conv-mul-fusion",
        "conv-add-fusion",
        "matmul-scale-fusion",
        "matmul-transpose-fusion",
        "matmul-add-fusion",
        "conv-activation-fusion",
        "conv-affine-fusion",
        "gemm-activation-fusion",
        "eltwise-fusion",
        "common-subexpression-elimination",
        "dead-code-elimination",
    };
    // clang-format on
    for (const char *name : passes)
        p.emplace_back(name);
    return p;
}

} // namespace

const std::vector<PassInfo> &builtinPasses()
{
    static const std::vector<PassInfo> infos = [] {
        std::vector<PassInfo> out;
        for (const Entry &e : entries())
            out.push_back(e.info);
        return out;
    }();
    return infos;
}

std::unique_ptr<Pass> createPass(const std::string &name)
{
    for (const Entry &e : entries())
        if (e.info.name == name)
            return e.make();
    return nullptr;
}

const std::vector<std::string> &levelNames()
{
    static const std::vector<std::string> names{"basic", "extended", "layout", "all"};
    return names;
}

Expected<std::vector<std::string>> resolvePipeline(const PipelineSpec &spec)
{
    auto known = [](const std::string &name) { return createPass(name) != nullptr; };
    auto allNames = [] {
        std::string s;
        for (const PassInfo &p : builtinPasses())
            s += (s.empty() ? "" : ", ") + p.name;
        return s;
    };
    std::vector<std::string> list;
    if (!spec.passes.empty()) {
        for (const std::string &p : spec.passes) {
            if (!known(p))
                return Status::invalid("unknown pass '" + p + "'; passes: " + allNames());
            list.push_back(p);
        }
    } else if (spec.level == "basic") {
        list = kBasic;
    } else if (spec.level == "extended") {
        list = extendedPipeline();
    } else if (spec.level == "layout" || spec.level == "all") {
        list = extendedPipeline();
        for (const char *name : {"layout-nhwc", "redundant-node-elimination", "dead-code-elimination"})
            list.emplace_back(name);
    } else {
        return Status::invalid("unknown level '" + spec.level + "'; levels: basic, extended, layout, all");
    }
    for (const std::string &d : spec.disabled) {
        if (!known(d))
            return Status::invalid("unknown pass '" + d + "' in --disable; passes: " + allNames());
        std::erase(list, d);
    }
    if (spec.target == "onnx")
        list.emplace_back("lower-to-onnx");
    else if (spec.target == "ort")
        list.emplace_back("lower-to-ort");
    else if (spec.target != "none")
        return Status::invalid("unknown target '" + spec.target + "'; targets: onnx, ort");
    return list;
}

} // namespace opscope::passes
