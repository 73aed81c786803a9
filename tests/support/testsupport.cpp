#include "testsupport.h"

#include <QTest>
#include <fstream>

namespace opscope::test {

std::filesystem::path sourceDir()
{
    return OPSCOPE_SOURCE_DIR;
}

std::filesystem::path samplePath(const std::string &fileName)
{
    return sourceDir() / "resources" / "models" / fileName;
}

QString cliPath()
{
    return QStringLiteral(OPSCOPE_CLI_PATH);
}

onnx::TensorProto floatTensor(const std::string &name, const std::vector<std::int64_t> &dims,
                              const std::vector<float> &values)
{
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (std::int64_t d : dims)
        t.add_dims(d);
    t.set_raw_data(values.data(), values.size() * sizeof(float));
    return t;
}

onnx::TensorProto int64Tensor(const std::string &name, const std::vector<std::int64_t> &dims,
                              const std::vector<std::int64_t> &values)
{
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::INT64);
    for (std::int64_t d : dims)
        t.add_dims(d);
    t.set_raw_data(values.data(), values.size() * sizeof(std::int64_t));
    return t;
}

onnx::ValueInfoProto tensorInfo(const std::string &name, int elemType, const std::vector<std::int64_t> &dims)
{
    onnx::ValueInfoProto vi;
    vi.set_name(name);
    auto *tt = vi.mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elemType);
    auto *shape = tt->mutable_shape();
    for (std::int64_t d : dims)
        shape->add_dim()->set_dim_value(d);
    return vi;
}

void addBody(onnx::NodeProto &owner, const std::string &attr, const std::vector<onnx::NodeProto> &nodes,
             const std::string &output, const std::vector<std::int64_t> &dims)
{
    onnx::AttributeProto *a = owner.add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto *body = a->mutable_g();
    body->set_name(attr);
    for (const onnx::NodeProto &n : nodes)
        *body->add_node() = n;
    *body->add_output() = tensorInfo(output, onnx::TensorProto::FLOAT, dims);
}

onnx::NodeProto node(const std::string &op, const std::vector<std::string> &inputs,
                     const std::vector<std::string> &outputs, const std::string &name)
{
    onnx::NodeProto n;
    n.set_op_type(op);
    if (!name.empty())
        n.set_name(name);
    for (const std::string &i : inputs)
        n.add_input(i);
    for (const std::string &o : outputs)
        n.add_output(o);
    return n;
}

onnx::ModelProto smallModel()
{
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.set_producer_name("opscope-tests");
    auto *op = m.add_opset_import();
    op->set_domain("");
    op->set_version(13);
    auto *g = m.mutable_graph();
    g->set_name("small");
    *g->add_input() = tensorInfo("x", onnx::TensorProto::FLOAT, {2, 3});
    *g->add_initializer() = floatTensor("bias", {3}, {0.5f, -1.0f, 2.0f});
    *g->add_node() = node("Add", {"x", "bias"}, {"sum"}, "add");
    *g->add_node() = node("Relu", {"sum"}, {"y"});
    *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {2, 3});
    return m;
}

void writeBytes(const std::filesystem::path &path, const std::string &bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

onnx::ModelProto nestedCaptureModel()
{
    onnx::ModelProto m = smallModel();
    onnx::GraphProto *g = m.mutable_graph();
    g->clear_node();
    g->clear_output();
    g->clear_initializer();
    *g->add_node() = node("Relu", {"x"}, {"a"}, "relu");
    *g->add_node() = node("Tanh", {"x"}, {"b"}, "tanh");
    *g->add_node() = node("Sigmoid", {"x"}, {"d"}, "sigmoid");
    onnx::NodeProto cond = node("Constant", {}, {"c"}, "cond");
    auto *value = cond.add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    value->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
    value->mutable_t()->add_int32_data(1);
    *g->add_node() = cond;
    onnx::NodeProto inner = node("If", {"c"}, {"t1"}, "inner");
    addBody(inner, "then_branch", {node("Mul", {"t0", "d"}, {"u"})}, "u");
    addBody(inner, "else_branch", {node("Sub", {"t0", "d"}, {"w"})}, "w");
    onnx::NodeProto branch = node("If", {"c"}, {"y"}, "branch");
    addBody(branch, "then_branch", {node("Add", {"a", "b"}, {"t0"}), inner}, "t1");
    addBody(branch, "else_branch", {node("Sub", {"a", "b"}, {"e"})}, "e");
    *g->add_node() = branch;
    *g->add_output() = tensorInfo("y", onnx::TensorProto::FLOAT, {2, 3});
    return m;
}

onnx::ModelProto emptyModel()
{
    onnx::ModelProto m = smallModel();
    onnx::GraphProto *g = m.mutable_graph();
    g->clear_input();
    g->clear_initializer();
    g->clear_node();
    g->clear_output();
    return m;
}

void writeProto(const std::filesystem::path &path, const onnx::ModelProto &proto)
{
    writeBytes(path, proto.SerializeAsString());
}

ImportResult loadOrFail(const std::filesystem::path &path)
{
    Expected<ImportResult> r = loadModel(path);
    if (!r)
        QTest::qFail(("loading " + path.string() + ": " + r.status().message()).c_str(), __FILE__, __LINE__);
    return r ? std::move(*r) : ImportResult{};
}

Model modelOrFail(const onnx::ModelProto &proto)
{
    const std::string bytes = proto.SerializeAsString();
    Expected<ImportResult> r = loadModelFromBytes(std::as_bytes(std::span(bytes.data(), bytes.size())), ".");
    if (!r)
        QTest::qFail(r.status().message().c_str(), __FILE__, __LINE__);
    return r ? r->model : Model{};
}

std::unique_ptr<InferenceSession> sessionOrFail(const Model &model)
{
    Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(model);
    if (!s)
        QTest::qFail(s.status().message().c_str(), __FILE__, __LINE__);
    return s ? std::move(*s) : nullptr;
}

} // namespace opscope::test
