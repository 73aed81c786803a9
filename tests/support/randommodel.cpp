#include "randommodel.h"

#include "passtest.h"

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace opscope::test {

namespace {

constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr int kInt = onnx::TensorProto::INT64;
constexpr int kBool = onnx::TensorProto::BOOL;

struct Kind
{
    int elem = kFloat;
    std::vector<std::int64_t> dims;
    bool operator==(const Kind &) const = default;
};

struct Val
{
    std::string name;
    Kind kind;
};

// One graph being built: the main graph or a body, with what it defines and where it sits.
struct Scope
{
    onnx::GraphProto *graph = nullptr;
    Scope *parent = nullptr;
    int depth = 0;
    std::vector<Val> vals;              // defined here: inputs, initializers, node outputs
    std::vector<onnx::NodeProto> plain; // simple nodes emitted here, for duplicates (CSE)
};

onnx::ValueInfoProto valueInfo(const std::string &name, const Kind &kind)
{
    onnx::ValueInfoProto vi;
    vi.set_name(name);
    auto *t = vi.mutable_type()->mutable_tensor_type();
    t->set_elem_type(kind.elem);
    auto *shape = t->mutable_shape();
    for (std::int64_t d : kind.dims)
        shape->add_dim()->set_dim_value(d);
    return vi;
}

class Generator
{
public:
    Generator(std::uint64_t seed, const RandomModelOptions &options) : m_rng(seed), m_options(options) {}

    onnx::ModelProto build()
    {
        m_a = uniform(1, 4);
        m_b = uniform(1, 4);
        onnx::ModelProto model;
        model.set_ir_version(8);
        model.set_producer_name("opscope-passfuzz");
        auto *opset = model.add_opset_import();
        opset->set_domain("");
        opset->set_version(17);
        onnx::GraphProto *g = model.mutable_graph();
        g->set_name("fuzz");
        Scope top;
        top.graph = g;
        addInput(top, "x", {kFloat, ab()});
        addInput(top, "xi", {kInt, ab()});
        *g->add_input() = valueInfo("flag", {kBool, {}});
        for (int i = uniform(1, 3); i > 0; --i)
            constant(top, randomKind(), /*node=*/false);
        const int ops = uniform(m_options.opsPerGraph / 2 + 1, m_options.opsPerGraph + 2);
        for (int i = 0; i < ops; ++i)
            op(top);
        // Outputs: the newest values (what the last ops computed), one to three, distinct.
        std::vector<std::string> used;
        const int outputs = uniform(1, 3);
        for (std::size_t k = top.vals.size(); k-- > 0 && int(used.size()) < outputs;) {
            const Val &v = top.vals[k];
            if (v.name == "x" || v.name == "xi")
                continue;
            used.push_back(v.name);
            *g->add_output() = valueInfo(v.name, v.kind);
        }
        if (used.empty())
            *g->add_output() = valueInfo(identity(top, top.vals.front()).name, top.vals.front().kind);
        for (const auto &[name, kind] : m_extraOutputs)
            *g->add_output() = valueInfo(name, kind);
        return model;
    }

private:
    int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(m_rng); }
    bool chance(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(m_rng) < p; }
    template<typename T>
    const T &oneOf(const std::vector<T> &v)
    {
        return v[std::size_t(uniform(0, int(v.size()) - 1))];
    }
    std::string fresh(const std::string &prefix) { return prefix + std::to_string(m_counter++); }

    std::vector<std::int64_t> ab() const { return {m_a, m_b}; }
    std::vector<std::int64_t> ba() const { return {m_b, m_a}; }
    std::vector<std::int64_t> bb() const { return {m_b, m_b}; }
    std::vector<std::int64_t> b() const { return {m_b}; }

    Kind randomKind()
    {
        static const int pick[] = {0, 0, 0, 1, 2, 3, 4, 5, 5, 6};
        switch (pick[uniform(0, 9)]) {
        case 0: return {kFloat, ab()};
        case 1: return {kFloat, ba()};
        case 2: return {kFloat, bb()};
        case 3: return {kFloat, b()};
        case 4: return {kFloat, {}};
        case 5: return {kInt, ab()};
        default: return {kInt, b()};
        }
    }

    void addInput(Scope &s, const std::string &name, Kind kind)
    {
        *s.graph->add_input() = valueInfo(name, kind);
        s.vals.push_back({name, std::move(kind)});
    }

    // The scope `levelsUp` above s (clamped at the main graph).
    static Scope &ancestor(Scope &s, int levelsUp)
    {
        Scope *p = &s;
        for (; levelsUp > 0 && p->parent; --levelsUp)
            p = p->parent;
        return *p;
    }

    // A visible value (this scope or any enclosing one) matching `want`: a level chosen at random
    // among those that have one, then a value of it.
    template<typename Pred>
    std::optional<Val> pick(Scope &s, Pred want)
    {
        std::vector<Scope *> levels;
        for (Scope *p = &s; p; p = p->parent)
            for (const Val &v : p->vals)
                if (want(v)) {
                    levels.push_back(p);
                    break;
                }
        if (levels.empty())
            return std::nullopt;
        Scope *level = oneOf(levels);
        std::vector<Val> matching;
        for (const Val &v : level->vals)
            if (want(v))
                matching.push_back(v);
        // The newest values more often: chains get deep instead of wide.
        if (chance(0.5))
            return matching.back();
        return oneOf(matching);
    }

    Val ensure(Scope &s, const Kind &kind)
    {
        if (chance(0.85))
            if (std::optional<Val> v = pick(s, [&](const Val &x) { return x.kind == kind; }))
                return *v;
        return constant(s, kind, chance(0.5));
    }

    onnx::TensorProto tensor(const std::string &name, const Kind &kind,
                             const std::vector<double> *values = nullptr)
    {
        onnx::TensorProto t;
        t.set_name(name);
        t.set_data_type(kind.elem);
        std::int64_t n = 1;
        for (std::int64_t d : kind.dims) {
            t.add_dims(d);
            n *= d;
        }
        for (std::int64_t i = 0; i < n; ++i) {
            const double v = values                ? (*values)[std::size_t(i) % values->size()]
                             : kind.elem == kFloat ? std::uniform_real_distribution<double>(-1.0, 1.0)(m_rng)
                                                   : double(uniform(0, 4));
            if (kind.elem == kFloat)
                t.add_float_data(float(v));
            else if (kind.elem == kInt)
                t.add_int64_data(std::int64_t(v));
            else
                t.add_int32_data(v != 0.0 ? 1 : 0);
        }
        return t;
    }

    // A new constant of `kind`: an initializer or a Constant node, in s or (often) an enclosing graph.
    // Adding a node to an enclosing graph now is fine: the node holding s is appended after it.
    Val constant(Scope &s, const Kind &kind, bool node, const std::vector<double> *values = nullptr)
    {
        Scope &where = ancestor(s, uniform(0, s.depth));
        const std::string name = fresh(node ? "/Constant_output_" : "init");
        onnx::TensorProto t = tensor(name, kind, values);
        // Sometimes a second initializer with the same bytes (CSE merges those), somewhere else.
        if (chance(0.15) && kind.elem != kBool) {
            Scope &other = ancestor(s, uniform(0, s.depth));
            onnx::TensorProto copy = t;
            copy.set_name(fresh("dup"));
            other.vals.push_back({copy.name(), kind});
            *other.graph->add_initializer() = std::move(copy);
        }
        if (node) {
            onnx::NodeProto *n = where.graph->add_node();
            n->set_op_type("Constant");
            n->add_output(name);
            onnx::AttributeProto *a = n->add_attribute();
            a->set_name("value");
            a->set_type(onnx::AttributeProto::TENSOR);
            *a->mutable_t() = std::move(t);
        } else {
            *where.graph->add_initializer() = std::move(t);
        }
        where.vals.push_back({name, kind});
        return where.vals.back();
    }

    Val addOp(Scope &s, const std::string &opType, const std::vector<std::string> &inputs, const Kind &out,
              std::vector<onnx::AttributeProto> attrs = {}, bool remember = true)
    {
        onnx::NodeProto n;
        n.set_op_type(opType);
        for (const std::string &in : inputs)
            n.add_input(in);
        const std::string name = fresh("v");
        n.add_output(name);
        for (auto &a : attrs)
            *n.add_attribute() = std::move(a);
        *s.graph->add_node() = n;
        if (remember)
            s.plain.push_back(n);
        s.vals.push_back({name, out});
        return s.vals.back();
    }

    Val identity(Scope &s, const Val &v) { return addOp(s, "Identity", {v.name}, v.kind); }

    Val anyFloat(Scope &s)
    {
        if (std::optional<Val> v = pick(s, [](const Val &x) { return x.kind.elem == kFloat; }))
            return *v;
        return constant(s, {kFloat, ab()}, false);
    }

    Val anyInt(Scope &s)
    {
        if (std::optional<Val> v = pick(s, [](const Val &x) { return x.kind.elem == kInt; }))
            return *v;
        return constant(s, {kInt, ab()}, false);
    }

    // A second operand that broadcasts against `a` to a's shape.
    Val partner(Scope &s, const Val &a)
    {
        std::vector<Kind> kinds{a.kind, a.kind, {a.kind.elem, {}}};
        if (a.kind.dims.size() == 2 && a.kind.dims[1] == m_b)
            kinds.push_back({a.kind.elem, b()});
        return ensure(s, oneOf(kinds));
    }

    void op(Scope &s)
    {
        if (s.depth < m_options.maxDepth && chance(m_options.controlFlow)) {
            const int which = uniform(0, 3);
            return which < 2 ? ifNode(s) : which == 2 ? loopNode(s) : scanNode(s);
        }
        switch (uniform(0, 18)) {
        case 0:
        case 1: {
            const Val a = anyFloat(s);
            addOp(s, oneOf(std::vector<std::string>{"Relu", "Neg", "Tanh", "Sigmoid", "Abs", "Identity"}),
                  {a.name}, a.kind);
            return;
        }
        case 2:
        case 3:
        case 4: {
            const Val a = anyFloat(s);
            const Val p = partner(s, a);
            const bool swap = chance(0.3) && p.kind == a.kind;
            addOp(s, oneOf(std::vector<std::string>{"Add", "Sub", "Mul", "Max", "Min"}),
                  swap ? std::vector<std::string>{p.name, a.name} : std::vector<std::string>{a.name, p.name},
                  a.kind);
            return;
        }
        case 5: {
            const Val a = anyInt(s);
            if (chance(0.3))
                addOp(s, oneOf(std::vector<std::string>{"Neg", "Abs", "Identity"}), {a.name}, a.kind);
            else
                addOp(s, oneOf(std::vector<std::string>{"Add", "Sub", "Max", "Min"}),
                      {a.name, partner(s, a).name}, a.kind);
            return;
        }
        case 6:
        case 17: return matmul(s);
        case 7: return transpose(s);
        case 8: return reshape(s);
        case 9: return reduce(s);
        case 10: constant(s, randomKind(), chance(0.6)); return;
        case 11:
        case 18: return pattern(s);
        case 12: {
            const Val a = anyInt(s);
            addOp(s, "Cast", {a.name}, {kFloat, a.kind.dims}, {intAttr("to", kFloat)});
            return;
        }
        case 13:
        case 14:
            if (!s.plain.empty()) {
                onnx::NodeProto n = oneOf(s.plain); // the same node again: CSE merges it
                const Kind kind = kindOf(s, n.output(0));
                n.set_output(0, fresh("v"));
                *s.graph->add_node() = n;
                s.vals.push_back({n.output(0), kind});
                return;
            }
            [[fallthrough]];
        default: {
            // Gather of one row by a constant index (elementwise-forward moves ops behind it).
            const Val a = ensure(s, {kFloat, ab()});
            std::vector<double> index{double(uniform(0, m_a - 1))};
            const Val i = constant(s, {kInt, {}}, chance(0.5), &index);
            addOp(s, "Gather", {a.name, i.name}, {kFloat, b()}, {intAttr("axis", 0)});
            return;
        }
        }
    }

    Kind kindOf(Scope &s, const std::string &name)
    {
        for (const Val &v : s.vals)
            if (v.name == name)
                return v.kind;
        return {};
    }

    void matmul(Scope &s)
    {
        // [a,b]·[b,b] → [a,b];  [b,a]·[a,b] → [b,b];  [b,b]·[b,b] → [b,b]
        const int form = uniform(0, 2);
        const Kind left = form == 0   ? Kind{kFloat, ab()}
                          : form == 1 ? Kind{kFloat, ba()}
                                      : Kind{kFloat, bb()};
        const Kind right = form == 1 ? Kind{kFloat, ab()} : Kind{kFloat, bb()};
        const Kind out = form == 0 ? Kind{kFloat, ab()} : Kind{kFloat, bb()};
        Val a = ensure(s, left);
        if (chance(0.25)) { // a scalar scale before the product (matmul-scale-fusion)
            std::vector<double> two{2.0};
            a = addOp(s, "Mul", {a.name, constant(s, {kFloat, {}}, chance(0.5), &two).name}, a.kind);
        }
        Val w = ensure(s, right);
        if (chance(0.2) &&
            right.dims[0] == right.dims[1]) // Transpose of an operand (matmul-transpose-fusion)
            w = addOp(s, "Transpose", {w.name}, right, {intsAttr("perm", {1, 0})});
        Val y = addOp(s, "MatMul", {a.name, w.name}, out);
        if (chance(0.5)) // + bias (matmul-add-fusion)
            y = addOp(s, "Add", {y.name, ensure(s, {kFloat, b()}).name}, out);
        if (chance(0.4)) // + activation (gemm-activation-fusion)
            addOp(s, oneOf(std::vector<std::string>{"Relu", "Sigmoid", "Tanh"}), {y.name}, out);
    }

    void transpose(Scope &s)
    {
        const Val a = pick(s, [](const Val &x) {
                          return x.kind.elem == kFloat && x.kind.dims.size() == 2;
                      }).value_or(ensure(s, {kFloat, ab()}));
        const Kind out{kFloat, {a.kind.dims[1], a.kind.dims[0]}};
        const Val t = addOp(s, "Transpose", {a.name}, out, {intsAttr("perm", {1, 0})});
        if (chance(0.3)) // a cancelling pair
            addOp(s, "Transpose", {t.name}, a.kind, {intsAttr("perm", {1, 0})});
    }

    void reshape(Scope &s)
    {
        const Val a = pick(s, [this](const Val &x) {
                          return x.kind.elem == kFloat && x.kind.dims == ab();
                      }).value_or(ensure(s, {kFloat, ab()}));
        if (chance(0.4)) {
            // To the shape of another [a,b] value (Shape → int64), often itself: a no-op Reshape.
            const Val like = chance(0.5) ? a : ensure(s, {kInt, ab()});
            const Val shape = addOp(s, "Shape", {like.name}, {kInt, {2}});
            addOp(s, "Reshape", {a.name, shape.name}, a.kind);
            return;
        }
        std::vector<double> dims{double(m_b), double(m_a)};
        const Val shape = constant(s, {kInt, {2}}, chance(0.5), &dims);
        const Val r = addOp(s, "Reshape", {a.name, shape.name}, {kFloat, ba()});
        if (chance(0.3)) {
            std::vector<double> back{double(m_a), double(m_b)};
            addOp(s, "Reshape", {r.name, constant(s, {kInt, {2}}, false, &back).name}, {kFloat, ab()});
        }
    }

    void reduce(Scope &s)
    {
        const Val a = ensure(s, {kFloat, ab()});
        if (chance(0.5)) {
            std::vector<double> zero{0.0};
            addOp(s, "ReduceSum", {a.name, constant(s, {kInt, {1}}, chance(0.5), &zero).name}, {kFloat, b()},
                  {intAttr("keepdims", 0)});
        } else {
            addOp(s, "ReduceMean", {a.name}, {kFloat, b()},
                  {intsAttr("axes", {0}), intAttr("keepdims", 0)});
        }
    }

    // What the fusions and the algebra rules look for.
    void pattern(Scope &s)
    {
        const Val a = anyFloat(s);
        std::vector<double> zero{0.0}, one{1.0};
        switch (uniform(0, 5)) {
        case 0:
            addOp(s, "Mul", {a.name, addOp(s, "Sigmoid", {a.name}, a.kind).name}, a.kind);
            return;                                                // swish
        case 1: addOp(s, "Mul", {a.name, a.name}, a.kind); return; // x·x → Pow
        case 2: addOp(s, "Add", {a.name, constant(s, {kFloat, {}}, chance(0.5), &zero).name}, a.kind); return;
        case 3: addOp(s, "Mul", {a.name, constant(s, {kFloat, {}}, chance(0.5), &one).name}, a.kind); return;
        case 4: addOp(s, "Neg", {addOp(s, "Neg", {a.name}, a.kind).name}, a.kind); return;
        default: addOp(s, "Identity", {addOp(s, "Identity", {a.name}, a.kind).name}, a.kind); return;
        }
    }

    // An exact condition: the bool input, a constant (constant-propagation inlines the If), or an
    // integer comparison.
    std::string condition(Scope &s)
    {
        switch (uniform(0, 3)) {
        case 0: return "flag";
        case 1: {
            std::vector<double> v{double(uniform(0, 1))};
            return constant(s, {kBool, {}}, chance(0.5), &v).name;
        }
        case 2: return addOp(s, "Not", {"flag"}, {kBool, {}}, {}, false).name;
        default: {
            const Val i = anyInt(s);
            const Val sum = addOp(s, "ReduceSum", {i.name}, {kInt, {}}, {intAttr("keepdims", 0)});
            std::vector<double> t{double(uniform(0, 20))};
            return addOp(s, "Greater", {sum.name, constant(s, {kInt, {}}, chance(0.5), &t).name}, {kBool, {}},
                         {}, false)
                .name;
        }
        }
    }

    // A body: `inputs` declared first, some ops, then one output per kind in `outs` (bounded by
    // Tanh where `bound` says so: loop-carried floats).
    onnx::GraphProto body(Scope &parent, const std::vector<Val> &inputs, const std::vector<Kind> &outs,
                          const std::vector<bool> &bound, const std::vector<std::string> &leading = {},
                          std::vector<std::string> *outNames = nullptr)
    {
        onnx::GraphProto g;
        g.set_name(fresh("sub_graph"));
        Scope s;
        s.graph = &g;
        s.parent = &parent;
        s.depth = parent.depth + 1;
        for (const Val &in : inputs) {
            *g.add_input() = valueInfo(in.name, in.kind);
            if (in.kind.elem != kBool)
                s.vals.push_back(in);
        }
        const int ops = uniform(1, std::max(2, m_options.opsPerGraph - 2 * s.depth));
        for (int i = 0; i < ops; ++i)
            op(s);
        for (const std::string &name : leading)
            *g.add_output() = valueInfo(name, {kBool, {}});
        std::vector<std::string> used;
        for (std::size_t k = 0; k < outs.size(); ++k) {
            std::optional<Val> v;
            if (chance(0.7)) // the body's own newest value of that kind
                for (std::size_t j = s.vals.size(); j-- > 0 && !v;)
                    if (s.vals[j].kind == outs[k])
                        v = s.vals[j];
            if (!v)
                v = ensure(s, outs[k]);
            const bool local = definesLocally(s, v->name);
            const bool taken = std::find(used.begin(), used.end(), v->name) != used.end();
            const bool isInput =
                std::any_of(inputs.begin(), inputs.end(), [&](const Val &x) { return x.name == v->name; });
            if (k < bound.size() && bound[k] && v->kind.elem == kFloat)
                v = addOp(s, "Tanh", {v->name}, v->kind);
            else if (taken || isInput || (!local && chance(0.8)))
                v = identity(s, *v); // else a body output that is an enclosing graph's value, as is
            used.push_back(v->name);
            *g.add_output() = valueInfo(v->name, outs[k]);
            if (outNames)
                outNames->push_back(v->name);
        }
        return g;
    }

    static bool definesLocally(const Scope &s, const std::string &name)
    {
        return std::any_of(s.vals.begin(), s.vals.end(), [&](const Val &v) { return v.name == name; });
    }

    void ifNode(Scope &s)
    {
        const std::string cond = condition(s);
        std::vector<Kind> outs{randomKind()};
        if (chance(0.3))
            outs.push_back(randomKind());
        onnx::GraphProto thenG = body(s, {}, outs, {});
        onnx::GraphProto elseG = body(s, {}, outs, {});
        onnx::NodeProto *n = s.graph->add_node();
        n->set_op_type("If");
        n->add_input(cond);
        for (const Kind &k : outs) {
            n->add_output(fresh("if"));
            s.vals.push_back({n->output(n->output_size() - 1), k});
        }
        *n->add_attribute() = graphAttr("then_branch", std::move(thenG));
        *n->add_attribute() = graphAttr("else_branch", std::move(elseG));
    }

    void loopNode(Scope &s)
    {
        std::vector<double> trips{double(uniform(1, 3))};
        const Val m = constant(s, {kInt, {}}, chance(0.5), &trips);
        std::string cond;
        if (chance(0.5)) {
            std::vector<double> yes{1.0};
            cond = constant(s, {kBool, {}}, chance(0.5), &yes).name;
        }
        std::vector<Kind> carried{chance(0.7) ? Kind{kFloat, ab()} : Kind{kInt, ab()}};
        if (chance(0.3))
            carried.push_back({kFloat, b()});
        std::vector<Val> initial;
        for (const Kind &k : carried)
            initial.push_back(ensure(s, k));
        std::vector<Val> inputs{{fresh("iter"), {kInt, {}}}, {fresh("cond"), {kBool, {}}}};
        for (const Kind &k : carried)
            inputs.push_back({fresh("carried"), k});
        std::vector<Kind> outs = carried;
        const bool scanOut = chance(0.5);
        if (scanOut)
            outs.push_back({kFloat, b()});
        std::vector<bool> bound(carried.size(), true);
        // The body's condition output: its condition input, passed through.
        onnx::GraphProto g = body(s, inputs, outs, bound, {fresh("cond_out")});
        onnx::NodeProto *pass = g.add_node();
        pass->set_op_type("Identity");
        pass->add_input(inputs[1].name);
        pass->add_output(g.output(0).name());
        onnx::NodeProto *n = s.graph->add_node();
        n->set_op_type("Loop");
        n->add_input(m.name);
        n->add_input(cond);
        for (const Val &v : initial)
            n->add_input(v.name);
        for (const Kind &k : carried) {
            n->add_output(fresh("loop"));
            s.vals.push_back({n->output(n->output_size() - 1), k});
        }
        if (scanOut) {
            n->add_output(fresh("loop_scan"));
            if (s.depth == 0)
                m_extraOutputs.emplace_back(n->output(n->output_size() - 1),
                                            Kind{kFloat, {std::int64_t(trips[0]), m_b}});
        }
        *n->add_attribute() = graphAttr("body", std::move(g));
    }

    void scanNode(Scope &s)
    {
        const Val state = ensure(s, {kFloat, ab()});
        const Val seq = ensure(s, {kFloat, ab()}); // scanned over its first axis: rows of [b]
        std::vector<Val> inputs{{fresh("state"), {kFloat, ab()}}, {fresh("row"), {kFloat, b()}}};
        onnx::GraphProto g = body(s, inputs, {{kFloat, ab()}, {kFloat, b()}}, {true, false});
        onnx::NodeProto *n = s.graph->add_node();
        n->set_op_type("Scan");
        n->add_input(state.name);
        n->add_input(seq.name);
        n->add_output(fresh("scan_state"));
        n->add_output(fresh("scan_rows"));
        s.vals.push_back({n->output(0), {kFloat, ab()}});
        s.vals.push_back({n->output(1), {kFloat, ab()}});
        *n->add_attribute() = graphAttr("body", std::move(g));
        *n->add_attribute() = intAttr("num_scan_inputs", 1);
    }

    std::mt19937_64 m_rng;
    RandomModelOptions m_options;
    std::int64_t m_a = 2, m_b = 3;
    int m_counter = 0;
    std::vector<std::pair<std::string, Kind>> m_extraOutputs;
};

} // namespace

onnx::ModelProto randomModel(std::uint64_t seed, const RandomModelOptions &options)
{
    return Generator(seed, options).build();
}

} // namespace opscope::test
