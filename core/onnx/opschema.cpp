#include "onnx/opschema.h"

#include "onnx/externaldata.h"
#include "onnx/protoconvert.h"
#include "runtime/kernel.h"

#include <map>
#include <mutex>
#include <onnx/defs/data_type_utils.h>
#include <onnx/defs/schema.h>
#include <set>
#include <tuple>

namespace opscope {

const OpAttributeInfo *OpSchemaInfo::attribute(const std::string &name) const
{
    for (const OpAttributeInfo &a : attributes)
        if (a.name == name)
            return &a;
    return nullptr;
}

namespace {

std::string canonicalDomain(const std::string &domain)
{
    return domain == "ai.onnx" ? std::string() : domain;
}

std::optional<Attribute> defaultFromProto(const onnx::AttributeProto &proto)
{
    if (proto.type() == onnx::AttributeProto::UNDEFINED)
        return std::nullopt;
    Attribute a;
    a.name = proto.name();
    a.type = static_cast<AttributeType>(proto.type());
    a.f = proto.f();
    a.i = proto.i();
    a.s = proto.s();
    a.floats.assign(proto.floats().begin(), proto.floats().end());
    a.ints.assign(proto.ints().begin(), proto.ints().end());
    a.strings.assign(proto.strings().begin(), proto.strings().end());
    if (proto.has_t()) {
        onnx::TensorProto copy = proto.t();
        ExternalFiles none{{}};
        Expected<Tensor> t = tensorFromProto(copy, none, "default of '" + proto.name() + "'");
        if (t)
            a.t = std::move(*t);
    }
    return a;
}

OpArgumentInfo argument(const onnx::OpSchema::FormalParameter &p)
{
    OpArgumentInfo a;
    a.name = p.GetName();
    a.description = p.GetDescription();
    a.typeConstraint = p.GetTypeStr();
    a.optional = p.GetOption() == onnx::OpSchema::Optional;
    a.variadic = p.GetOption() == onnx::OpSchema::Variadic;
    return a;
}

} // namespace

std::optional<OpSchemaInfo> findOpSchema(const std::string &opType, const std::string &domain,
                                         int opsetVersion)
{
    const onnx::OpSchema *s = onnx::OpSchemaRegistry::Schema(opType, opsetVersion, canonicalDomain(domain));
    if (!s)
        return std::nullopt;
    OpSchemaInfo info;
    info.opType = s->Name();
    info.domain = s->domain();
    info.sinceVersion = s->SinceVersion();
    info.deprecated = s->Deprecated();
    info.doc = s->doc() ? s->doc() : "";
    for (const auto &[name, attr] : s->attributes()) {
        OpAttributeInfo a;
        a.name = name;
        a.description = attr.description;
        a.type = static_cast<AttributeType>(attr.type);
        a.required = attr.required;
        a.defaultValue = defaultFromProto(attr.default_value);
        info.attributes.push_back(std::move(a));
    }
    for (const auto &p : s->inputs())
        info.inputs.push_back(argument(p));
    for (const auto &p : s->outputs())
        info.outputs.push_back(argument(p));
    return info;
}

bool isKnownDomain(const std::string &domain)
{
    const auto &map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    return map.count(canonicalDomain(domain)) > 0;
}

namespace {

void collectOps(const Graph &g, std::map<std::pair<std::string, std::string>, std::string> &firstUse)
{
    for (NodeId id : g.nodeIds()) {
        const Node &n = g.node(id);
        firstUse.emplace(std::make_pair(canonicalDomain(n.domain), n.opType), n.name);
        for (const Attribute &a : n.attributes) {
            if (a.g)
                collectOps(*a.g, firstUse);
            for (const ClonePtr<Graph> &sub : a.graphs)
                if (sub)
                    collectOps(*sub, firstUse);
        }
    }
}

} // namespace

std::vector<std::string> unknownOperatorWarnings(const Model &model)
{
    std::map<std::pair<std::string, std::string>, std::string> firstUse;
    collectOps(model.graph, firstUse);
    std::set<std::pair<std::string, std::string>> local;
    for (const Function &f : model.functions)
        local.emplace(canonicalDomain(f.domain), f.name);

    std::vector<std::string> warnings;
    for (const auto &[key, nodeName] : firstUse) {
        const auto &[domain, op] = key;
        if (local.count(key))
            continue;
        const std::string shown = domain.empty() ? op : domain + "::" + op;
        if (!isKnownDomain(domain)) {
            // ONNX Runtime's contrib ops and opscope's own that the CPU runtime implements run fine.
            if (KernelRegistry::cpu().find(domain, op,
                                           int(std::max<std::int64_t>(1, model.opsetVersion(domain)))))
                continue;
            warnings.push_back("operator '" + shown + "' (first used by node '" + nodeName +
                               "') is from domain '" + domain +
                               "', which opscope does not know: the model can be viewed but not run");
            continue;
        }
        const std::int64_t version = model.opsetVersion(domain);
        if (version < 0) {
            warnings.push_back("operator '" + shown + "' (node '" + nodeName +
                               "'): the model does not import domain '" +
                               (domain.empty() ? std::string("ai.onnx") : domain) + "'");
        } else if (!onnx::OpSchemaRegistry::Schema(op, static_cast<int>(version), domain)) {
            // An op newer than this libonnx (Gelu-20; libonnx 1.12 stops at opset 17) that the
            // runtime implements runs: "can be viewed but not run" was false for it.
            if (KernelRegistry::cpu().find(domain, op, int(version)))
                continue;
            warnings.push_back("operator '" + shown + "' (node '" + nodeName + "') does not exist at opset " +
                               std::to_string(version) + ": the model can be viewed but not run");
        }
    }
    return warnings;
}

} // namespace opscope

namespace opscope {

const std::vector<Attribute> &attributeDefaults(const std::string &opType, const std::string &domain,
                                                int opsetVersion)
{
    static std::mutex mutex;
    static std::map<std::tuple<std::string, std::string, int>, std::vector<Attribute>> cache;
    std::lock_guard lock(mutex);
    const auto key = std::make_tuple(opType, canonicalDomain(domain), opsetVersion);
    const auto it = cache.find(key);
    if (it != cache.end())
        return it->second;
    std::vector<Attribute> defaults;
    if (const onnx::OpSchema *s =
            onnx::OpSchemaRegistry::Schema(opType, opsetVersion, canonicalDomain(domain)))
        for (const auto &[name, attr] : s->attributes())
            if (std::optional<Attribute> d = defaultFromProto(attr.default_value)) {
                d->name = name;
                defaults.push_back(std::move(*d));
            }
    return cache.emplace(key, std::move(defaults)).first->second;
}

} // namespace opscope

namespace opscope {

namespace {

// "tensor(float)" → bit of DataType::Float; sequences, optionals and maps have no tensor bit.
std::uint32_t tensorTypeBits(const onnx::DataTypeSet &types, bool &onlyTensors)
{
    std::uint32_t bits = 0;
    for (const onnx::DataType &t : types) {
        try {
            const onnx::TypeProto &proto = onnx::Utils::DataTypeUtils::ToTypeProto(t);
            if (proto.value_case() != onnx::TypeProto::kTensorType) {
                onlyTensors = false;
                continue;
            }
            const int elem = proto.tensor_type().elem_type();
            if (elem > 0 && elem < 32)
                bits |= 1u << elem;
        } catch (const std::exception &) {
            onlyTensors = false; // a type string this libonnx cannot parse: do not constrain
        }
    }
    return bits;
}

std::uint32_t bit(DataType t)
{
    return 1u << static_cast<int>(t);
}

} // namespace

const InputTypeRules &inputTypeRules(const std::string &opType, const std::string &domain, int opsetVersion)
{
    static std::mutex mutex;
    static std::map<std::tuple<std::string, std::string, int>, InputTypeRules> cache;
    std::lock_guard lock(mutex);
    const auto key = std::make_tuple(opType, canonicalDomain(domain), opsetVersion);
    const auto it = cache.find(key);
    if (it != cache.end())
        return it->second;
    InputTypeRules rules;
    if (const onnx::OpSchema *s =
            onnx::OpSchemaRegistry::Schema(opType, opsetVersion, canonicalDomain(domain))) {
        const auto &versions = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
        const auto range = versions.find(canonicalDomain(domain));
        const bool newerThanLibonnx = range != versions.end() && opsetVersion > range->second.second;
        const std::uint32_t newerTypes = bit(DataType::Float16) | bit(DataType::BFloat16) |
                                         bit(DataType::Float8E4M3FN) | bit(DataType::Float8E4M3FNUZ) |
                                         bit(DataType::Float8E5M2) | bit(DataType::Float8E5M2FNUZ) |
                                         bit(DataType::String);
        const auto &constraints = s->typeConstraintParams();
        for (const auto &p : s->inputs()) {
            InputTypeRule r;
            bool onlyTensors = true;
            const std::uint32_t bits = tensorTypeBits(p.GetTypes(), onlyTensors);
            if (onlyTensors && bits)
                r.allowed = newerThanLibonnx ? bits | newerTypes : bits;
            for (std::size_t c = 0; c < constraints.size(); ++c)
                if (constraints[c].type_param_str == p.GetTypeStr()) {
                    r.typeVariable = static_cast<int>(c);
                    r.variableName = p.GetTypeStr();
                }
            rules.inputs.push_back(std::move(r));
        }
        if (!s->inputs().empty() && s->inputs().back().GetOption() == onnx::OpSchema::Variadic) {
            rules.lastIsVariadic = true;
            rules.variadicHomogeneous = s->inputs().back().GetIsHomogeneous();
        }
    }
    return cache.emplace(key, std::move(rules)).first->second;
}

} // namespace opscope

